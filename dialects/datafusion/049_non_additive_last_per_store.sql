-- case: 049_non_additive_last_per_store
-- dialect: datafusion
-- status: success
-- A balance (stock count) taken at each store's last count in the month, summed over stores, by region.
SELECT
  "sb_rows"."sb_k0" AS "inventory_snapshot.snapshot_date__month",
  "sb_rows"."sb_k1" AS "region.name",
  sum("sb_rows"."sb_m") AS "units_on_hand"
FROM
  (
    SELECT
      CAST(date_trunc('month', "inventory_snapshot"."snapshot_date") AS DATE) AS "sb_k0",
      "region"."name" AS "sb_k1",
      "inventory_snapshot"."units_on_hand" AS "sb_m",
      "inventory_snapshot"."snapshot_date" AS "sb_t",
      max("inventory_snapshot"."snapshot_date") OVER (
        PARTITION BY CAST(date_trunc('month', "inventory_snapshot"."snapshot_date") AS DATE), "inventory_snapshot"."store_id"
      ) AS "sb_w"
    FROM
      "main"."inventory_snapshots" AS "inventory_snapshot"
      LEFT JOIN "main"."stores" AS "store" ON "inventory_snapshot"."store_id" = "store"."id"
      LEFT JOIN "main"."regions" AS "region" ON "store"."region_id" = "region"."id"
  ) AS "sb_rows"
WHERE
  "sb_rows"."sb_t" = "sb_rows"."sb_w"
GROUP BY
  "sb_rows"."sb_k0", "sb_rows"."sb_k1" ORDER BY "inventory_snapshot.snapshot_date__month" ASC NULLS LAST, "region.name" ASC NULLS LAST LIMIT 1000
-- params: []
