-- case: 027_derived_metric
-- dialect: bigquery
-- status: success
-- A derived metric over two inputs, one filtered.
SELECT
  TIMESTAMP_TRUNC(`order`.`ordered_at`, MONTH) AS `order.ordered_at__month`,
  (CAST(sum(CASE WHEN `order`.`status` NOT IN (?) THEN `order`.`amount` END) AS FLOAT64) / nullif(count(CASE WHEN `order`.`status` <> ? THEN `order`.`id` END), 0)) AS `revenue_per_order`
FROM
  `main`.`orders` AS `order`
WHERE
  ((`order`.`status` NOT IN (?)) OR (`order`.`status` <> ?))
GROUP BY
  TIMESTAMP_TRUNC(`order`.`ordered_at`, MONTH) ORDER BY `order.ordered_at__month` ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","cancelled","cancelled","cancelled"]
