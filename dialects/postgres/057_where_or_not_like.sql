-- case: 057_where_or_not_like
-- dialect: postgres
-- status: success
-- A where string with OR across a to-one join, NOT (pushed into the comparisons) and LIKE; one disjunction in parentheses, the rest ANDed, values bound.
SELECT
  "customer"."segment" AS "customer.segment",
  count("order"."id") AS "order_count"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
WHERE
  "order"."is_gift" <> $1 AND "order"."amount" >= $2 AND "order"."amount" <= $3 AND ("order"."status" = $4 OR "customer"."country" LIKE $5)
GROUP BY
  "customer"."segment" ORDER BY "customer.segment" ASC NULLS LAST LIMIT 1000
-- params: [true,10.0,500.0,"delivered","D%"]
