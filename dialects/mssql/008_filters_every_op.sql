-- case: 008_filters_every_op
-- dialect: mssql
-- status: success
-- Filters with comparison, list and null ops bind parameters in order.
SELECT TOP (1000)
  count([order].[id]) AS [order_count]
FROM
  [main].[orders] AS [order]
WHERE
  [order].[amount] >= @p1 AND [order].[status] IN (@p2, @p3) AND [order].[store_id] IS NOT NULL AND [order].[ordered_at] < CAST(@p4 AS DATETIME2)
-- params: [100.0,"shipped","delivered","2025-01-01 00:00:00"]
