-- case: 019_is_null_filter
-- dialect: ansi
-- status: success
-- is_null takes no parameter.
SELECT
  count("order"."id") AS "order_count"
FROM
  "main"."orders" AS "order"
WHERE
  "order"."store_id" IS NULL FETCH FIRST 1000 ROWS ONLY
-- params: []
