-- case: 058_date_part_group_by
-- dialect: mssql
-- status: success
-- Date parts of the time dimension as group-bys (ISO day of the week, quarter), each engine's own expression of them, beside a month grain.
SELECT TOP (1000)
  DATETRUNC(month, [order].[ordered_at]) AS [order.ordered_at__month],
  DATEDIFF(day, '19000101', [order].[ordered_at]) % 7 + 1 AS [order.ordered_at__extract_dow],
  DATEPART(quarter, [order].[ordered_at]) AS [order.ordered_at__extract_quarter],
  sum([order].[amount]) AS [revenue]
FROM
  [main].[orders] AS [order]
WHERE
  [order].[status] NOT IN (@p1)
GROUP BY
  DATETRUNC(month, [order].[ordered_at]), DATEDIFF(day, '19000101', [order].[ordered_at]) % 7 + 1, DATEPART(quarter, [order].[ordered_at]) ORDER BY CASE WHEN DATETRUNC(month, [order].[ordered_at]) IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__month] ASC, CASE WHEN DATEDIFF(day, '19000101', [order].[ordered_at]) % 7 + 1 IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__extract_dow] ASC, CASE WHEN DATEPART(quarter, [order].[ordered_at]) IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__extract_quarter] ASC
-- params: ["cancelled"]
