-- case: 059_other_date_column_at_a_grain
-- dialect: ansi
-- status: success
-- A date column that is not the metric's time dimension, at a grain, is a group-by key of its own beside the time bucket (a DATE bucket cast back to DATE where the engine widens it).
SELECT
  FLOOR("order"."ordered_at" TO QUARTER) AS "order.ordered_at__quarter",
  FLOOR("customer"."signup_date" TO YEAR) AS "customer.signup_date__year",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
WHERE
  "order"."status" NOT IN (?)
GROUP BY
  FLOOR("order"."ordered_at" TO QUARTER), FLOOR("customer"."signup_date" TO YEAR) ORDER BY "order.ordered_at__quarter" ASC NULLS LAST, "customer.signup_date__year" ASC NULLS LAST FETCH FIRST 1000 ROWS ONLY
-- params: ["cancelled"]
