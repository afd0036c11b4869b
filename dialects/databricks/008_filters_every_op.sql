-- case: 008_filters_every_op
-- dialect: databricks
-- status: success
-- Filters with comparison, list and null ops bind parameters in order.
SELECT
  count(`order`.`id`) AS `order_count`
FROM
  `main`.`orders` AS `order`
WHERE
  `order`.`amount` >= ? AND `order`.`status` IN (?, ?) AND `order`.`store_id` IS NOT NULL AND `order`.`ordered_at` < CAST(? AS TIMESTAMP) LIMIT 1000
-- params: [100.0,"shipped","delivered","2025-01-01 00:00:00"]
