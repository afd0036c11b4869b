-- case: 030_grain_day_year
-- dialect: ansi
-- status: success
-- Day buckets, then year buckets with a status group.
SELECT
  FLOOR("order"."ordered_at" TO YEAR) AS "order.ordered_at__year",
  "order"."status" AS "order.status",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
WHERE
  "order"."status" NOT IN (?)
GROUP BY
  FLOOR("order"."ordered_at" TO YEAR), "order"."status" ORDER BY "order.ordered_at__year" ASC NULLS LAST, "order.status" ASC NULLS LAST FETCH FIRST 1000 ROWS ONLY
-- params: ["cancelled"]
