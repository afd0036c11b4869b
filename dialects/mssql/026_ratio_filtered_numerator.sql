-- case: 026_ratio_filtered_numerator
-- dialect: mssql
-- status: success
-- A ratio whose numerator carries its own filter; division is floating-point and NULL on zero.
SELECT TOP (1000)
  [customer].[segment] AS [customer.segment],
  (CAST(count(CASE WHEN [order].[status] = @p1 THEN [order].[id] END) AS FLOAT) / nullif(count([order].[id]), 0)) AS [cancellation_rate]
FROM
  [main].[orders] AS [order]
  LEFT JOIN [main].[customers] AS [customer] ON [order].[customer_id] = [customer].[id]
GROUP BY
  [customer].[segment] ORDER BY CASE WHEN [customer].[segment] IS NULL THEN 1 ELSE 0 END ASC, [customer.segment] ASC
-- params: ["cancelled"]
