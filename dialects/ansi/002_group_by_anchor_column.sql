-- case: 002_group_by_anchor_column
-- dialect: ansi
-- status: success
-- Group by a column of the anchor; no join.
SELECT
  "order"."status" AS "order.status",
  sum("order"."amount") AS "revenue"
FROM
  "main"."orders" AS "order"
WHERE
  "order"."status" NOT IN (?)
GROUP BY
  "order"."status" ORDER BY "order.status" ASC NULLS LAST FETCH FIRST 1000 ROWS ONLY
-- params: ["cancelled"]
