-- case: 014_fan_out_exact
-- dialect: postgres
-- status: success
-- Grouping order metrics by an item column crosses a one_to_many hop; rows are deduplicated per (order, key) before aggregating.
SELECT
  "product"."category" AS "product.category",
  count(DISTINCT "order"."id") AS "order_count"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."order_items" AS "order_item" ON "order"."id" = "order_item"."order_id"
  LEFT JOIN "main"."products" AS "product" ON "order_item"."product_id" = "product"."id"
GROUP BY
  "product"."category" ORDER BY "product.category" ASC NULLS LAST LIMIT 1000
-- params: []
