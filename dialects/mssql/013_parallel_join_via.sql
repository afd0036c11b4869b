-- case: 013_parallel_join_via
-- dialect: mssql
-- status: success
-- Two parallel joins order→address; via picks the shipping one.
SELECT TOP (1000)
  [address].[city] AS [address.city],
  sum([order].[amount]) AS [revenue]
FROM
  [main].[orders] AS [order]
  LEFT JOIN [main].[addresses] AS [address] ON [order].[shipping_address_id] = [address].[id]
WHERE
  [order].[status] NOT IN (@p1)
GROUP BY
  [address].[city] ORDER BY CASE WHEN [address].[city] IS NULL THEN 1 ELSE 0 END ASC, [address.city] ASC
-- params: ["cancelled"]
