-- case: 005_grain_month
-- dialect: bigquery
-- status: success
-- Month buckets on the metric time dimension (a TIMESTAMP).
SELECT
  TIMESTAMP_TRUNC(`order`.`ordered_at`, MONTH) AS `order.ordered_at__month`,
  sum(`order`.`amount`) AS `revenue`
FROM
  `main`.`orders` AS `order`
WHERE
  `order`.`status` NOT IN (?)
GROUP BY
  TIMESTAMP_TRUNC(`order`.`ordered_at`, MONTH) ORDER BY `order.ordered_at__month` ASC NULLS LAST LIMIT 1000
-- params: ["cancelled"]
