-- case: 053_filter_on_bucketed_to_many_entity
-- dialect: mssql
-- status: success
-- A time bucket on a to-many entity (orders of a store) and a filter on it restrict the same joined rows.
SELECT TOP (1000)
  DATETRUNC(year, [order].[ordered_at]) AS [order.ordered_at__year],
  count(DISTINCT [store].[id]) AS [store_count]
FROM
  [main].[stores] AS [store]
  LEFT JOIN [main].[orders] AS [order] ON [store].[id] = [order].[store_id]
WHERE
  [order].[ordered_at] >= CAST(@p1 AS DATETIME2)
GROUP BY
  DATETRUNC(year, [order].[ordered_at]) ORDER BY CASE WHEN DATETRUNC(year, [order].[ordered_at]) IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__year] ASC
-- params: ["2025-01-01 00:00:00"]
