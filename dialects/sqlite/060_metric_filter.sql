-- case: 060_metric_filter
-- dialect: sqlite
-- status: success
-- A metric filter (MetricFlow's Metric(...) in a where string) keeps the rows whose customer's order_count compares; the metric per customer is a whole answer inside IN, without order or limit, its parameters bound before the comparison's.
SELECT
  "customer"."country" AS "customer.country",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id"
WHERE
  "order"."status" NOT IN (?) AND ("customer"."id" IN (SELECT "sb_mf"."customer.id" FROM (SELECT "customer"."id" AS "customer.id", count("order"."id") AS "order_count" FROM "main"."orders" AS "order" LEFT JOIN "main"."customers" AS "customer" ON "order"."customer_id" = "customer"."id" GROUP BY "customer"."id") AS "sb_mf" WHERE "sb_mf"."order_count" >= ?) OR "order"."status" = ?)
GROUP BY
  "customer"."country" ORDER BY "customer.country" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled",5,"returned"]
