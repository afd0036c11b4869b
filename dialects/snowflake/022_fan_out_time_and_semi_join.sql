-- case: 022_fan_out_time_and_semi_join
-- dialect: snowflake
-- status: success
-- Fan-out group-by with a time bucket and a semi-join filter on the same to-many path.
SELECT
  date_trunc('quarter', "order"."ordered_at") AS "order.ordered_at__quarter",
  "sb_fan"."sb_bk0" AS "product.brand",
  avg("order"."amount") AS "avg_order_value"
FROM
  "main"."orders" AS "order"
  JOIN (SELECT DISTINCT "order_item"."order_id" AS "sb_j0", "product"."brand" AS "sb_bk0" FROM "main"."order_items" AS "order_item" LEFT JOIN "main"."products" AS "product" ON "order_item"."product_id" = "product"."id" WHERE "product"."category" IN (?, ?)) AS "sb_fan" ON "order"."id" = "sb_fan"."sb_j0"
GROUP BY
  date_trunc('quarter', "order"."ordered_at"), "sb_fan"."sb_bk0" ORDER BY "order.ordered_at__quarter" ASC NULLS LAST, "product.brand" ASC NULLS LAST LIMIT 1000
-- params: ["sports","home"]
