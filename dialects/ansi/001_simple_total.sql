-- case: 001_simple_total
-- dialect: ansi
-- status: success
-- One metric, no grouping, no joins.
SELECT
  count("order"."id") AS "order_count"
FROM
  "main"."orders" AS "order" FETCH FIRST 1000 ROWS ONLY
-- params: []
