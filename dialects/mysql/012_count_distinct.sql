-- case: 012_count_distinct
-- dialect: mysql
-- status: success
-- count_distinct renders as count(DISTINCT …).
SELECT
  `customer`.`segment` AS `customer.segment`,
  count(`customer`.`id`) AS `customer_count`
FROM
  `main`.`customers` AS `customer`
GROUP BY
  `customer`.`segment` ORDER BY `customer`.`segment` IS NULL ASC, `customer.segment` ASC LIMIT 1000
-- params: []
