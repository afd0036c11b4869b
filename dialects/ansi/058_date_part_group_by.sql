-- case: 058_date_part_group_by
-- dialect: ansi
-- status: success
-- Date parts of the time dimension as group-bys (ISO day of the week, quarter), each engine's own expression of them, beside a month grain.
SELECT
  FLOOR("order"."ordered_at" TO MONTH) AS "order.ordered_at__month",
  EXTRACT(ISODOW FROM "order"."ordered_at") AS "order.ordered_at__extract_dow",
  EXTRACT(QUARTER FROM "order"."ordered_at") AS "order.ordered_at__extract_quarter",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
WHERE
  "order"."status" NOT IN (?)
GROUP BY
  FLOOR("order"."ordered_at" TO MONTH), EXTRACT(ISODOW FROM "order"."ordered_at"), EXTRACT(QUARTER FROM "order"."ordered_at") ORDER BY "order.ordered_at__month" ASC NULLS LAST, "order.ordered_at__extract_dow" ASC NULLS LAST, "order.ordered_at__extract_quarter" ASC NULLS LAST FETCH FIRST 1000 ROWS ONLY
-- params: ["cancelled"]
