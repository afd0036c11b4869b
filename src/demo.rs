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
    ("entities/order.yaml", include_str!("../semantics/demo/entities/order.yaml")),
    ("entities/order_item.yaml", include_str!("../semantics/demo/entities/order_item.yaml")),
    ("entities/product.yaml", include_str!("../semantics/demo/entities/product.yaml")),
    ("entities/region.yaml", include_str!("../semantics/demo/entities/region.yaml")),
    ("entities/store.yaml", include_str!("../semantics/demo/entities/store.yaml")),
    ("joins/address_customer.yaml", include_str!("../semantics/demo/joins/address_customer.yaml")),
    ("joins/customer_region.yaml", include_str!("../semantics/demo/joins/customer_region.yaml")),
    ("joins/order_billing_address.yaml", include_str!("../semantics/demo/joins/order_billing_address.yaml")),
    ("joins/order_customer.yaml", include_str!("../semantics/demo/joins/order_customer.yaml")),
    ("joins/order_item_order.yaml", include_str!("../semantics/demo/joins/order_item_order.yaml")),
    ("joins/order_item_product.yaml", include_str!("../semantics/demo/joins/order_item_product.yaml")),
    ("joins/order_shipping_address.yaml", include_str!("../semantics/demo/joins/order_shipping_address.yaml")),
    ("joins/order_store.yaml", include_str!("../semantics/demo/joins/order_store.yaml")),
    ("joins/store_region.yaml", include_str!("../semantics/demo/joins/store_region.yaml")),
    ("metrics/avg_order_value.yaml", include_str!("../semantics/demo/metrics/avg_order_value.yaml")),
    ("metrics/campaign_cost.yaml", include_str!("../semantics/demo/metrics/campaign_cost.yaml")),
    ("metrics/customer_count.yaml", include_str!("../semantics/demo/metrics/customer_count.yaml")),
    ("metrics/item_revenue.yaml", include_str!("../semantics/demo/metrics/item_revenue.yaml")),
    ("metrics/largest_order.yaml", include_str!("../semantics/demo/metrics/largest_order.yaml")),
    ("metrics/order_count.yaml", include_str!("../semantics/demo/metrics/order_count.yaml")),
    ("metrics/revenue.yaml", include_str!("../semantics/demo/metrics/revenue.yaml")),
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

/// Builds `dir/warehouse.duckdb` unless it exists. Returns whether it built.
pub fn ensure_warehouse(dir: &Path) -> Result<bool, EngineError> {
    let path = dir.join(WAREHOUSE_FILE);
    if path.is_file() {
        return Ok(false);
    }
    DuckDbEngine::create_database(&path, WAREHOUSE_SQL)?;
    Ok(true)
}
