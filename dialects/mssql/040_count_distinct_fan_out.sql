-- case: 040_count_distinct_fan_out
-- dialect: mssql
-- status: success
-- count_distinct across a fan-out, deduplicated per customer and key.
SELECT TOP (1000)
  [order].[status] AS [order.status],
  count(DISTINCT [customer].[id]) AS [customer_count]
FROM
  [main].[customers] AS [customer]
  LEFT JOIN [main].[orders] AS [order] ON [customer].[id] = [order].[customer_id]
WHERE
  [order].[ordered_at] >= CAST(@p1 AS DATETIME2)
GROUP BY
  [order].[status] ORDER BY CASE WHEN [order].[status] IS NULL THEN 1 ELSE 0 END ASC, [order.status] ASC
-- params: ["2025-01-01 00:00:00"]
