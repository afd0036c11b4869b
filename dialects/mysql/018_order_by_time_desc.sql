-- case: 018_order_by_time_desc
-- dialect: mysql
-- status: success
-- Ordering the time bucket descending.
SELECT
  CAST(MAKEDATE(YEAR(`order`.`ordered_at`), 1) + INTERVAL (QUARTER(`order`.`ordered_at`) - 1) QUARTER AS DATETIME) AS `order.ordered_at__quarter`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
WHERE
  `order`.`status` NOT IN (?)
GROUP BY
  CAST(MAKEDATE(YEAR(`order`.`ordered_at`), 1) + INTERVAL (QUARTER(`order`.`ordered_at`) - 1) QUARTER AS DATETIME) ORDER BY `order.ordered_at__quarter` IS NULL ASC, `order.ordered_at__quarter` DESC LIMIT 4
-- params: ["cancelled"]
