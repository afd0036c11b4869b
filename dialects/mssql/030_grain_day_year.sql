-- case: 030_grain_day_year
-- dialect: mssql
-- status: success
-- Day buckets, then year buckets with a status group.
SELECT TOP (1000)
  DATETRUNC(year, [order].[ordered_at]) AS [order.ordered_at__year],
  [order].[status] AS [order.status],
  sum([order].[amount]) AS [revenue]
FROM
  [main].[orders] AS [order]
WHERE
  [order].[status] NOT IN (@p1)
GROUP BY
  DATETRUNC(year, [order].[ordered_at]), [order].[status] ORDER BY CASE WHEN DATETRUNC(year, [order].[ordered_at]) IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__year] ASC, CASE WHEN [order].[status] IS NULL THEN 1 ELSE 0 END ASC, [order.status] ASC
-- params: ["cancelled"]
