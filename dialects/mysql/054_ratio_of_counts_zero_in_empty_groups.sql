-- case: 054_ratio_of_counts_zero_in_empty_groups
-- dialect: mysql
-- status: success
-- A ratio of counts is 0.0 (COALESCE of the count to 0) in groups where the numerator has no row.
SELECT
  CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME) AS `order.ordered_at__month`,
  `store`.`name` AS `store.name`,
  (CAST(count(CASE WHEN `order`.`status` = ? THEN `order`.`id` END) AS DOUBLE) / nullif(count(`order`.`id`), 0)) AS `cancellation_rate`
FROM
  `main`.`orders` AS `order`
  LEFT JOIN `main`.`stores` AS `store` ON `order`.`store_id` = `store`.`id`
GROUP BY
  CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME), `store`.`name` ORDER BY CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME) IS NULL ASC, `order.ordered_at__month` ASC, `store`.`name` IS NULL ASC, `store.name` ASC LIMIT 1000
-- params: ["cancelled"]
