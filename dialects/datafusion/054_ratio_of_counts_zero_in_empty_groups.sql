-- case: 054_ratio_of_counts_zero_in_empty_groups
-- dialect: datafusion
-- status: success
-- A ratio of counts is 0.0 (COALESCE of the count to 0) in groups where the numerator has no row.
SELECT
  date_trunc('month', "order"."ordered_at") AS "order.ordered_at__month",
  "store"."name" AS "store.name",
  (CAST(count(CASE WHEN "order"."status" = $1 THEN "order"."id" END) AS DOUBLE PRECISION) / nullif(count("order"."id"), 0)) AS "cancellation_rate"
FROM
  "main"."orders" AS "order"
  LEFT JOIN "main"."stores" AS "store" ON "order"."store_id" = "store"."id"
GROUP BY
  date_trunc('month', "order"."ordered_at"), "store"."name" ORDER BY "order.ordered_at__month" ASC NULLS LAST, "store.name" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
