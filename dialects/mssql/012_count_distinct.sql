-- case: 012_count_distinct
-- dialect: mssql
-- status: success
-- count_distinct renders as count(DISTINCT …).
SELECT TOP (1000)
  [customer].[segment] AS [customer.segment],
  count([customer].[id]) AS [customer_count]
FROM
  [main].[customers] AS [customer]
GROUP BY
  [customer].[segment] ORDER BY CASE WHEN [customer].[segment] IS NULL THEN 1 ELSE 0 END ASC, [customer.segment] ASC
-- params: []
