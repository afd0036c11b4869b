-- case: 058_date_part_group_by
-- dialect: sqlite
-- status: success
-- Date parts of the time dimension as group-bys (ISO day of the week, quarter), each engine's own expression of them, beside a month grain.
SELECT
  datetime("order"."ordered_at", 'start of month') AS "order.ordered_at__month",
  (CAST(strftime('%w', "order"."ordered_at") AS INTEGER) + 6) % 7 + 1 AS "order.ordered_at__extract_dow",
  (CAST(strftime('%m', "order"."ordered_at") AS INTEGER) + 2) / 3 AS "order.ordered_at__extract_quarter",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
WHERE
  "order"."status" NOT IN (?)
GROUP BY
  datetime("order"."ordered_at", 'start of month'), (CAST(strftime('%w', "order"."ordered_at") AS INTEGER) + 6) % 7 + 1, (CAST(strftime('%m', "order"."ordered_at") AS INTEGER) + 2) / 3 ORDER BY "order.ordered_at__month" ASC NULLS LAST, "order.ordered_at__extract_dow" ASC NULLS LAST, "order.ordered_at__extract_quarter" ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
