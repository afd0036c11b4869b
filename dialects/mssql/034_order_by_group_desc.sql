-- case: 034_order_by_group_desc
-- dialect: mssql
-- status: success
-- Ordering by a group-by column descending, ties broken by the others.
SELECT TOP (20)
  [product].[brand] AS [product.brand],
  [product].[category] AS [product.category],
  sum([order_item].[quantity]) AS [units_sold]
FROM
  [main].[order_items] AS [order_item]
  LEFT JOIN [main].[products] AS [product] ON [order_item].[product_id] = [product].[id]
GROUP BY
  [product].[brand], [product].[category] ORDER BY CASE WHEN [product].[category] IS NULL THEN 1 ELSE 0 END ASC, [product.category] DESC, CASE WHEN [product].[brand] IS NULL THEN 1 ELSE 0 END ASC, [product.brand] ASC
-- params: []
