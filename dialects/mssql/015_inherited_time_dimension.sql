-- case: 015_inherited_time_dimension
-- dialect: mssql
-- status: success
-- An order_item metric bucketed by the order time dimension named by the caller.
SELECT TOP (1000)
  DATETRUNC(month, [order].[ordered_at]) AS [order.ordered_at__month],
  sum([order_item].[quantity]) AS [units_sold]
FROM
  [main].[order_items] AS [order_item]
  LEFT JOIN [main].[orders] AS [order] ON [order_item].[order_id] = [order].[id]
GROUP BY
  DATETRUNC(month, [order].[ordered_at]) ORDER BY CASE WHEN DATETRUNC(month, [order].[ordered_at]) IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__month] ASC
-- params: []
