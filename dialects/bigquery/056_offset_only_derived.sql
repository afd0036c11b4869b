-- case: 056_offset_only_derived
-- dialect: bigquery
-- status: success
-- A derived metric whose only input is moved answers its moved buckets up to the last bucket of the unmoved rows (a CTE read only for that end), so no row lies past the data.
WITH `sb_m0` AS (
  SELECT
    TIMESTAMP_TRUNC(TIMESTAMP(DATETIME_ADD(DATETIME(`order`.`ordered_at`), INTERVAL 1 MONTH)), MONTH) AS `sb_k0`,
    sum(`order`.`amount`) AS `sb_v`
  FROM
    `main`.`orders` AS `order`
  WHERE
    `order`.`status` NOT IN (?)
  GROUP BY
    TIMESTAMP_TRUNC(TIMESTAMP(DATETIME_ADD(DATETIME(`order`.`ordered_at`), INTERVAL 1 MONTH)), MONTH)
), `sb_m1` AS (
  SELECT
    TIMESTAMP_TRUNC(`order`.`ordered_at`, MONTH) AS `sb_k0`,
    sum(`order`.`amount`) AS `sb_v`
  FROM
    `main`.`orders` AS `order`
  WHERE
    `order`.`status` NOT IN (?)
  GROUP BY
    TIMESTAMP_TRUNC(`order`.`ordered_at`, MONTH)
)
SELECT
  `sb_keys`.`sb_k0` AS `order.ordered_at__month`,
  `sb_m0`.`sb_v` AS `revenue_month_ago`
FROM
  (
    SELECT
      `sb_moved`.`sb_k0`
    FROM
      (
        SELECT
          `sb_m0`.`sb_k0`
        FROM
          `sb_m0`
      ) AS `sb_moved`
    WHERE
      `sb_moved`.`sb_k0` IS NULL OR EXISTS (SELECT 1 FROM `sb_m1` WHERE `sb_m1`.`sb_k0` >= `sb_moved`.`sb_k0`)
  ) AS `sb_keys`
  LEFT JOIN `sb_m0` ON (`sb_keys`.`sb_k0` IS NOT DISTINCT FROM `sb_m0`.`sb_k0`) ORDER BY `order.ordered_at__month` ASC NULLS LAST LIMIT 1000
-- params: ["cancelled","cancelled"]
