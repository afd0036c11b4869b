-- case: 030_grain_day_year
-- dialect: datafusion
-- status: success
-- Day buckets, then year buckets with a status group.
SELECT
  date_trunc('year', "order"."ordered_at") AS "order.ordered_at__year",
  "order"."status" AS "order.status",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
WHERE
  "order"."status" NOT IN ($1)
GROUP BY
  date_trunc('year', "order"."ordered_at"), "order"."status" ORDER BY "order.ordered_at__year" ASC NULLS LAST, "order.status" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
