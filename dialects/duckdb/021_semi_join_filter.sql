-- case: 021_semi_join_filter
-- dialect: duckdb
-- status: success
-- A filter across a one_to_many hop is an EXISTS semi-join; two filters on the same items share one EXISTS.
SELECT
  "customer"."country" AS "customer.country",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
WHERE
  "order"."status" NOT IN ($1) AND "order"."id" IN (SELECT "order_item__s1"."order_id" FROM "main"."order_items" AS "order_item__s1" JOIN "main"."products" AS "product__s1" ON "order_item__s1"."product_id" = "product__s1"."id" WHERE "product__s1"."category" = $2 AND "order_item__s1"."quantity" >= $3)
GROUP BY
  "customer"."country" ORDER BY "customer.country" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","home",2]
