-- case: 052_filter_on_grouped_to_many_entity
-- dialect: sqlite
-- status: success
-- A filter on the entity a group-by joins over a to-many hop restricts those joined rows (books and toys only), not a semi-join.
SELECT
  "sb_rows"."sb_k0" AS "product.category",
  sum("sb_rows"."sb_m") AS "revenue"
FROM
  (
    SELECT DISTINCT
      "order"."id" AS "sb_id0",
      "product"."category" AS "sb_k0",
      "order"."amount" AS "sb_m"
    FROM
      "main"."orders" AS "order"
      LEFT JOIN "main"."order_items" AS "order_item" ON "order"."id" = "order_item"."order_id"
      LEFT JOIN "main"."products" AS "product" ON "order_item"."product_id" = "product"."id"
    WHERE
      "order"."status" NOT IN (?) AND "product"."category" IN (?, ?)
  ) AS "sb_rows"
GROUP BY
  "sb_rows"."sb_k0" ORDER BY "product.category" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","books","toys"]
