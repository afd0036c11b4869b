-- case: 039_median_ungrouped
-- dialect: databricks
-- status: success
-- The median of all orders.
SELECT
  median(`order`.`amount`) AS `median_order_value`
FROM
  `main`.`orders` AS `order` LIMIT 1000
-- params: []
