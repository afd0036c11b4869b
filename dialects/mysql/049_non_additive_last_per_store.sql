-- case: 049_non_additive_last_per_store
-- dialect: mysql
-- status: success
-- A balance (stock count) taken at each store's last count in the month, summed over stores, by region.
SELECT
  `sb_rows`.`sb_k0` AS `inventory_snapshot.snapshot_date__month`,
  `sb_rows`.`sb_k1` AS `region.name`,
  sum(`sb_rows`.`sb_m`) AS `units_on_hand`
FROM
  (
    SELECT
      CAST(CAST(DATE_FORMAT(`inventory_snapshot`.`snapshot_date`, '%Y-%m-01') AS DATETIME) AS DATE) AS `sb_k0`,
      `region`.`name` AS `sb_k1`,
      `inventory_snapshot`.`units_on_hand` AS `sb_m`,
      `inventory_snapshot`.`snapshot_date` AS `sb_t`,
      max(`inventory_snapshot`.`snapshot_date`) OVER (
        PARTITION BY CAST(CAST(DATE_FORMAT(`inventory_snapshot`.`snapshot_date`, '%Y-%m-01') AS DATETIME) AS DATE), `inventory_snapshot`.`store_id`
      ) AS `sb_w`
    FROM
      `main`.`inventory_snapshots` AS `inventory_snapshot`
      LEFT JOIN `main`.`stores` AS `store` ON `inventory_snapshot`.`store_id` = `store`.`id`
      LEFT JOIN `main`.`regions` AS `region` ON `store`.`region_id` = `region`.`id`
  ) AS `sb_rows`
WHERE
  `sb_rows`.`sb_t` = `sb_rows`.`sb_w`
GROUP BY
  `sb_rows`.`sb_k0`, `sb_rows`.`sb_k1` ORDER BY `sb_rows`.`sb_k0` IS NULL ASC, `inventory_snapshot.snapshot_date__month` ASC, `sb_rows`.`sb_k1` IS NULL ASC, `region.name` ASC LIMIT 1000
-- params: []
