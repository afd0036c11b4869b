-- case: 048_conversion_rate
-- dialect: mssql
-- status: success
-- Signup-to-order conversion within 30 days, by signup quarter and segment.
WITH [sb_m0] AS (
  SELECT
    DATETRUNC(quarter, [customer].[signup_date]) AS [sb_k0],
    [customer].[segment] AS [sb_k1],
    count([customer].[id]) AS [sb_v]
  FROM
    [main].[customers] AS [customer]
  WHERE
    EXISTS (SELECT 1 FROM [main].[orders] AS [sb_conv] WHERE [sb_conv].[customer_id] = [customer].[id] AND [sb_conv].[ordered_at] >= [customer].[signup_date] AND [sb_conv].[ordered_at] <= DATEADD(day, 30, [customer].[signup_date]))
  GROUP BY
    DATETRUNC(quarter, [customer].[signup_date]), [customer].[segment]
), [sb_m1] AS (
  SELECT
    DATETRUNC(quarter, [customer].[signup_date]) AS [sb_k0],
    [customer].[segment] AS [sb_k1],
    count([customer].[id]) AS [sb_v]
  FROM
    [main].[customers] AS [customer]
  GROUP BY
    DATETRUNC(quarter, [customer].[signup_date]), [customer].[segment]
)
SELECT TOP (1000)
  [sb_keys].[sb_k0] AS [customer.signup_date__quarter],
  [sb_keys].[sb_k1] AS [customer.segment],
  (CAST(coalesce([sb_m0].[sb_v], 0) AS FLOAT) / nullif(coalesce([sb_m1].[sb_v], 0), 0)) AS [signup_order_conversion]
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
  LEFT JOIN [sb_m1] ON ([sb_keys].[sb_k0] IS NOT DISTINCT FROM [sb_m1].[sb_k0]) AND ([sb_keys].[sb_k1] IS NOT DISTINCT FROM [sb_m1].[sb_k1]) ORDER BY CASE WHEN [sb_keys].[sb_k0] IS NULL THEN 1 ELSE 0 END ASC, [customer.signup_date__quarter] ASC, CASE WHEN [sb_keys].[sb_k1] IS NULL THEN 1 ELSE 0 END ASC, [customer.segment] ASC
-- params: []
