-- case: 022_fan_out_time_and_semi_join
-- dialect: postgres
-- status: success
-- Fan-out group-by with a time bucket and a semi-join filter on the same to-many path.
SELECT
  "__rows"."__k0" AS "order.ordered_at__quarter",
  "__rows"."__k1" AS "product.brand",
  avg("__rows"."__m") AS "avg_order_value"
FROM
  (
    SELECT DISTINCT
      "order"."id" AS "__id0",
      date_trunc('quarter', "order"."ordered_at") AS "__k0",
      "product"."brand" AS "__k1",
      "order"."amount" AS "__m"
    FROM
      "main"."orders" AS "order"
      LEFT JOIN "main"."order_items" AS "order_item" ON "order"."id" = "order_item"."order_id"
      LEFT JOIN "main"."products" AS "product" ON "order_item"."product_id" = "product"."id"
    WHERE
      EXISTS (SELECT 1 FROM "main"."order_items" AS "order_item__s1" JOIN "main"."products" AS "product__s1" ON "order_item__s1"."product_id" = "product__s1"."id" WHERE "order"."id" = "order_item__s1"."order_id" AND "product__s1"."category" IN ($1, $2))
  ) AS "__rows"
GROUP BY
  "__rows"."__k0", "__rows"."__k1" ORDER BY "order.ordered_at__quarter" ASC NULLS LAST, "product.brand" ASC NULLS LAST LIMIT 1000
-- params: ["sports","home"]
