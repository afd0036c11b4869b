-- case: 053_filter_on_bucketed_to_many_entity
-- dialect: mysql
-- status: success
-- A time bucket on a to-many entity (orders of a store) and a filter on it restrict the same joined rows.
SELECT
  CAST(MAKEDATE(YEAR(`order`.`ordered_at`), 1) AS DATETIME) AS `order.ordered_at__year`,
  count(DISTINCT `store`.`id`) AS `store_count`
FROM
  `main`.`stores` AS `store`
  LEFT JOIN `main`.`orders` AS `order` ON `store`.`id` = `order`.`store_id`
WHERE
  `order`.`ordered_at` >= CAST(? AS DATETIME)
GROUP BY
  CAST(MAKEDATE(YEAR(`order`.`ordered_at`), 1) AS DATETIME) ORDER BY CAST(MAKEDATE(YEAR(`order`.`ordered_at`), 1) AS DATETIME) IS NULL ASC, `order.ordered_at__year` ASC LIMIT 1000
-- params: ["2025-01-01 00:00:00"]
