-- case: 030_grain_day_year
-- dialect: sqlite
-- status: success
-- Day buckets, then year buckets with a status group.
SELECT
  datetime("order"."ordered_at", 'start of year') AS "order.ordered_at__year",
  "order"."status" AS "order.status",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
WHERE
  "order"."status" NOT IN (?)
GROUP BY
  datetime("order"."ordered_at", 'start of year'), "order"."status" ORDER BY "order.ordered_at__year" ASC NULLS LAST, "order.status" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
