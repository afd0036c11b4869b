-- case: 022_fan_out_time_and_semi_join
-- dialect: mssql
-- status: success
-- Fan-out group-by with a time bucket and a semi-join filter on the same to-many path.
SELECT TOP (1000)
  DATETRUNC(quarter, [order].[ordered_at]) AS [order.ordered_at__quarter],
  [sb_fan].[sb_bk0] AS [product.brand],
  avg([order].[amount]) AS [avg_order_value]
FROM
  [main].[orders] AS [order]
  JOIN (SELECT DISTINCT [order_item].[order_id] AS [sb_j0], [product].[brand] AS [sb_bk0] FROM [main].[order_items] AS [order_item] LEFT JOIN [main].[products] AS [product] ON [order_item].[product_id] = [product].[id] WHERE [product].[category] IN (@p1, @p2)) AS [sb_fan] ON [order].[id] = [sb_fan].[sb_j0]
GROUP BY
  DATETRUNC(quarter, [order].[ordered_at]), [sb_fan].[sb_bk0] ORDER BY CASE WHEN DATETRUNC(quarter, [order].[ordered_at]) IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__quarter] ASC, CASE WHEN [sb_fan].[sb_bk0] IS NULL THEN 1 ELSE 0 END ASC, [product.brand] ASC
-- params: ["sports","home"]
