-- case: 007_grain_on_date_column
-- dialect: mssql
-- status: success
-- A DATE time dimension stays DATE after bucketing.
SELECT TOP (1000)
  DATETRUNC(year, [customer].[signup_date]) AS [customer.signup_date__year],
  count([customer].[id]) AS [customer_count]
FROM
  [main].[customers] AS [customer]
GROUP BY
  DATETRUNC(year, [customer].[signup_date]) ORDER BY CASE WHEN DATETRUNC(year, [customer].[signup_date]) IS NULL THEN 1 ELSE 0 END ASC, [customer.signup_date__year] ASC
-- params: []
