-- case: 013_parallel_join_via
-- dialect: mysql
-- status: success
-- Two parallel joins order→address; via picks the shipping one.
SELECT
  `address`.`city` AS `address.city`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
  LEFT JOIN `main`.`addresses` AS `address` ON `order`.`shipping_address_id` = `address`.`id`
WHERE
  `order`.`status` NOT IN (?)
GROUP BY
  `address`.`city` ORDER BY `address.city` IS NULL ASC, `address.city` ASC LIMIT 1000
-- params: ["cancelled"]
