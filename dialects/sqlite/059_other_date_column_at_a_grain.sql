-- case: 059_other_date_column_at_a_grain
-- dialect: sqlite
-- status: success
-- A date column that is not the metric's time dimension, at a grain, is a group-by key of its own beside the time bucket (a DATE bucket cast back to DATE where the engine widens it).
SELECT
  datetime("order"."ordered_at", 'start of month', '-' || ((CAST(strftime('%m', "order"."ordered_at") AS INTEGER) - 1) % 3) || ' months') AS "order.ordered_at__quarter",
  date(datetime("customer"."signup_date", 'start of year')) AS "customer.signup_date__year",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
WHERE
  "order"."status" NOT IN (?)
GROUP BY
  datetime("order"."ordered_at", 'start of month', '-' || ((CAST(strftime('%m', "order"."ordered_at") AS INTEGER) - 1) % 3) || ' months'), date(datetime("customer"."signup_date", 'start of year')) ORDER BY "order.ordered_at__quarter" ASC NULLS LAST, "customer.signup_date__year" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
