-- case: 010_order_by_metric_desc_limit
-- dialect: datafusion
-- status: success
-- Explicit order with a tie-break on the group-by and a limit.
SELECT
  "customer"."country" AS "customer.country",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
WHERE
  "order"."status" NOT IN ($1)
GROUP BY
  "customer"."country" ORDER BY "revenue" DESC NULLS LAST, "customer.country" ASC NULLS LAST LIMIT 10
-- params: ["cancelled"]
