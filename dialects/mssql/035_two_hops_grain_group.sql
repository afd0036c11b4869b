-- case: 035_two_hops_grain_group
-- dialect: mssql
-- status: success
-- Two many_to_one hops, a grain and a group-by together.
SELECT TOP (1000)
  DATETRUNC(quarter, [order].[ordered_at]) AS [order.ordered_at__quarter],
  [region].[name] AS [region.name],
  [customer].[segment] AS [customer.segment],
  sum([order].[amount]) AS [revenue]
FROM
  [main].[orders] AS [order]
  LEFT JOIN [main].[customers] AS [customer] ON [order].[customer_id] = [customer].[id]
  LEFT JOIN [main].[regions] AS [region] ON [customer].[region_id] = [region].[id]
WHERE
  [order].[status] NOT IN (@p1)
GROUP BY
  DATETRUNC(quarter, [order].[ordered_at]), [region].[name], [customer].[segment] ORDER BY CASE WHEN DATETRUNC(quarter, [order].[ordered_at]) IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__quarter] ASC, CASE WHEN [region].[name] IS NULL THEN 1 ELSE 0 END ASC, [region.name] ASC, CASE WHEN [customer].[segment] IS NULL THEN 1 ELSE 0 END ASC, [customer.segment] ASC
-- params: ["cancelled"]
