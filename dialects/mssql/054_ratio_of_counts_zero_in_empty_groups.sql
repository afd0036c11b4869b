-- case: 054_ratio_of_counts_zero_in_empty_groups
-- dialect: mssql
-- status: success
-- A ratio of counts is 0.0 (COALESCE of the count to 0) in groups where the numerator has no row.
WITH [sb_m0] AS (
  SELECT
    DATETRUNC(month, [order].[ordered_at]) AS [sb_k0],
    [store].[name] AS [sb_k1],
    count([order].[id]) AS [sb_v]
  FROM
    [main].[orders] AS [order]
    LEFT JOIN [main].[stores] AS [store] ON [order].[store_id] = [store].[id]
  WHERE
    [order].[status] = @p1
  GROUP BY
    DATETRUNC(month, [order].[ordered_at]), [store].[name]
), [sb_m1] AS (
  SELECT
    DATETRUNC(month, [order].[ordered_at]) AS [sb_k0],
    [store].[name] AS [sb_k1],
    count([order].[id]) AS [sb_v]
  FROM
    [main].[orders] AS [order]
    LEFT JOIN [main].[stores] AS [store] ON [order].[store_id] = [store].[id]
  GROUP BY
    DATETRUNC(month, [order].[ordered_at]), [store].[name]
)
SELECT TOP (1000)
  [sb_keys].[sb_k0] AS [order.ordered_at__month],
  [sb_keys].[sb_k1] AS [store.name],
  (CAST(coalesce([sb_m0].[sb_v], 0) AS FLOAT) / nullif(coalesce([sb_m1].[sb_v], 0), 0)) AS [cancellation_rate]
FROM
  (
    SELECT
      [sb_m0].[sb_k0],
      [sb_m0].[sb_k1]
    FROM
      [sb_m0]
    UNION
    SELECT
      [sb_m1].[sb_k0],
      [sb_m1].[sb_k1]
    FROM
      [sb_m1]
  ) AS [sb_keys]
  LEFT JOIN [sb_m0] ON ([sb_keys].[sb_k0] IS NOT DISTINCT FROM [sb_m0].[sb_k0]) AND ([sb_keys].[sb_k1] IS NOT DISTINCT FROM [sb_m0].[sb_k1])
  LEFT JOIN [sb_m1] ON ([sb_keys].[sb_k0] IS NOT DISTINCT FROM [sb_m1].[sb_k0]) AND ([sb_keys].[sb_k1] IS NOT DISTINCT FROM [sb_m1].[sb_k1]) ORDER BY CASE WHEN [sb_keys].[sb_k0] IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__month] ASC, CASE WHEN [sb_keys].[sb_k1] IS NULL THEN 1 ELSE 0 END ASC, [store.name] ASC
-- params: ["cancelled"]
