-- case: 006_grain_week_and_group
-- dialect: mssql
-- status: success
-- ISO week buckets plus a group-by; time first in output and order.
SELECT TOP (1000)
  DATETRUNC(iso_week, [order].[ordered_at]) AS [order.ordered_at__week],
  [order].[status] AS [order.status],
  count([order].[id]) AS [order_count]
FROM
  [main].[orders] AS [order]
GROUP BY
  DATETRUNC(iso_week, [order].[ordered_at]), [order].[status] ORDER BY CASE WHEN DATETRUNC(iso_week, [order].[ordered_at]) IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__week] ASC, CASE WHEN [order].[status] IS NULL THEN 1 ELSE 0 END ASC, [order.status] ASC
-- params: []
