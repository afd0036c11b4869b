-- case: 010_order_by_metric_desc_limit
-- dialect: mssql
-- status: success
-- Explicit order with a tie-break on the group-by and a limit.
SELECT TOP (10)
  [customer].[country] AS [customer.country],
  sum([order].[amount]) AS [revenue]
FROM
  [main].[orders] AS [order]
  LEFT JOIN [main].[customers] AS [customer] ON [order].[customer_id] = [customer].[id]
WHERE
  [order].[status] NOT IN (@p1)
GROUP BY
  [customer].[country] ORDER BY CASE WHEN sum([order].[amount]) IS NULL THEN 1 ELSE 0 END ASC, [revenue] DESC, CASE WHEN [customer].[country] IS NULL THEN 1 ELSE 0 END ASC, [customer.country] ASC
-- params: ["cancelled"]
