//! The demo shop: a semantic model of a small retailer and a deterministic
//! generator for its DuckDB warehouse (≥100k orders, built in seconds).
//!
//! Owns the embedded copy of `semantics/demo/` (so an installed binary can
//! run the demo anywhere) and the build of the warehouse file.
//!
//! Architecture invariant: writes only into the directory it is given, and
//! never overwrites a definition file that is already there.

use std::path::Path;

use crate::engine::{DuckDbEngine, EngineError};

/// The warehouse file name inside the demo project (`source` in its
/// `schemabrain.yaml`).
pub const WAREHOUSE_FILE: &str = "warehouse.duckdb";

/// The generator: DuckDB SQL run as one batch on an empty database.
pub const WAREHOUSE_SQL: &str = include_str!("../semantics/demo/warehouse.sql");

/// Every file of `semantics/demo/` but the generator, by relative path.
/// A test checks this list against the directory.
pub const PROJECT_FILES: &[(&str, &str)] = &[
    ("entities/address.yaml", include_str!("../semantics/demo/entities/address.yaml")),
    ("entities/campaign_spend.yaml", include_str!("../semantics/demo/entities/campaign_spend.yaml")),
    ("entities/customer.yaml", include_str!("../semantics/demo/entities/customer.yaml")),
    ("entities/inventory_snapshot.yaml", include_str!("../semantics/demo/entities/inventory_snapshot.yaml")),
    ("entities/order.yaml", include_str!("../semantics/demo/entities/order.yaml")),
    ("entities/order_item.yaml", include_str!("../semantics/demo/entities/order_item.yaml")),
    ("entities/product.yaml", include_str!("../semantics/demo/entities/product.yaml")),
    ("entities/region.yaml", include_str!("../semantics/demo/entities/region.yaml")),
    ("entities/store.yaml", include_str!("../semantics/demo/entities/store.yaml")),
    ("joins/address_customer.yaml", include_str!("../semantics/demo/joins/address_customer.yaml")),
    ("joins/customer_region.yaml", include_str!("../semantics/demo/joins/customer_region.yaml")),
    ("joins/inventory_snapshot_store.yaml", include_str!("../semantics/demo/joins/inventory_snapshot_store.yaml")),
    ("joins/order_billing_address.yaml", include_str!("../semantics/demo/joins/order_billing_address.yaml")),
    ("joins/order_customer.yaml", include_str!("../semantics/demo/joins/order_customer.yaml")),
    ("joins/order_item_order.yaml", include_str!("../semantics/demo/joins/order_item_order.yaml")),
    ("joins/order_item_product.yaml", include_str!("../semantics/demo/joins/order_item_product.yaml")),
    ("joins/order_shipping_address.yaml", include_str!("../semantics/demo/joins/order_shipping_address.yaml")),
    ("joins/order_store.yaml", include_str!("../semantics/demo/joins/order_store.yaml")),
    ("joins/store_region.yaml", include_str!("../semantics/demo/joins/store_region.yaml")),
    ("metrics/average_item_price.yaml", include_str!("../semantics/demo/metrics/average_item_price.yaml")),
    ("metrics/avg_order_value.yaml", include_str!("../semantics/demo/metrics/avg_order_value.yaml")),
    ("metrics/campaign_cost.yaml", include_str!("../semantics/demo/metrics/campaign_cost.yaml")),
    ("metrics/cancellation_rate.yaml", include_str!("../semantics/demo/metrics/cancellation_rate.yaml")),
    ("metrics/cumulative_revenue.yaml", include_str!("../semantics/demo/metrics/cumulative_revenue.yaml")),
    ("metrics/customer_count.yaml", include_str!("../semantics/demo/metrics/customer_count.yaml")),
    ("metrics/gift_orders.yaml", include_str!("../semantics/demo/metrics/gift_orders.yaml")),
    ("metrics/item_revenue.yaml", include_str!("../semantics/demo/metrics/item_revenue.yaml")),
    ("metrics/largest_order.yaml", include_str!("../semantics/demo/metrics/largest_order.yaml")),
    ("metrics/median_order_value.yaml", include_str!("../semantics/demo/metrics/median_order_value.yaml")),
    ("metrics/order_count.yaml", include_str!("../semantics/demo/metrics/order_count.yaml")),
    ("metrics/p90_order_value.yaml", include_str!("../semantics/demo/metrics/p90_order_value.yaml")),
    ("metrics/revenue.yaml", include_str!("../semantics/demo/metrics/revenue.yaml")),
    ("metrics/revenue_growth_mom.yaml", include_str!("../semantics/demo/metrics/revenue_growth_mom.yaml")),
    ("metrics/revenue_month_ago.yaml", include_str!("../semantics/demo/metrics/revenue_month_ago.yaml")),
    ("metrics/revenue_month_to_date.yaml", include_str!("../semantics/demo/metrics/revenue_month_to_date.yaml")),
    ("metrics/revenue_per_order.yaml", include_str!("../semantics/demo/metrics/revenue_per_order.yaml")),
    ("metrics/revenue_rolling_3_months.yaml", include_str!("../semantics/demo/metrics/revenue_rolling_3_months.yaml")),
    ("metrics/revenue_vs_quarter_start.yaml", include_str!("../semantics/demo/metrics/revenue_vs_quarter_start.yaml")),
    ("metrics/signup_order_conversion.yaml", include_str!("../semantics/demo/metrics/signup_order_conversion.yaml")),
    ("metrics/store_count.yaml", include_str!("../semantics/demo/metrics/store_count.yaml")),
    ("metrics/units_on_hand.yaml", include_str!("../semantics/demo/metrics/units_on_hand.yaml")),
    ("metrics/units_sold.yaml", include_str!("../semantics/demo/metrics/units_sold.yaml")),
    ("pii_policy.yaml", include_str!("../semantics/demo/pii_policy.yaml")),
    ("schemabrain.yaml", include_str!("../semantics/demo/schemabrain.yaml")),
];

/// Writes the embedded model files that are missing from `dir`.
pub fn materialize(dir: &Path) -> std::io::Result<()> {
    for (rel, text) in PROJECT_FILES {
        let path = dir.join(rel);
        if !path.exists() {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(&path, text)?;
        }
    }
    Ok(())
}

/// Builds `dir/warehouse.duckdb` unless it exists and was built by this
/// generator (a fingerprint file beside it says which). Returns whether it built.
pub fn ensure_warehouse(dir: &Path) -> Result<bool, EngineError> {
    let path = dir.join(WAREHOUSE_FILE);
    let stamp = dir.join(".schemabrain/warehouse.fingerprint");
    let fingerprint = generator_fingerprint();
    if path.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|s| s.trim() == fingerprint) {
        return Ok(false);
    }
    let _ = std::fs::remove_file(&path);
    DuckDbEngine::create_database(&path, WAREHOUSE_SQL)?;
    let written = stamp.parent().map(std::fs::create_dir_all).transpose().and_then(|_| std::fs::write(&stamp, &fingerprint));
    if let Err(e) = written {
        tracing::warn!("could not record the warehouse fingerprint: {e}");
    }
    Ok(true)
}

/// FNV-1a of the generator: stable across builds and platforms.
pub fn generator_fingerprint() -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for b in WAREHOUSE_SQL.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}
