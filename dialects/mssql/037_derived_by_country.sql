-- case: 037_derived_by_country
-- dialect: mssql
-- status: success
-- A derived metric grouped by a joined column.
SELECT TOP (1000)
  [customer].[country] AS [customer.country],
  (CAST(sum(CASE WHEN [order].[status] NOT IN (@p1) THEN [order].[amount] END) AS FLOAT) / nullif(count(CASE WHEN [order].[status] <> @p2 THEN [order].[id] END), 0)) AS [revenue_per_order]
FROM
  [main].[orders] AS [order]
  LEFT JOIN [main].[customers] AS [customer] ON [order].[customer_id] = [customer].[id]
WHERE
  (([order].[status] NOT IN (@p3)) OR ([order].[status] <> @p4))
GROUP BY
  [customer].[country] ORDER BY CASE WHEN [customer].[country] IS NULL THEN 1 ELSE 0 END ASC, [customer.country] ASC
-- params: ["cancelled","cancelled","cancelled","cancelled"]
