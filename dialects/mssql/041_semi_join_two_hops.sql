-- case: 041_semi_join_two_hops
-- dialect: mssql
-- status: success
-- A semi-join two hops deep (customer → order → order_item).
SELECT TOP (1000)
  [customer].[segment] AS [customer.segment],
  count([customer].[id]) AS [customer_count]
FROM
  [main].[customers] AS [customer]
WHERE
  [customer].[id] IN (SELECT [order__s1].[customer_id] FROM [main].[orders] AS [order__s1] JOIN [main].[order_items] AS [order_item__s1] ON [order__s1].[id] = [order_item__s1].[order_id] WHERE [order_item__s1].[quantity] > @p1)
GROUP BY
  [customer].[segment] ORDER BY CASE WHEN [customer].[segment] IS NULL THEN 1 ELSE 0 END ASC, [customer.segment] ASC
-- params: [4]
