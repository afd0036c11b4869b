-- case: 022_fan_out_time_and_semi_join
-- dialect: sqlite
-- status: success
-- Fan-out group-by with a time bucket and a semi-join filter on the same to-many path.
SELECT
  datetime("order"."ordered_at", 'start of month', '-' || ((CAST(strftime('%m', "order"."ordered_at") AS INTEGER) - 1) % 3) || ' months') AS "order.ordered_at__quarter",
  "sb_fan"."sb_bk0" AS "product.brand",
  avg("order"."amount") AS "avg_order_value"
FROM
  "main"."orders" AS "order"
  JOIN (SELECT DISTINCT "order_item"."order_id" AS "sb_j0", "product"."brand" AS "sb_bk0" FROM "main"."order_items" AS "order_item" LEFT JOIN "main"."products" AS "product" ON "order_item"."product_id" = "product"."id" WHERE "product"."category" IN (?, ?)) AS "sb_fan" ON "order"."id" = "sb_fan"."sb_j0"
GROUP BY
  datetime("order"."ordered_at", 'start of month', '-' || ((CAST(strftime('%m', "order"."ordered_at") AS INTEGER) - 1) % 3) || ' months'), "sb_fan"."sb_bk0" ORDER BY "order.ordered_at__quarter" ASC NULLS LAST, "product.brand" ASC NULLS LAST LIMIT 1000
-- params: ["sports","home"]
