-- case: 033_not_in_and_lte
-- dialect: mssql
-- status: success
-- not_in with several values and lte.
SELECT TOP (1000)
  [customer].[segment] AS [customer.segment],
  count([order].[id]) AS [order_count]
FROM
  [main].[orders] AS [order]
  LEFT JOIN [main].[customers] AS [customer] ON [order].[customer_id] = [customer].[id]
WHERE
  [order].[status] NOT IN (@p1, @p2) AND [order].[discount] <= @p3
GROUP BY
  [customer].[segment] ORDER BY CASE WHEN [customer].[segment] IS NULL THEN 1 ELSE 0 END ASC, [customer.segment] ASC
-- params: ["cancelled","returned",5.0]
