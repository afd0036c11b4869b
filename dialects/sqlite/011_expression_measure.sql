-- case: 011_expression_measure
-- dialect: sqlite
-- status: success
-- A measure expression over anchor columns, fully parenthesised.
SELECT
  "product"."category" AS "product.category",
  sum("order_item"."quantity" * "order_item"."unit_price") AS "item_revenue"
FROM
  "main"."order_items" AS "order_item"
  LEFT JOIN "main"."products" AS "product" ON "order_item"."product_id" = "product"."id"
GROUP BY
  "product"."category" ORDER BY "product.category" ASC NULLS LAST LIMIT 1000
-- params: []
