-- case: 057_where_or_not_like
-- dialect: mysql
-- status: success
-- A where string with OR across a to-one join, NOT (pushed into the comparisons) and LIKE; one disjunction in parentheses, the rest ANDed, values bound.
SELECT
  `customer`.`segment` AS `customer.segment`,
  count(`order`.`id`) AS `order_count`
FROM
  `main`.`orders` AS `order`
  LEFT JOIN `main`.`customers` AS `customer` ON `order`.`customer_id` = `customer`.`id`
WHERE
  `order`.`is_gift` <> ? AND `order`.`amount` >= ? AND `order`.`amount` <= ? AND (`order`.`status` = ? OR CAST(`customer`.`country` AS BINARY) LIKE ?)
GROUP BY
  `customer`.`segment` ORDER BY `customer`.`segment` IS NULL ASC, `customer.segment` ASC LIMIT 1000
-- params: [true,10.0,500.0,"delivered","D%"]
