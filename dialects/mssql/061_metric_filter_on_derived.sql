-- case: 061_metric_filter_on_derived
-- dialect: mssql
-- status: success
-- A metric filter on a derived metric keeps the rows whose customer's revenue per order compares; the inner answer joins its two parts in CTEs, written inside the filter's subquery where the dialect allows a WITH there (SQL Server does not, so it refuses).
SELECT TOP (1000)
  [customer].[country] AS [customer.country],
  sum([order].[amount]) AS [revenue]
FROM
  [main].[orders] AS [order]
  LEFT JOIN [main].[customers] AS [customer] ON [order].[customer_id] = [customer].[id]
WHERE
  [order].[status] NOT IN (@p1) AND [customer].[id] IN (SELECT [sb_mf].[customer.id] FROM (SELECT [customer].[id] AS [customer.id], (CAST(sum(CASE WHEN [order].[status] NOT IN (@p2) THEN [order].[amount] END) AS FLOAT) / nullif(count(CASE WHEN [order].[status] <> @p3 THEN [order].[id] END), 0)) AS [revenue_per_order] FROM [main].[orders] AS [order] LEFT JOIN [main].[customers] AS [customer] ON [order].[customer_id] = [customer].[id] WHERE (([order].[status] NOT IN (@p4)) OR ([order].[status] <> @p5)) GROUP BY [customer].[id]) AS [sb_mf] WHERE [sb_mf].[revenue_per_order] >= @p6)
GROUP BY
  [customer].[country] ORDER BY CASE WHEN [customer].[country] IS NULL THEN 1 ELSE 0 END ASC, [customer.country] ASC
-- params: ["cancelled","cancelled","cancelled","cancelled","cancelled",50]
