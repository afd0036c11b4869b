-- case: 054_ratio_of_counts_zero_in_empty_groups
-- dialect: mssql
-- status: success
-- A ratio of counts is 0.0 (COALESCE of the count to 0) in groups where the numerator has no row.
SELECT TOP (1000)
  DATETRUNC(month, [order].[ordered_at]) AS [order.ordered_at__month],
  [store].[name] AS [store.name],
  (CAST(count(CASE WHEN [order].[status] = @p1 THEN [order].[id] END) AS FLOAT) / nullif(count([order].[id]), 0)) AS [cancellation_rate]
FROM
  [main].[orders] AS [order]
  LEFT JOIN [main].[stores] AS [store] ON [order].[store_id] = [store].[id]
GROUP BY
  DATETRUNC(month, [order].[ordered_at]), [store].[name] ORDER BY CASE WHEN DATETRUNC(month, [order].[ordered_at]) IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__month] ASC, CASE WHEN [store].[name] IS NULL THEN 1 ELSE 0 END ASC, [store.name] ASC
-- params: ["cancelled"]
