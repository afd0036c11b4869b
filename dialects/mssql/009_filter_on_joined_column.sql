-- case: 009_filter_on_joined_column
-- dialect: mssql
-- status: success
-- A filter on a joined column adds the join once, shared with the group-by.
SELECT TOP (1000)
  [customer].[segment] AS [customer.segment],
  sum([order].[amount]) AS [revenue]
FROM
  [main].[orders] AS [order]
  LEFT JOIN [main].[customers] AS [customer] ON [order].[customer_id] = [customer].[id]
WHERE
  [order].[status] NOT IN (@p1) AND [customer].[country] = @p2
GROUP BY
  [customer].[segment] ORDER BY CASE WHEN [customer].[segment] IS NULL THEN 1 ELSE 0 END ASC, [customer.segment] ASC
-- params: ["cancelled","DE"]
