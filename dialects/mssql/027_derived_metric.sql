-- case: 027_derived_metric
-- dialect: mssql
-- status: success
-- A derived metric over two inputs, one filtered.
SELECT TOP (1000)
  DATETRUNC(month, [order].[ordered_at]) AS [order.ordered_at__month],
  (CAST(sum(CASE WHEN [order].[status] NOT IN (@p1) THEN [order].[amount] END) AS FLOAT) / nullif(count(CASE WHEN [order].[status] <> @p2 THEN [order].[id] END), 0)) AS [revenue_per_order]
FROM
  [main].[orders] AS [order]
WHERE
  (([order].[status] NOT IN (@p3)) OR ([order].[status] <> @p4))
GROUP BY
  DATETRUNC(month, [order].[ordered_at]) ORDER BY CASE WHEN DATETRUNC(month, [order].[ordered_at]) IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__month] ASC
-- params: ["cancelled","cancelled","cancelled","cancelled"]
