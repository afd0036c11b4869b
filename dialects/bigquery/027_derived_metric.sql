-- case: 027_derived_metric
-- dialect: bigquery
-- status: success
-- A derived metric over two inputs, one filtered.
WITH `sb_m0` AS (
  SELECT
    TIMESTAMP_TRUNC(`order`.`ordered_at`, MONTH) AS `sb_k0`,
    sum(`order`.`amount`) AS `sb_v`
  FROM
    `main`.`orders` AS `order`
  WHERE
    `order`.`status` NOT IN (?)
  GROUP BY
    TIMESTAMP_TRUNC(`order`.`ordered_at`, MONTH)
), `sb_m1` AS (
  SELECT
    TIMESTAMP_TRUNC(`order`.`ordered_at`, MONTH) AS `sb_k0`,
    count(`order`.`id`) AS `sb_v`
  FROM
    `main`.`orders` AS `order`
  WHERE
    `order`.`status` <> ?
  GROUP BY
    TIMESTAMP_TRUNC(`order`.`ordered_at`, MONTH)
)
SELECT
  `sb_keys`.`sb_k0` AS `order.ordered_at__month`,
  (CAST(`sb_m0`.`sb_v` AS FLOAT64) / nullif(coalesce(`sb_m1`.`sb_v`, 0), 0)) AS `revenue_per_order`
FROM
  (
    SELECT
      `sb_m0`.`sb_k0`
    FROM
      `sb_m0`
    UNION
    SELECT
      `sb_m1`.`sb_k0`
    FROM
      `sb_m1`
  ) AS `sb_keys`
  LEFT JOIN `sb_m0` ON (`sb_keys`.`sb_k0` IS NOT DISTINCT FROM `sb_m0`.`sb_k0`)
  LEFT JOIN `sb_m1` ON (`sb_keys`.`sb_k0` IS NOT DISTINCT FROM `sb_m1`.`sb_k0`) ORDER BY `order.ordered_at__month` ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","cancelled"]
