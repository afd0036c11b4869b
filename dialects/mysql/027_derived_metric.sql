-- case: 027_derived_metric
-- dialect: mysql
-- status: success
-- A derived metric over two inputs, one filtered.
SELECT
  CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME) AS `order.ordered_at__month`,
  (CAST(sum(CASE WHEN `order`.`status` NOT IN (?) THEN `order`.`amount` END) AS DOUBLE) / nullif(count(CASE WHEN `order`.`status` <> ? THEN `order`.`id` END), 0)) AS `revenue_per_order`
FROM
  `main`.`orders` AS `order`
WHERE
  ((`order`.`status` NOT IN (?)) OR (`order`.`status` <> ?))
GROUP BY
  CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME) ORDER BY CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME) IS NULL ASC, `order.ordered_at__month` ASC LIMIT 1000
-- params: ["cancelled","cancelled","cancelled","cancelled"]
