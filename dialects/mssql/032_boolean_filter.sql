-- case: 032_boolean_filter
-- dialect: mssql
-- status: success
-- A boolean filter value.
SELECT TOP (1000)
  [store].[name] AS [store.name],
  sum([order].[amount]) AS [revenue]
FROM
  [main].[orders] AS [order]
  LEFT JOIN [main].[stores] AS [store] ON [order].[store_id] = [store].[id]
WHERE
  [order].[status] NOT IN (@p1) AND [order].[is_gift] = @p2
GROUP BY
  [store].[name] ORDER BY CASE WHEN [store].[name] IS NULL THEN 1 ELSE 0 END ASC, [store.name] ASC
-- params: ["cancelled",true]
