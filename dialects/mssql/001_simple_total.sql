-- case: 001_simple_total
-- dialect: mssql
-- status: success
-- One metric, no grouping, no joins.
SELECT TOP (1000)
  count([order].[id]) AS [order_count]
FROM
  [main].[orders] AS [order]
-- params: []
