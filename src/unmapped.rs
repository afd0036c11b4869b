//! What an import from another tool's format left out: the one item type
//! the dbt and Ossie imports list (the CLI prints each, and puts the list
//! in its JSON summary as `unmapped`), so both report alike.
//!
//! Architecture invariant: a leaf; depends on serde only, so `dbt` and
//! `ossie` share it without depending on each other.

use serde::Serialize;

/// Something of the imported definition that was not mapped, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unmapped {
    /// `semantic_model customers`, `metric revenue_mtd`, `dimension
    /// customers.signup_quarter_label` (dbt); `dataset orders`, `field
    /// orders.full_name`, `relationship r` (Ossie).
    pub item: String,
    pub reason: String,
}
