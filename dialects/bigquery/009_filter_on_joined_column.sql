-- case: 009_filter_on_joined_column
-- dialect: bigquery
-- status: success
-- A filter on a joined column adds the join once, shared with the group-by.
SELECT
  `customer`.`segment` AS `customer.segment`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
  LEFT JOIN `main`.`customers` AS `customer` ON `order`.`customer_id` = `customer`.`id`
WHERE
  `order`.`status` NOT IN (?) AND `customer`.`country` = ?
GROUP BY
  `customer`.`segment` ORDER BY `customer.segment` ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","DE"]
