-- case: 053_filter_on_bucketed_to_many_entity
-- dialect: mssql
-- status: success
-- A time bucket on a to-many entity (orders of a store) and a filter on it restrict the same joined rows.
SELECT TOP (1000)
  [sb_rows].[sb_k0] AS [order.ordered_at__year],
  count([sb_rows].[sb_m]) AS [store_count]
FROM
  (
    SELECT DISTINCT
      [store].[id] AS [sb_id0],
      DATETRUNC(year, [order].[ordered_at]) AS [sb_k0],
      [store].[id] AS [sb_m]
    FROM
      [main].[stores] AS [store]
      LEFT JOIN [main].[orders] AS [order] ON [store].[id] = [order].[store_id]
    WHERE
      [order].[ordered_at] >= CAST(@p1 AS DATETIME2)
  ) AS [sb_rows]
GROUP BY
  [sb_rows].[sb_k0] ORDER BY CASE WHEN [sb_rows].[sb_k0] IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__year] ASC
-- params: ["2025-01-01 00:00:00"]
