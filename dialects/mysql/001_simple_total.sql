-- case: 001_simple_total
-- dialect: mysql
-- status: success
-- One metric, no grouping, no joins.
SELECT
  count(`order`.`id`) AS `order_count`
FROM
  `main`.`orders` AS `order` LIMIT 1000
-- params: []
