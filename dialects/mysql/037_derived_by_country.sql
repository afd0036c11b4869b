-- case: 037_derived_by_country
-- dialect: mysql
-- status: success
-- A derived metric grouped by a joined column.
SELECT
  `customer`.`country` AS `customer.country`,
  (CAST(sum(CASE WHEN `order`.`status` NOT IN (?) THEN `order`.`amount` END) AS DOUBLE) / nullif(count(CASE WHEN `order`.`status` <> ? THEN `order`.`id` END), 0)) AS `revenue_per_order`
FROM
  `main`.`orders` AS `order`
  LEFT JOIN `main`.`customers` AS `customer` ON `order`.`customer_id` = `customer`.`id`
WHERE
  ((`order`.`status` NOT IN (?)) OR (`order`.`status` <> ?))
GROUP BY
  `customer`.`country` ORDER BY `customer`.`country` IS NULL ASC, `customer.country` ASC LIMIT 1000
-- params: ["cancelled","cancelled","cancelled","cancelled"]
