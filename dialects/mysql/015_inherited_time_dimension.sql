-- case: 015_inherited_time_dimension
-- dialect: mysql
-- status: success
-- An order_item metric bucketed by the order time dimension named by the caller.
SELECT
  CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME) AS `order.ordered_at__month`,
  sum(`order_item`.`quantity`) AS `units_sold`
FROM
  `main`.`order_items` AS `order_item`
  LEFT JOIN `main`.`orders` AS `order` ON `order_item`.`order_id` = `order`.`id`
GROUP BY
  CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME) ORDER BY `order.ordered_at__month` IS NULL ASC, `order.ordered_at__month` ASC LIMIT 1000
-- params: []
