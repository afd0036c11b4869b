-- case: 002_group_by_anchor_column
-- dialect: mssql
-- status: success
-- Group by a column of the anchor; no join.
SELECT TOP (1000)
  [order].[status] AS [order.status],
  sum([order].[amount]) AS [revenue]
FROM
  [main].[orders] AS [order]
WHERE
  [order].[status] NOT IN (@p1)
GROUP BY
  [order].[status] ORDER BY CASE WHEN [order].[status] IS NULL THEN 1 ELSE 0 END ASC, [order.status] ASC
-- params: ["cancelled"]
