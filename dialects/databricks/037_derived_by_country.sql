-- case: 037_derived_by_country
-- dialect: databricks
-- status: success
-- A derived metric grouped by a joined column.
WITH `sb_m0` AS (
  SELECT
    `customer`.`country` AS `sb_k0`,
    sum(`order`.`amount`) AS `sb_v`
  FROM
    `main`.`orders` AS `order`
    LEFT JOIN `main`.`customers` AS `customer` ON `order`.`customer_id` = `customer`.`id`
  WHERE
    `order`.`status` NOT IN (?)
  GROUP BY
    `customer`.`country`
), `sb_m1` AS (
  SELECT
    `customer`.`country` AS `sb_k0`,
    count(`order`.`id`) AS `sb_v`
  FROM
    `main`.`orders` AS `order`
    LEFT JOIN `main`.`customers` AS `customer` ON `order`.`customer_id` = `customer`.`id`
  WHERE
    `order`.`status` <> ?
  GROUP BY
    `customer`.`country`
)
SELECT
  `sb_keys`.`sb_k0` AS `customer.country`,
  (CAST(`sb_m0`.`sb_v` AS DOUBLE) / nullif(coalesce(`sb_m1`.`sb_v`, 0), 0)) AS `revenue_per_order`
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
  LEFT JOIN `sb_m1` ON (`sb_keys`.`sb_k0` IS NOT DISTINCT FROM `sb_m1`.`sb_k0`) ORDER BY `customer.country` ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","cancelled"]
