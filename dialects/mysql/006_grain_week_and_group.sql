-- case: 006_grain_week_and_group
-- dialect: mysql
-- status: success
-- ISO week buckets plus a group-by; time first in output and order.
SELECT
  CAST(DATE(`order`.`ordered_at`) - INTERVAL WEEKDAY(`order`.`ordered_at`) DAY AS DATETIME) AS `order.ordered_at__week`,
  `order`.`status` AS `order.status`,
  count(`order`.`id`) AS `order_count`
FROM
  `main`.`orders` AS `order`
GROUP BY
  CAST(DATE(`order`.`ordered_at`) - INTERVAL WEEKDAY(`order`.`ordered_at`) DAY AS DATETIME), `order`.`status` ORDER BY `order.ordered_at__week` IS NULL ASC, `order.ordered_at__week` ASC, `order.status` IS NULL ASC, `order.status` ASC LIMIT 1000
-- params: []
