-- case: 014_fan_out_exact
-- dialect: postgres
-- status: success
-- Grouping order metrics by an item column crosses a one_to_many hop; rows are deduplicated per (order, key) before aggregating.
SELECT
  "__rows"."__k0" AS "product.category",
  count("__rows"."__m") AS "order_count"
FROM
  (
    SELECT DISTINCT
      "order"."id" AS "__id0",
      "product"."category" AS "__k0",
      "order"."id" AS "__m"
    FROM
      "main"."orders" AS "order"
      LEFT JOIN "main"."order_items" AS "order_item" ON "order"."id" = "order_item"."order_id"
      LEFT JOIN "main"."products" AS "product" ON "order_item"."product_id" = "product"."id"
  ) AS "__rows"
GROUP BY
  "__rows"."__k0" ORDER BY "product.category" ASC NULLS LAST LIMIT 1000
-- params: []
