-- case: 053_filter_on_bucketed_to_many_entity
-- dialect: bigquery
-- status: success
-- A time bucket on a to-many entity (orders of a store) and a filter on it restrict the same joined rows.
SELECT
  TIMESTAMP_TRUNC(`order`.`ordered_at`, YEAR) AS `order.ordered_at__year`,
  count(DISTINCT `store`.`id`) AS `store_count`
FROM
  `main`.`stores` AS `store`
  LEFT JOIN `main`.`orders` AS `order` ON `store`.`id` = `order`.`store_id`
WHERE
  `order`.`ordered_at` >= CAST(? AS DATETIME)
GROUP BY
  TIMESTAMP_TRUNC(`order`.`ordered_at`, YEAR) ORDER BY `order.ordered_at__year` ASC NULLS LAST LIMIT 1000
-- params: ["2025-01-01 00:00:00"]
