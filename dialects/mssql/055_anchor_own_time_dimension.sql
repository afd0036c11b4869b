-- case: 055_anchor_own_time_dimension
-- dialect: mssql
-- status: success
-- A metric without a time dimension buckets by its anchor's only date column (store.opened_on).
SELECT TOP (1000)
  DATETRUNC(year, [store].[opened_on]) AS [store.opened_on__year],
  count([store].[id]) AS [store_count]
FROM
  [main].[stores] AS [store]
GROUP BY
  DATETRUNC(year, [store].[opened_on]) ORDER BY CASE WHEN DATETRUNC(year, [store].[opened_on]) IS NULL THEN 1 ELSE 0 END ASC, [store.opened_on__year] ASC
-- params: []
