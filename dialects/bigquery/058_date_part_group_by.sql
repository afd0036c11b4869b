-- case: 058_date_part_group_by
-- dialect: bigquery
-- status: success
-- Date parts of the time dimension as group-bys (ISO day of the week, quarter), each engine's own expression of them, beside a month grain.
SELECT
  TIMESTAMP_TRUNC(`order`.`ordered_at`, MONTH) AS `order.ordered_at__month`,
  MOD(EXTRACT(DAYOFWEEK FROM `order`.`ordered_at`) + 5, 7) + 1 AS `order.ordered_at__extract_dow`,
  EXTRACT(QUARTER FROM `order`.`ordered_at`) AS `order.ordered_at__extract_quarter`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
WHERE
  `order`.`status` NOT IN (?)
GROUP BY
  TIMESTAMP_TRUNC(`order`.`ordered_at`, MONTH), MOD(EXTRACT(DAYOFWEEK FROM `order`.`ordered_at`) + 5, 7) + 1, EXTRACT(QUARTER FROM `order`.`ordered_at`) ORDER BY `order.ordered_at__month` ASC NULLS LAST, `order.ordered_at__extract_dow` ASC NULLS LAST, `order.ordered_at__extract_quarter` ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
