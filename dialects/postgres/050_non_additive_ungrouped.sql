-- case: 050_non_additive_ungrouped
-- dialect: postgres
-- status: success
-- A balance without a grain keeps each store's last count over the whole range.
SELECT
  sum("sb_rows"."sb_m") AS "units_on_hand"
FROM
  (
    SELECT
      "inventory_snapshot"."units_on_hand" AS "sb_m",
      "inventory_snapshot"."snapshot_date" AS "sb_t",
      max("inventory_snapshot"."snapshot_date") OVER (
        PARTITION BY "inventory_snapshot"."store_id"
      ) AS "sb_w"
    FROM
      "main"."inventory_snapshots" AS "inventory_snapshot"
  ) AS "sb_rows"
WHERE
  "sb_rows"."sb_t" = "sb_rows"."sb_w" LIMIT 1000
-- params: []
