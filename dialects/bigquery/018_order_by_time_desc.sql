-- case: 018_order_by_time_desc
-- dialect: bigquery
-- status: success
-- Ordering the time bucket descending.
SELECT
  TIMESTAMP_TRUNC(`order`.`ordered_at`, QUARTER) AS `order.ordered_at__quarter`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
WHERE
  `order`.`status` NOT IN (?)
GROUP BY
  TIMESTAMP_TRUNC(`order`.`ordered_at`, QUARTER) ORDER BY `order.ordered_at__quarter` DESC NULLS LAST LIMIT 4
-- params: ["cancelled"]
