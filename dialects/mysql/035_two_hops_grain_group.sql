-- case: 035_two_hops_grain_group
-- dialect: mysql
-- status: success
-- Two many_to_one hops, a grain and a group-by together.
SELECT
  CAST(MAKEDATE(YEAR(`order`.`ordered_at`), 1) + INTERVAL (QUARTER(`order`.`ordered_at`) - 1) QUARTER AS DATETIME) AS `order.ordered_at__quarter`,
  `region`.`name` AS `region.name`,
  `customer`.`segment` AS `customer.segment`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
  LEFT JOIN `main`.`customers` AS `customer` ON `order`.`customer_id` = `customer`.`id`
  LEFT JOIN `main`.`regions` AS `region` ON `customer`.`region_id` = `region`.`id`
WHERE
  `order`.`status` NOT IN (?)
GROUP BY
  CAST(MAKEDATE(YEAR(`order`.`ordered_at`), 1) + INTERVAL (QUARTER(`order`.`ordered_at`) - 1) QUARTER AS DATETIME), `region`.`name`, `customer`.`segment` ORDER BY `order.ordered_at__quarter` IS NULL ASC, `order.ordered_at__quarter` ASC, `region.name` IS NULL ASC, `region.name` ASC, `customer.segment` IS NULL ASC, `customer.segment` ASC LIMIT 1000
-- params: ["cancelled"]
