//! The TPC-H warehouse of `semantics/tpch`: the eight tables generated at a
//! scale factor by the `tpchgen` crate (the generator of `tpchgen-cli`, the
//! same rows as TPC's dbgen) and loaded into
//! - a DuckDB file, built once per scale factor and table definitions into a
//!   cache directory (CSV files written, read by DuckDB's `COPY … FROM`, then
//!   removed: the bundled DuckDB has no downloadable extensions, so its own
//!   `tpch` extension is not an option);
//! - a Postgres schema, streamed with `COPY … FROM STDIN`, the foreign keys
//!   added after the rows (one validation per key instead of one per row).
//!
//! Both get the constraints TPC-H declares (spec 1.4.2): every column NOT
//! NULL, the primary keys (partsupp and lineitem composite) and the foreign
//! keys lineitem → orders, part, supplier, partsupp; partsupp → part,
//! supplier; orders → customer; customer, supplier → nation; nation →
//! region. Text columns are plain VARCHAR (DuckDB ignores a length, and the
//! spec's CHAR(n) would pad values in Postgres); keys are INTEGER except the
//! order key, BIGINT (its sparse values pass 2^31 from scale factor ~90).
//!
//! Shared by tests/it/tpch.rs and benches/tpch.rs (each includes it by
//! `#[path]`); it panics on failure, as test setup does.

#![allow(dead_code)]

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use tpchgen::csv::{CustomerCsv, LineItemCsv, NationCsv, OrderCsv, PartCsv, PartSuppCsv, RegionCsv, SupplierCsv};
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator, PartSuppGenerator, RegionGenerator, SupplierGenerator,
};

/// One table as TPC-H declares it.
pub struct Table {
    pub name: &'static str,
    /// Name and SQL type, in the generator's column order.
    pub columns: &'static [(&'static str, &'static str)],
    pub primary_key: &'static [&'static str],
    /// Columns, referenced table, referenced columns.
    pub foreign_keys: &'static [(&'static [&'static str], &'static str, &'static [&'static str])],
}

const KEY: &str = "INTEGER";
const TEXT: &str = "VARCHAR";
const MONEY: &str = "DECIMAL(15,2)";

