-- case: 016_three_group_bys_mixed
-- dialect: mssql
-- status: success
-- Group-bys from the anchor and two joined entities keep request order.
SELECT TOP (1000)
  [product].[category] AS [product.category],
  [order].[status] AS [order.status],
  [product].[brand] AS [product.brand],
  sum([order_item].[quantity]) AS [units_sold]
FROM
  [main].[order_items] AS [order_item]
  LEFT JOIN [main].[products] AS [product] ON [order_item].[product_id] = [product].[id]
  LEFT JOIN [main].[orders] AS [order] ON [order_item].[order_id] = [order].[id]
WHERE
  [order].[status] <> @p1
GROUP BY
  [product].[category], [order].[status], [product].[brand] ORDER BY CASE WHEN [product].[category] IS NULL THEN 1 ELSE 0 END ASC, [product.category] ASC, CASE WHEN [order].[status] IS NULL THEN 1 ELSE 0 END ASC, [order.status] ASC, CASE WHEN [product].[brand] IS NULL THEN 1 ELSE 0 END ASC, [product.brand] ASC
-- params: ["cancelled"]
