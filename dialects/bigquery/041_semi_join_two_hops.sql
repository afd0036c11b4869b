-- case: 041_semi_join_two_hops
-- dialect: bigquery
-- status: success
-- A semi-join two hops deep (customer → order → order_item).
SELECT
  `customer`.`segment` AS `customer.segment`,
  count(`customer`.`id`) AS `customer_count`
FROM
  `main`.`customers` AS `customer`
WHERE
  `customer`.`id` IN (SELECT `order__s1`.`customer_id` FROM `main`.`orders` AS `order__s1` JOIN `main`.`order_items` AS `order_item__s1` ON `order__s1`.`id` = `order_item__s1`.`order_id` WHERE `order_item__s1`.`quantity` > ?)
GROUP BY
  `customer`.`segment` ORDER BY `customer.segment` ASC NULLS LAST LIMIT 1000
-- params: [4]
