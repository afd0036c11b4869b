-- case: 027_derived_metric
-- dialect: ansi
-- status: success
-- A derived metric over two inputs, one filtered.
SELECT
  FLOOR("order"."ordered_at" TO MONTH) AS "order.ordered_at__month",
  (CAST(sum(CASE WHEN "order"."status" NOT IN (?) THEN "order"."amount" END) AS DOUBLE PRECISION) / nullif(count(CASE WHEN "order"."status" <> ? THEN "order"."id" END), 0)) AS "revenue_per_order"
FROM
  "main"."orders" AS "order"
WHERE
  (("order"."status" NOT IN (?)) OR ("order"."status" <> ?))
GROUP BY
  FLOOR("order"."ordered_at" TO MONTH) ORDER BY "order.ordered_at__month" ASC NULLS LAST FETCH FIRST 1000 ROWS ONLY
-- params: ["cancelled","cancelled","cancelled","cancelled"]