/// The eight tables, each after the tables it references (load order).
pub const TABLES: &[Table] = &[
    Table { name: "region", columns: &[("r_regionkey", KEY), ("r_name", TEXT), ("r_comment", TEXT)], primary_key: &["r_regionkey"], foreign_keys: &[] },
    Table {
        name: "nation",
        columns: &[("n_nationkey", KEY), ("n_name", TEXT), ("n_regionkey", KEY), ("n_comment", TEXT)],
        primary_key: &["n_nationkey"],
        foreign_keys: &[(&["n_regionkey"], "region", &["r_regionkey"])],
    },
    Table {
        name: "supplier",
        columns: &[
            ("s_suppkey", KEY),
            ("s_name", TEXT),
            ("s_address", TEXT),
            ("s_nationkey", KEY),
            ("s_phone", TEXT),
            ("s_acctbal", MONEY),
            ("s_comment", TEXT),
        ],
        primary_key: &["s_suppkey"],
        foreign_keys: &[(&["s_nationkey"], "nation", &["n_nationkey"])],
    },
    Table {
        name: "customer",
        columns: &[
            ("c_custkey", KEY),
            ("c_name", TEXT),
            ("c_address", TEXT),
            ("c_nationkey", KEY),
            ("c_phone", TEXT),
            ("c_acctbal", MONEY),
            ("c_mktsegment", TEXT),
            ("c_comment", TEXT),
        ],
        primary_key: &["c_custkey"],
        foreign_keys: &[(&["c_nationkey"], "nation", &["n_nationkey"])],
    },
    Table {
        name: "part",
        columns: &[
            ("p_partkey", KEY),
            ("p_name", TEXT),
            ("p_mfgr", TEXT),
            ("p_brand", TEXT),
            ("p_type", TEXT),
            ("p_size", "INTEGER"),
            ("p_container", TEXT),
            ("p_retailprice", MONEY),
            ("p_comment", TEXT),
        ],
        primary_key: &["p_partkey"],
        foreign_keys: &[],
    },
    Table {
        name: "partsupp",
        columns: &[("ps_partkey", KEY), ("ps_suppkey", KEY), ("ps_availqty", "INTEGER"), ("ps_supplycost", MONEY), ("ps_comment", TEXT)],
        primary_key: &["ps_partkey", "ps_suppkey"],
        foreign_keys: &[(&["ps_partkey"], "part", &["p_partkey"]), (&["ps_suppkey"], "supplier", &["s_suppkey"])],
    },
    Table {
        name: "orders",
        columns: &[
            ("o_orderkey", "BIGINT"),
            ("o_custkey", KEY),
            ("o_orderstatus", TEXT),
            ("o_totalprice", MONEY),
            ("o_orderdate", "DATE"),
            ("o_orderpriority", TEXT),
            ("o_clerk", TEXT),
            ("o_shippriority", "INTEGER"),
            ("o_comment", TEXT),
        ],
        primary_key: &["o_orderkey"],
        foreign_keys: &[(&["o_custkey"], "customer", &["c_custkey"])],
    },
    Table {
        name: "lineitem",
        columns: &[
            ("l_orderkey", "BIGINT"),
            ("l_partkey", KEY),
            ("l_suppkey", KEY),
            ("l_linenumber", "INTEGER"),
            ("l_quantity", MONEY),
            ("l_extendedprice", MONEY),
            ("l_discount", MONEY),
            ("l_tax", MONEY),
            ("l_returnflag", TEXT),
            ("l_linestatus", TEXT),
            ("l_shipdate", "DATE"),
            ("l_commitdate", "DATE"),
            ("l_receiptdate", "DATE"),
            ("l_shipinstruct", TEXT),
            ("l_shipmode", TEXT),
            ("l_comment", TEXT),
        ],
        primary_key: &["l_orderkey", "l_linenumber"],
        foreign_keys: &[
            (&["l_orderkey"], "orders", &["o_orderkey"]),
            (&["l_partkey"], "part", &["p_partkey"]),
            (&["l_suppkey"], "supplier", &["s_suppkey"]),
            (&["l_partkey", "l_suppkey"], "partsupp", &["ps_partkey", "ps_suppkey"]),
        ],
    },
];

/// `CREATE TABLE` of `t` in `schema`: NOT NULL columns, the primary key,
/// and the foreign keys when `with_foreign_keys` (DuckDB takes them only
/// here; Postgres gets them after the load, see `foreign_keys_ddl`).
pub fn create_table_ddl(t: &Table, schema: &str, with_foreign_keys: bool) -> String {
    let mut parts: Vec<String> = t.columns.iter().map(|(name, ty)| format!("{name} {ty} NOT NULL")).collect();
    parts.push(format!("PRIMARY KEY ({})", t.primary_key.join(", ")));
    if with_foreign_keys {
        for (cols, target, target_cols) in t.foreign_keys {
            parts.push(format!("FOREIGN KEY ({}) REFERENCES {schema}.{target} ({})", cols.join(", "), target_cols.join(", ")));
        }
    }
    format!("CREATE TABLE {schema}.{} (\n  {}\n)", t.name, parts.join(",\n  "))
}

/// `ALTER TABLE … ADD FOREIGN KEY` for every key of `t` (Postgres).
pub fn foreign_keys_ddl(t: &Table, schema: &str) -> Vec<String> {
    t.foreign_keys
        .iter()
        .map(|(cols, target, target_cols)| {
            format!("ALTER TABLE {schema}.{} ADD FOREIGN KEY ({}) REFERENCES {schema}.{target} ({})", t.name, cols.join(", "), target_cols.join(", "))
        })
        .collect()
}

/// What the data and its tables depend on: the scale factor, the generator
/// and the definitions above. A cache built from another one is rebuilt.
pub fn fingerprint(scale_factor: f64) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    "tpchgen 4.0".hash(&mut h);
    for t in TABLES {
        create_table_ddl(t, "s", true).hash(&mut h);
    }
    format!("sf{scale_factor}-{:016x}", h.finish())
}

