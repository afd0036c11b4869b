-- case: 024_two_metrics_time_aligned
-- dialect: mysql
-- status: success
-- Metrics with different time dimensions share a metric_time bucket.
WITH `sb_m0` AS (
  SELECT
    CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME) AS `sb_k0`,
    sum(`order`.`amount`) AS `sb_v`
  FROM
    `main`.`orders` AS `order`
  WHERE
    `order`.`status` NOT IN (?)
  GROUP BY
    CAST(DATE_FORMAT(`order`.`ordered_at`, '%Y-%m-01') AS DATETIME)
), `sb_m1` AS (
  SELECT
    CAST(CAST(CAST(DATE_FORMAT(`campaign_spend`.`spent_on`, '%Y-%m-01') AS DATETIME) AS DATE) AS DATETIME) AS `sb_k0`,
    sum(`campaign_spend`.`cost`) AS `sb_v`
  FROM
    `main`.`campaign_spend` AS `campaign_spend`
  GROUP BY
    CAST(CAST(CAST(DATE_FORMAT(`campaign_spend`.`spent_on`, '%Y-%m-01') AS DATETIME) AS DATE) AS DATETIME)
)
SELECT
  `sb_keys`.`sb_k0` AS `metric_time__month`,
  `sb_m0`.`sb_v` AS `revenue`,
  `sb_m1`.`sb_v` AS `campaign_cost`
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
  LEFT JOIN `sb_m0` ON `sb_keys`.`sb_k0` <=> `sb_m0`.`sb_k0`
  LEFT JOIN `sb_m1` ON `sb_keys`.`sb_k0` <=> `sb_m1`.`sb_k0` ORDER BY `sb_keys`.`sb_k0` IS NULL ASC, `metric_time__month` ASC LIMIT 1000
-- params: ["cancelled"]
