-- case: 014_fan_out_exact
-- dialect: datafusion
-- status: success
-- Grouping order metrics by an item column crosses a one_to_many hop; rows are deduplicated per (order, key) before aggregating.
SELECT
  "sb_rows"."sb_k0" AS "product.category",
  count("sb_rows"."sb_m") AS "order_count"
FROM
  (
    SELECT DISTINCT
      "order"."id" AS "sb_id0",
      "product"."category" AS "sb_k0",
      "order"."id" AS "sb_m"
    FROM
      "main"."orders" AS "order"
      LEFT JOIN "main"."order_items" AS "order_item" ON "order"."id" = "order_item"."order_id"
      LEFT JOIN "main"."products" AS "product" ON "order_item"."product_id" = "product"."id"
  ) AS "sb_rows"
GROUP BY
  "sb_rows"."sb_k0" ORDER BY "product.category" ASC NULLS LAST LIMIT 1000
-- params: []