/// The table's rows as CSV lines (header first), as `tpchgen` writes them.
pub fn csv_lines(table: &str, scale_factor: f64) -> Box<dyn Iterator<Item = String>> {
    fn with_header(header: &str, rows: impl Iterator<Item = String> + 'static) -> Box<dyn Iterator<Item = String>> {
        Box::new(std::iter::once(header.to_string()).chain(rows))
    }
    let sf = scale_factor;
    match table {
        "region" => with_header(RegionCsv::header(), RegionGenerator::new(sf, 1, 1).into_iter().map(|r| RegionCsv::new(r).to_string())),
        "nation" => with_header(NationCsv::header(), NationGenerator::new(sf, 1, 1).into_iter().map(|r| NationCsv::new(r).to_string())),
        "supplier" => with_header(SupplierCsv::header(), SupplierGenerator::new(sf, 1, 1).into_iter().map(|r| SupplierCsv::new(r).to_string())),
        "customer" => with_header(CustomerCsv::header(), CustomerGenerator::new(sf, 1, 1).into_iter().map(|r| CustomerCsv::new(r).to_string())),
        "part" => with_header(PartCsv::header(), PartGenerator::new(sf, 1, 1).into_iter().map(|r| PartCsv::new(r).to_string())),
        "partsupp" => with_header(PartSuppCsv::header(), PartSuppGenerator::new(sf, 1, 1).into_iter().map(|r| PartSuppCsv::new(r).to_string())),
        "orders" => with_header(OrderCsv::header(), OrderGenerator::new(sf, 1, 1).into_iter().map(|r| OrderCsv::new(r).to_string())),
        "lineitem" => with_header(LineItemCsv::header(), LineItemGenerator::new(sf, 1, 1).into_iter().map(|r| LineItemCsv::new(r).to_string())),
        other => panic!("no TPC-H table `{other}`"),
    }
}

