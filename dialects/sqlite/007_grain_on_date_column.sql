-- case: 007_grain_on_date_column
-- dialect: sqlite
-- status: success
-- A DATE time dimension stays DATE after bucketing.
SELECT
  date(datetime("customer"."signup_date", 'start of year')) AS "customer.signup_date__year",
  count("customer"."id") AS "customer_count"
FROM
  "main"."customers" AS "customer"
GROUP BY
  date(datetime("customer"."signup_date", 'start of year')) ORDER BY "customer.signup_date__year" ASC NULLS LAST LIMIT 1000
-- params: []
