-- case: 036_ratio_and_simple
-- dialect: mssql
-- status: success
-- A ratio and a simple metric side by side.
SELECT TOP (10)
  [customer].[country] AS [customer.country],
  (CAST(count(CASE WHEN [order].[status] = @p1 THEN [order].[id] END) AS FLOAT) / nullif(count([order].[id]), 0)) AS [cancellation_rate],
  count([order].[id]) AS [order_count]
FROM
  [main].[orders] AS [order]
  LEFT JOIN [main].[customers] AS [customer] ON [order].[customer_id] = [customer].[id]
GROUP BY
  [customer].[country] ORDER BY CASE WHEN (CAST(count(CASE WHEN [order].[status] = @p1 THEN [order].[id] END) AS FLOAT) / nullif(count([order].[id]), 0)) IS NULL THEN 1 ELSE 0 END ASC, [cancellation_rate] DESC, CASE WHEN [customer].[country] IS NULL THEN 1 ELSE 0 END ASC, [customer.country] ASC
-- params: ["cancelled"]
