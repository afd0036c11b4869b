-- case: 019_is_null_filter
-- dialect: trino
-- status: success
-- is_null takes no parameter.
SELECT
  count("order"."id") AS "order_count"
FROM
  "main"."orders" AS "order"
WHERE
  "order"."store_id" IS NULL LIMIT 1000
-- params: []
