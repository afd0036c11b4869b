-- case: 003_group_by_one_hop
-- dialect: bigquery
-- status: success
-- Group by a column one many_to_one hop away (LEFT JOIN).
SELECT
  `customer`.`country` AS `customer.country`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
  LEFT JOIN `main`.`customers` AS `customer` ON `order`.`customer_id` = `customer`.`id`
WHERE
  `order`.`status` NOT IN (?)
GROUP BY
  `customer`.`country` ORDER BY `customer.country` ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
