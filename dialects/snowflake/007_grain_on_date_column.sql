-- case: 007_grain_on_date_column
-- dialect: snowflake
-- status: success
-- A DATE time dimension stays DATE after bucketing.
SELECT
  date_trunc('year', "customer"."signup_date") AS "customer.signup_date__year",
  count("customer"."id") AS "customer_count"
FROM
  "main"."customers" AS "customer"
GROUP BY
  date_trunc('year', "customer"."signup_date") ORDER BY "customer.signup_date__year" ASC NULLS LAST LIMIT 1000
-- params: []
