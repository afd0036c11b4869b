-- case: 033_not_in_and_lte
-- dialect: ansi
-- status: success
-- not_in with several values and lte.
SELECT
  "customer"."segment" AS "customer.segment",
  count("order"."id") AS "order_count"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
WHERE
  "order"."status" NOT IN (?, ?) AND "order"."discount" <= ?
GROUP BY
  "customer"."segment" ORDER BY "customer.segment" ASC NULLS LAST FETCH FIRST 1000 ROWS ONLY
-- params: ["cancelled","returned",5.0]
