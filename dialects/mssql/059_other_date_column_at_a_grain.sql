-- case: 059_other_date_column_at_a_grain
-- dialect: mssql
-- status: success
-- A date column that is not the metric's time dimension, at a grain, is a group-by key of its own beside the time bucket (a DATE bucket cast back to DATE where the engine widens it).
SELECT TOP (1000)
  DATETRUNC(quarter, [order].[ordered_at]) AS [order.ordered_at__quarter],
  DATETRUNC(year, [customer].[signup_date]) AS [customer.signup_date__year],
  sum([order].[amount]) AS [revenue]
FROM
  [main].[orders] AS [order]
  LEFT JOIN [main].[customers] AS [customer] ON [order].[customer_id] = [customer].[id]
WHERE
  [order].[status] NOT IN (@p1)
GROUP BY
  DATETRUNC(quarter, [order].[ordered_at]), DATETRUNC(year, [customer].[signup_date]) ORDER BY CASE WHEN DATETRUNC(quarter, [order].[ordered_at]) IS NULL THEN 1 ELSE 0 END ASC, [order.ordered_at__quarter] ASC, CASE WHEN DATETRUNC(year, [customer].[signup_date]) IS NULL THEN 1 ELSE 0 END ASC, [customer.signup_date__year] ASC
-- params: ["cancelled"]
