-- case: 012_count_distinct
-- dialect: ansi
-- status: success
-- count_distinct renders as count(DISTINCT …).
SELECT
  "customer"."segment" AS "customer.segment",
  count("customer"."id") AS "customer_count"
FROM
  "main"."customers" AS "customer"
GROUP BY
  "customer"."segment" ORDER BY "customer.segment" ASC NULLS LAST FETCH FIRST 1000 ROWS ONLY
-- params: []
