-- case: 018_order_by_time_desc
-- dialect: mssql
-- status: success
-- Ordering the time bucket descending.
SELECT TOP (4)
  DATETRUNC(quarter, [order].[ordered_at]) AS [order.ordered_at__quarter],
  sum([order].[amount]) AS [revenue]
FROM
  [main].[orders] AS [order]
WHERE
  [order].[status] NOT IN (@p1)
GROUP BY
  DATETRUNC(quarter, [order].[ordered_at]) ORDER BY CASE WHEN DATETRUNC(quarter, [order].[ordered_at]) IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__quarter] DESC
-- params: ["cancelled"]
