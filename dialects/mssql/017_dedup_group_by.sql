-- case: 017_dedup_group_by
-- dialect: mssql
-- status: success
-- A repeated group-by column is emitted once.
SELECT TOP (1000)
  [order].[status] AS [order.status],
  count([order].[id]) AS [order_count]
FROM
  [main].[orders] AS [order]
GROUP BY
  [order].[status] ORDER BY CASE WHEN [order].[status] IS NULL THEN 1 ELSE 0 END ASC, [order.status] ASC
-- params: []
