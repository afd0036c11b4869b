-- case: 005_grain_month
-- dialect: mssql
-- status: success
-- Month buckets on the metric time dimension (a TIMESTAMP).
SELECT TOP (1000)
  DATETRUNC(month, [order].[ordered_at]) AS [order.ordered_at__month],
  sum([order].[amount]) AS [revenue]
FROM
  [main].[orders] AS [order]
WHERE
  [order].[status] NOT IN (@p1)
GROUP BY
  DATETRUNC(month, [order].[ordered_at]) ORDER BY CASE WHEN DATETRUNC(month, [order].[ordered_at]) IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__month] ASC
-- params: ["cancelled"]
