-- case: 027_derived_metric
-- dialect: duckdb
-- status: success
-- A derived metric over two inputs, one filtered.
SELECT
  date_trunc('month', "order"."ordered_at") AS "order.ordered_at__month",
  (CAST(sum(CASE WHEN "order"."status" NOT IN ($1) THEN "order"."amount" END) AS DOUBLE PRECISION) / nullif(count(CASE WHEN "order"."status" <> $2 THEN "order"."id" END), 0)) AS "revenue_per_order"
FROM
  "main"."orders" AS "order"
WHERE
  (("order"."status" NOT IN ($3)) OR ("order"."status" <> $4))
GROUP BY
  date_trunc('month', "order"."ordered_at") ORDER BY "order.ordered_at__month" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","cancelled","cancelled","cancelled"]
