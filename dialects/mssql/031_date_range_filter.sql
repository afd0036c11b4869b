-- case: 031_date_range_filter
-- dialect: mssql
-- status: success
-- A half-open date range on a TIMESTAMP column; dates are bound and cast.
SELECT TOP (1000)
  DATETRUNC(day, [order].[ordered_at]) AS [order.ordered_at__day],
  sum([order].[amount]) AS [revenue]
FROM
  [main].[orders] AS [order]
WHERE
  [order].[status] NOT IN (@p1) AND [order].[ordered_at] >= CAST(@p2 AS DATETIME2) AND [order].[ordered_at] < CAST(@p3 AS DATETIME2)
GROUP BY
  DATETRUNC(day, [order].[ordered_at]) ORDER BY CASE WHEN DATETRUNC(day, [order].[ordered_at]) IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__day] ASC
-- params: ["cancelled","2025-01-01 00:00:00","2025-02-01 00:00:00"]
