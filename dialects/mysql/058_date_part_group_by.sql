-- case: 058_date_part_group_by
-- dialect: mysql
-- status: success
-- Date parts of the time dimension as group-bys (ISO day of the week, quarter), each engine's own expression of them, beside a month grain.
SELECT
  CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME) AS `order.ordered_at__month`,
  WEEKDAY(`order`.`ordered_at`) + 1 AS `order.ordered_at__extract_dow`,
  QUARTER(`order`.`ordered_at`) AS `order.ordered_at__extract_quarter`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
WHERE
  `order`.`status` NOT IN (?)
GROUP BY
  CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME), WEEKDAY(`order`.`ordered_at`) + 1, QUARTER(`order`.`ordered_at`) ORDER BY CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME) IS NULL ASC, `order.ordered_at__month` ASC, WEEKDAY(`order`.`ordered_at`) + 1 IS NULL ASC, `order.ordered_at__extract_dow` ASC, QUARTER(`order`.`ordered_at`) IS NULL ASC, `order.ordered_at__extract_quarter` ASC LIMIT 1000
-- params: ["cancelled"]
