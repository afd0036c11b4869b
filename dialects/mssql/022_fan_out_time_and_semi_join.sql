-- case: 022_fan_out_time_and_semi_join
-- dialect: mssql
-- status: success
-- Fan-out group-by with a time bucket and a semi-join filter on the same to-many path.
SELECT TOP (1000)
  [sb_rows].[sb_k0] AS [order.ordered_at__quarter],
  [sb_rows].[sb_k1] AS [product.brand],
  avg([sb_rows].[sb_m]) AS [avg_order_value]
FROM
  (
    SELECT DISTINCT
      [order].[id] AS [sb_id0],
      DATETRUNC(quarter, [order].[ordered_at]) AS [sb_k0],
      [product].[brand] AS [sb_k1],
      [order].[amount] AS [sb_m]
    FROM
      [main].[orders] AS [order]
      LEFT JOIN [main].[order_items] AS [order_item] ON [order].[id] = [order_item].[order_id]
      LEFT JOIN [main].[products] AS [product] ON [order_item].[product_id] = [product].[id]
    WHERE
      [product].[category] IN (@p1, @p2)
  ) AS [sb_rows]
GROUP BY
  [sb_rows].[sb_k0], [sb_rows].[sb_k1] ORDER BY CASE WHEN [sb_rows].[sb_k0] IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__quarter] ASC, CASE WHEN [sb_rows].[sb_k1] IS NULL THEN 1 ELSE 0 END ASC, [product.brand] ASC
-- params: ["sports","home"]
