//! Apache Ossie (the Open Semantic Interchange, `github.com/apache/ossie`)
//! read into a schemabrain project and written from one.
//!
//! `schemabrain import ossie FILE` maps an Ossie model (YAML or JSON,
//! versions 0.1.x and the 0.2 draft): datasets become entities, their
//! `primary_key` the identity; relationships (`from` the many side, `to`
//! the one side) become `many_to_one` joins; fields become declared
//! columns (a plain column, an alias of one, or a computed column when the
//! expression is more than a column); `dimension.is_time` (or a temporal
//! `datatype`) gives metrics anchored there their time dimension; metrics
//! whose aggregate expression can be read become simple, ratio or derived
//! metrics. Whatever cannot be mapped is listed with its reason (the CLI
//! then exits 1), never dropped silently. `ai_context` feeds descriptions
//! (which search reads); other vendors' `custom_extensions` are kept in
//! `ossie_extensions.json` beside the project and written back on export.
//!
//! `schemabrain export ossie` writes a project as Ossie `0.2.0.dev0`: what
//! Ossie says natively (datasets, keys, fields, relationships, an SQL
//! aggregate per metric) plus, under vendor `SCHEMABRAIN`, every key of
//! our definitions Ossie cannot say (cardinality, grains, time
//! dimensions, column types, metric types, PII policy), so importing our
//! own export gives the same project back. Metrics Ossie's SQL cannot say
//! (cumulative, conversion, time offsets, balances) are written only in
//! the model's extension, never as a nearest aggregate that other tools
//! would answer with another number.
//!
//! Architecture invariant: pure over text and the model; no engine (the
//! CLI measures relationships on the data when it is given a source), no
//! dependency on `dbt`, `tools` or `sql`.

use std::collections::BTreeMap;

mod aggregate;
mod export;
mod import;
mod read;
mod yaml_out;

pub use export::{export_project, ExportError};
pub use import::{import, Imported, Options, Relationship};
pub use read::ReadError;
pub use yaml_out::to_yaml;

/// The vendor name our own extensions are written under.
pub const VENDOR: &str = "SCHEMABRAIN";

/// The version `export` declares: the current draft, whose `vendor_name`
/// is free-form (0.1.1's is a closed list without ours).
pub const EXPORT_VERSION: &str = "0.2.0.dev0";

/// The side file holding other vendors' `custom_extensions` of an imported
/// model (the loader reads only the model's directories; export reads it).
pub const EXTENSIONS_FILE: &str = "ossie_extensions.json";

pub use crate::unmapped::Unmapped;

/// Other vendors' extensions, by the item that carried them
/// (`model`, `dataset orders`, `field orders.amount`, `relationship r`, `metric m`).
pub type Extensions = BTreeMap<String, Vec<serde_json::Value>>;
