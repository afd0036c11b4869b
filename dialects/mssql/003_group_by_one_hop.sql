-- case: 003_group_by_one_hop
-- dialect: mssql
-- status: success
-- Group by a column one many_to_one hop away (LEFT JOIN).
SELECT TOP (1000)
  [customer].[country] AS [customer.country],
  sum([order].[amount]) AS [revenue]
FROM
  [main].[orders] AS [order]
  LEFT JOIN [main].[customers] AS [customer] ON [order].[customer_id] = [customer].[id]
WHERE
  [order].[status] NOT IN (@p1)
GROUP BY
  [customer].[country] ORDER BY CASE WHEN [customer].[country] IS NULL THEN 1 ELSE 0 END ASC, [customer.country] ASC
-- params: ["cancelled"]
