-- case: 007_grain_on_date_column
-- dialect: ansi
-- status: success
-- A DATE time dimension stays DATE after bucketing.
SELECT
  FLOOR("customer"."signup_date" TO YEAR) AS "customer.signup_date__year",
  count("customer"."id") AS "customer_count"
FROM
  "main"."customers" AS "customer"
GROUP BY
  FLOOR("customer"."signup_date" TO YEAR) ORDER BY "customer.signup_date__year" ASC NULLS LAST FETCH FIRST 1000 ROWS ONLY
-- params: []