/// The DuckDB warehouse at `scale_factor` under `cache_dir`, built if it is
/// not there yet (into a temporary name, renamed when complete, so an
/// interrupted build is never taken for a finished one).
pub fn ensure_duckdb(cache_dir: &Path, scale_factor: f64) -> PathBuf {
    let path = cache_dir.join(format!("tpch-{}.duckdb", fingerprint(scale_factor)));
    if path.exists() {
        return path;
    }
    std::fs::create_dir_all(cache_dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", cache_dir.display()));
    let building = cache_dir.join(format!("tpch-{}.building-{}", fingerprint(scale_factor), std::process::id()));
    let _ = std::fs::remove_file(&building);
    create_duckdb(&building, scale_factor);
    std::fs::rename(&building, &path).unwrap_or_else(|e| panic!("cannot rename {} to {}: {e}", building.display(), path.display()));
    path
}

/// Creates the DuckDB database at `path` (which must not exist yet).
pub fn create_duckdb(path: &Path, scale_factor: f64) {
    let csv_dir = path.with_extension("csv");
    std::fs::create_dir_all(&csv_dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", csv_dir.display()));
    let c = duckdb::Connection::open(path).unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
    for t in TABLES {
        c.execute_batch(&create_table_ddl(t, "main", true)).unwrap_or_else(|e| panic!("{}: {e}", t.name));
        let csv = csv_dir.join(format!("{}.csv", t.name));
        let mut out = std::io::BufWriter::new(std::fs::File::create(&csv).unwrap_or_else(|e| panic!("{}: {e}", csv.display())));
        for line in csv_lines(t.name, scale_factor) {
            writeln!(out, "{line}").unwrap_or_else(|e| panic!("{}: {e}", csv.display()));
        }
        out.flush().unwrap_or_else(|e| panic!("{}: {e}", csv.display()));
        drop(out);
        c.execute_batch(&format!("COPY main.{} FROM '{}' (FORMAT csv, HEADER true)", t.name, csv.display()))
            .unwrap_or_else(|e| panic!("loading {}: {e}", t.name));
        let _ = std::fs::remove_file(&csv);
    }
    c.execute_batch("CHECKPOINT").unwrap_or_else(|e| panic!("checkpoint: {e}"));
    let _ = std::fs::remove_dir(&csv_dir);
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime")
}

fn pg_error(e: tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    }
}

async fn pg_connect(url: &str) -> Result<tokio_postgres::Client, String> {
    let (client, connection) = tokio::time::timeout(std::time::Duration::from_secs(5), tokio_postgres::connect(url, tokio_postgres::NoTls))
        .await
        .map_err(|_| "timed out".to_string())?
        .map_err(pg_error)?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

/// Loads the eight tables at `scale_factor` into `schema` on the Postgres
/// server at `url` (the schema is created if missing; tables of these
/// names in it are replaced), with the keys above, then ANALYZEs them.
pub fn load_postgres(url: &str, schema: &str, scale_factor: f64) -> Result<(), String> {
    runtime().block_on(async {
        use futures_util::SinkExt;
        let client = pg_connect(url).await?;
        let mut ddl = format!("SET client_min_messages = warning; CREATE SCHEMA IF NOT EXISTS {schema};\n");
        for t in TABLES.iter().rev() {
            ddl.push_str(&format!("DROP TABLE IF EXISTS {schema}.{} CASCADE;\n", t.name));
        }
        for t in TABLES {
            ddl.push_str(&create_table_ddl(t, schema, false));
            ddl.push_str(";\n");
        }
        client.batch_execute(&ddl).await.map_err(pg_error)?;
        for t in TABLES {
            let sink = client.copy_in(&format!("COPY {schema}.{} FROM STDIN (FORMAT csv, HEADER true)", t.name)).await.map_err(pg_error)?;
            futures_util::pin_mut!(sink);
            let mut buf = String::with_capacity(1 << 20);
            for line in csv_lines(t.name, scale_factor) {
                buf.push_str(&line);
                buf.push('\n');
                if buf.len() >= 1 << 20 {
                    sink.send(bytes::Bytes::from(std::mem::take(&mut buf))).await.map_err(pg_error)?;
                }
            }
            sink.send(bytes::Bytes::from(buf)).await.map_err(pg_error)?;
            sink.finish().await.map_err(|e| format!("loading {}: {}", t.name, pg_error(e)))?;
        }
        let keys: Vec<String> = TABLES.iter().flat_map(|t| foreign_keys_ddl(t, schema)).collect();
        client.batch_execute(&format!("{};", keys.join(";\n"))).await.map_err(pg_error)?;
        let names: Vec<String> = TABLES.iter().map(|t| format!("{schema}.{}", t.name)).collect();
        client.batch_execute(&format!("ANALYZE {}", names.join(", "))).await.map_err(pg_error)
    })
}

/// `load_postgres` unless `schema` already holds this scale factor's
/// tables (its comment is the fingerprint, written last): the bench's
/// cache on the server. `Ok(true)` when it loaded.
pub fn ensure_postgres(url: &str, schema: &str, scale_factor: f64) -> Result<bool, String> {
    let wanted = fingerprint(scale_factor);
    let found: Option<String> = runtime().block_on(async {
        let client = pg_connect(url).await?;
        let row = client
            .query_opt("SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1", &[&schema])
            .await
            .map_err(pg_error)?;
        Ok::<_, String>(row.and_then(|r| r.get::<_, Option<String>>(0)))
    })?;
    if found.as_deref() == Some(wanted.as_str()) {
        return Ok(false);
    }
    load_postgres(url, schema, scale_factor)?;
    runtime().block_on(async {
        let client = pg_connect(url).await?;
        client.batch_execute(&format!("COMMENT ON SCHEMA {schema} IS '{wanted}'")).await.map_err(pg_error)
    })?;
    Ok(true)
}

/// A request of `tests/tpch/requests/`: get_metric arguments and the SQL
/// written by hand for them.
pub struct Case {
    /// The file name, e.g. `001_q1_pricing_summary.yaml`.
    pub name: String,
    pub request: serde_json::Value,
    /// For DuckDB, naming the tables unqualified.
    pub sql: String,
    /// Where Postgres needs another text.
    pub sql_postgres: Option<String>,
    /// Whether the request fixes the order of the rows.
    pub ordered: bool,
}

impl Case {
    /// The hand-written SQL for the engine of `dialect`.
    pub fn sql_for(&self, dialect: &str) -> &str {
        match (dialect, &self.sql_postgres) {
            ("postgres", Some(sql)) => sql,
            _ => &self.sql,
        }
    }
}

/// Every request of `tests/tpch/requests/`, in file order.
pub fn cases() -> Vec<Case> {
    /// The loader's JSON form marks each mapping's line as `__line`: not an argument.
    fn without_lines(v: serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(m) => m.into_iter().filter(|(k, _)| !k.starts_with("__")).map(|(k, v)| (k, without_lines(v))).collect(),
            serde_json::Value::Array(items) => items.into_iter().map(without_lines).collect(),
            other => other,
        }
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tpch/requests");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let doc = schemabrain::model::yaml_documents_as_json(&text).unwrap_or_else(|(line, e)| panic!("{}:{line}: {e}", file.display()));
            let spec = without_lines(doc.into_iter().next().unwrap_or_default());
            let name = file.file_name().unwrap_or_default().to_string_lossy().to_string();
            Case {
                sql: spec.get("sql").and_then(|s| s.as_str()).unwrap_or_else(|| panic!("{name}: no sql")).to_string(),
                sql_postgres: spec.get("sql_postgres").and_then(|s| s.as_str()).map(str::to_string),
                ordered: spec.get("ordered").and_then(|o| o.as_bool()).unwrap_or(false),
                request: spec.get("request").cloned().unwrap_or_else(|| panic!("{name}: no request")),
                name,
            }
        })
        .collect()
}

