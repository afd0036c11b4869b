-- case: 036_ratio_and_simple
-- dialect: mssql
-- status: success
-- A ratio and a simple metric side by side.
WITH [sb_m0] AS (
  SELECT
    [customer].[country] AS [sb_k0],
    count([order].[id]) AS [sb_v]
  FROM
    [main].[orders] AS [order]
    LEFT JOIN [main].[customers] AS [customer] ON [order].[customer_id] = [customer].[id]
  WHERE
    [order].[status] = @p1
  GROUP BY
    [customer].[country]
), [sb_m1] AS (
  SELECT
    [customer].[country] AS [sb_k0],
    count([order].[id]) AS [sb_v]
  FROM
    [main].[orders] AS [order]
    LEFT JOIN [main].[customers] AS [customer] ON [order].[customer_id] = [customer].[id]
  GROUP BY
    [customer].[country]
)
SELECT TOP (10)
  [sb_keys].[sb_k0] AS [customer.country],
  (CAST(coalesce([sb_m0].[sb_v], 0) AS FLOAT) / nullif(coalesce([sb_m1].[sb_v], 0), 0)) AS [cancellation_rate],
  coalesce([sb_m1].[sb_v], 0) AS [order_count]
FROM
  (
    SELECT
      [sb_m0].[sb_k0]
    FROM
      [sb_m0]
    UNION
    SELECT
      [sb_m1].[sb_k0]
    FROM
      [sb_m1]
  ) AS [sb_keys]
  LEFT JOIN [sb_m0] ON ([sb_keys].[sb_k0] IS NOT DISTINCT FROM [sb_m0].[sb_k0])
  LEFT JOIN [sb_m1] ON ([sb_keys].[sb_k0] IS NOT DISTINCT FROM [sb_m1].[sb_k0]) ORDER BY CASE WHEN (CAST(coalesce([sb_m0].[sb_v], 0) AS FLOAT) / nullif(coalesce([sb_m1].[sb_v], 0), 0)) IS NULL THEN 1 ELSE 0 END ASC, [cancellation_rate] DESC, CASE WHEN [sb_keys].[sb_k0] IS NULL THEN 1 ELSE 0 END ASC, [customer.country] ASC
-- params: ["cancelled"]
