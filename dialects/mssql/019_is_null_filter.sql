-- case: 019_is_null_filter
-- dialect: mssql
-- status: success
-- is_null takes no parameter.
SELECT TOP (1000)
  count([order].[id]) AS [order_count]
FROM
  [main].[orders] AS [order]
WHERE
  [order].[store_id] IS NULL
-- params: []