/// Whether two answers are the same: numbers within a relative 1e-9 (the
/// engines sum decimals exactly but average in floating point), rows in
/// any order unless `ordered`.
pub fn same_answer(a: &[Vec<serde_json::Value>], b: &[Vec<serde_json::Value>], ordered: bool) -> bool {
    fn same(x: &serde_json::Value, y: &serde_json::Value) -> bool {
        match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0),
            _ => x == y,
        }
    }
    /// Rows in a canonical order; numbers written rounded, so that values
    /// equal within the tolerance sort alike.
    fn canonical(rows: &[Vec<serde_json::Value>]) -> Vec<Vec<serde_json::Value>> {
        let mut rows = rows.to_vec();
        rows.sort_by_key(|r| r.iter().map(|v| v.as_f64().map_or_else(|| v.to_string(), |f| format!("{f:.6e}"))).collect::<Vec<_>>().join("\u{1}"));
        rows
    }
    let (a, b) = if ordered { (a.to_vec(), b.to_vec()) } else { (canonical(a), canonical(b)) };
    a.len() == b.len() && a.iter().zip(&b).all(|(r, s)| r.len() == s.len() && r.iter().zip(s).all(|(x, y)| same(x, y)))
}

/// Copies the `semantics/tpch` project into `dir` (replacing it), bound to
/// `schema` instead of `main`: the entities' tables and the PII policy's
/// column keys both name it.
pub fn write_project_in_schema(schema: &str, dir: &Path) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("semantics/tpch");
    let _ = std::fs::remove_dir_all(dir);
    for sub in ["entities", "joins", "metrics"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in std::fs::read_dir(source.join(sub)).unwrap_or_else(|e| panic!("{sub}: {e}")) {
            let file = entry.unwrap_or_else(|e| panic!("{sub}: {e}")).path();
            let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let text = text.replace("single_table: main.", &format!("single_table: {schema}."));
            std::fs::write(dir.join(sub).join(file.file_name().unwrap_or_default()), text).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        }
    }
    let policy = std::fs::read_to_string(source.join("pii_policy.yaml")).unwrap_or_else(|e| panic!("pii_policy.yaml: {e}"));
    std::fs::write(dir.join("pii_policy.yaml"), policy.replace("  main.", &format!("  {schema}."))).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
}

/// `url` with `schema` first on the search path, so that SQL naming the
/// tables unqualified (the hand-written SQL) reads them there.
pub fn url_with_search_path(url: &str, schema: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}options=-c%20search_path%3D{schema}")
}
