-- case: 046_derived_offset_window
-- dialect: mssql
-- status: success
-- Month-over-month growth; the offset input's rows are moved a month later, time filters read the moved time.
WITH [sb_m0] AS (
  SELECT
    DATETRUNC(month, [order].[ordered_at]) AS [sb_k0],
    sum([order].[amount]) AS [sb_v]
  FROM
    [main].[orders] AS [order]
  WHERE
    [order].[status] NOT IN (@p1) AND [order].[ordered_at] >= CAST(@p2 AS DATETIME2)
  GROUP BY
    DATETRUNC(month, [order].[ordered_at])
), [sb_m1] AS (
  SELECT
    DATETRUNC(month, DATEADD(month, 1, [order].[ordered_at])) AS [sb_k0],
    sum([order].[amount]) AS [sb_v]
  FROM
    [main].[orders] AS [order]
  WHERE
    [order].[status] NOT IN (@p3) AND (DATEADD(month, 1, [order].[ordered_at])) >= CAST(@p4 AS DATETIME2)
  GROUP BY
    DATETRUNC(month, DATEADD(month, 1, [order].[ordered_at]))
)
SELECT TOP (1000)
  [sb_keys].[sb_k0] AS [order.ordered_at__month],
  (CAST(([sb_m0].[sb_v] - [sb_m1].[sb_v]) AS FLOAT) / nullif([sb_m1].[sb_v], 0)) AS [revenue_growth_mom]
FROM
  (
    SELECT
      [sb_m0].[sb_k0]
    FROM
      [sb_m0]
  ) AS [sb_keys]
  LEFT JOIN [sb_m0] ON ([sb_keys].[sb_k0] IS NOT DISTINCT FROM [sb_m0].[sb_k0])
  LEFT JOIN [sb_m1] ON ([sb_keys].[sb_k0] IS NOT DISTINCT FROM [sb_m1].[sb_k0]) ORDER BY CASE WHEN [sb_keys].[sb_k0] IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__month] ASC
-- params: ["cancelled","2024-01-01 00:00:00","cancelled","2024-01-01 00:00:00"]
