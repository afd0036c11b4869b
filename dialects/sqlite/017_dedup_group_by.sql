-- case: 017_dedup_group_by
-- dialect: sqlite
-- status: success
-- A repeated group-by column is emitted once.
SELECT
  "order"."status" AS "order.status",
  count("order"."id") AS "order_count"
FROM
  "main"."orders" AS "order"
GROUP BY
  "order"."status" ORDER BY "order.status" ASC NULLS LAST LIMIT 1000
-- params: []
