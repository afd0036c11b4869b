-- case: 004_group_by_two_hops_via
-- dialect: mssql
-- status: success
-- Two hops to region, disambiguated with via.
SELECT TOP (1000)
  [region].[name] AS [region.name],
  sum([order].[amount]) AS [revenue]
FROM
  [main].[orders] AS [order]
  LEFT JOIN [main].[stores] AS [store] ON [order].[store_id] = [store].[id]
  LEFT JOIN [main].[regions] AS [region] ON [store].[region_id] = [region].[id]
WHERE
  [order].[status] NOT IN (@p1)
GROUP BY
  [region].[name] ORDER BY CASE WHEN [region].[name] IS NULL THEN 1 ELSE 0 END ASC, [region.name] ASC
-- params: ["cancelled"]
