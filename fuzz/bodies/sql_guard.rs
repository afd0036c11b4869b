//! The free-SQL checks on arbitrary text in every dialect: the guard, then
//! (for what it admits) the column and PII analysis against a catalog with
//! PII columns, then the rewrite that reads every table through a view (the
//! masking policy and query_sql's time range). A parsed query or a refusal,
//! never a panic or a stack overflow.
//!
//! The body of `fuzz_targets/sql_guard.rs`; `tests/it/fuzz_regressions.rs`
//! compiles it too and replays the seeds and regressions through it on
//! stable, so a target that stops compiling fails `cargo test`.

use std::sync::OnceLock;

use schemabrain::catalog::{Catalog, ColumnInfo, TableInfo};
use schemabrain::model::PiiPolicy;
use schemabrain::provider::columns;
use schemabrain::provider::guard::{check, DIALECTS};
use schemabrain::provider::views::{mask_sql, read_through, TableView};

fn catalog() -> &'static Catalog {
    static C: OnceLock<Catalog> = OnceLock::new();
    C.get_or_init(|| {
        let table = |name: &str, cols: &[&str]| {
            let columns = cols.iter().map(|c| ColumnInfo { name: c.to_string(), data_type: "VARCHAR".into(), nullable: true, comment: None, stats: None }).collect();
            (format!("main.{name}"), TableInfo { schema: "main".into(), name: name.into(), columns, ..Default::default() })
        };
        Catalog {
            tables: [table("customers", &["id", "email", "ssn", "country", "date_of_birth"]), table("orders", &["id", "customer_id", "amount"])].into_iter().collect(),
            ..Default::default()
        }
    })
}

/// Every table read through a view: masked e-mail, a period on customers.
fn views() -> &'static std::collections::BTreeMap<String, TableView> {
    static V: OnceLock<std::collections::BTreeMap<String, TableView>> = OnceLock::new();
    V.get_or_init(|| {
        catalog()
            .tables
            .iter()
            .map(|(key, t)| {
                let items = t.columns.iter().map(|c| if c.name == "email" { format!("{} AS email", mask_sql(schemabrain::model::MaskMethod::Hash, "email", "duckdb", "00")) } else { c.name.clone() }).collect();
                (key.clone(), TableView { items, filter: (t.name == "customers").then(|| "date_of_birth >= CAST('2024-01-01' AS TIMESTAMP)".to_string()) })
            })
            .collect()
    })
}

pub fn run(data: &[u8]) {
    let _ = admitted(data);
}

/// The statement's text (sqlparser's) and its dialect when both the guard
/// and the column check admit it (then also read through the views, which
/// must not panic either): what `tests/it/fuzz_regressions.rs` runs on
/// DuckDB over tables whose blocked column (`customers.ssn`, a national id:
/// the catastrophic floor) raises an error when read, so an admitted
/// statement that reads it fails the test.
pub fn admitted(data: &[u8]) -> Option<(&'static str, String)> {
    let (&d, rest) = data.split_first()?;
    let sql = std::str::from_utf8(rest).ok()?;
    let dialect = DIALECTS[d as usize % DIALECTS.len()];
    let mut statement = check(sql, dialect).ok()?;
    columns::check(&statement, catalog(), &PiiPolicy::default()).ok()?;
    let text = statement.to_string();
    let _ = read_through(&mut statement, catalog(), views(), dialect);
    Some((dialect, text))
}
