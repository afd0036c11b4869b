//! `schemabrain index` (issue 13): the demo warehouse indexed three ways
//! (DuckDB with its foreign keys dropped, so names must find the joins;
//! Postgres with declared keys; a Parquet directory with no keys at all)
//! gives the entities, identities, joins and cardinalities of the demo's
//! hand-written model, no more; an inferred join answers like hand-written
//! SQL; re-indexing keeps hand edits; PII is tagged from names and values.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value as Json};

use schemabrain::engine::{self, Limits};
use schemabrain::index::{self, write};
use schemabrain::project::Project;
use schemabrain::tools::{Introspect, Session, SessionOptions};

use crate::common::{demo_project, demo_warehouse};

const LIMITS: Limits = Limits { max_rows: 1000, timeout: Duration::from_secs(120) };

/// The demo warehouse copied with its primary keys but without a single
/// foreign key.
fn warehouse_without_foreign_keys() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name("index-nofk"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("nofk.duckdb");
    let ddl = std::fs::read_to_string(crate::common::repo("semantics/demo/warehouse.sql")).unwrap();
    let c = duckdb::Connection::open(&path).unwrap();
    let mut tables = Vec::new();
    for stmt in ddl.split(';').filter_map(|s| s.find("CREATE TABLE main.").map(|i| &s[i..])) {
        let mut lines: Vec<String> = Vec::new();
        for line in stmt.lines() {
            match line.find(" REFERENCES ") {
                Some(i) => lines.push(format!("{}{}", &line[..i], if line.trim_end().ends_with(',') { "," } else { "" })),
                None => lines.push(line.to_string()),
            }
        }
        let text = lines.join("\n");
        assert!(!text.contains("REFERENCES"));
        c.execute_batch(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        tables.push(stmt["CREATE TABLE main.".len()..].split_whitespace().next().unwrap().to_string());
    }
    assert!(tables.len() >= 9, "{tables:?}");
    c.execute_batch(&format!("ATTACH '{}' AS src (READ_ONLY)", demo_warehouse().display())).unwrap();
    for t in &tables {
        c.execute_batch(&format!("INSERT INTO main.{t} SELECT * FROM src.main.{t}")).unwrap();
    }
    c.execute_batch("DETACH src").unwrap();
    path
}

/// Indexes `source` into a fresh directory through the library (as
/// `schemabrain index` does; heldout.rs indexes its databases with it too).
pub fn index_into(source: &str, schemas: &[String], tag: &str) -> PathBuf {
    let engine = engine::open(source).unwrap_or_else(|e| panic!("{source}: {e}"));
    let indexed = index::run(engine.as_ref(), schemas, LIMITS, 2026, &mut |_| {}).expect("indexes");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name(tag));
    let (files, _) = write::render(&indexed.draft, "indexed", source, engine.dialect().name);
    write::write_project(&out, &files).expect("writes");
    indexed.catalog.save_snapshot(&out).expect("snapshot");
    out
}

/// The inferred model has the demo's entities (by table), identities and
/// joins (names, keys, cardinalities), and nothing more.
fn assert_matches_demo(dir: &Path) {
    let inferred = Project::open(dir).unwrap_or_else(|d| panic!("the indexed project loads:\n{d}"));
    let (mine, demo) = (&inferred.model, &demo_project().model);
    let entities = |m: &schemabrain::model::SemanticModel| -> BTreeSet<(String, String, Vec<String>)> {
        m.entities.values().map(|e| (e.name.clone(), e.table.table.clone(), e.identity.clone())).collect()
    };
    assert_eq!(entities(mine), entities(demo), "entities, tables and identities");
    let joins = |m: &schemabrain::model::SemanticModel| -> BTreeSet<String> {
        m.joins
            .values()
            .map(|j| {
                let on: Vec<String> = j.on.iter().map(|k| format!("{}={}", k.source, k.target)).collect();
                format!("{}: {} -> {} on {} ({:?})", j.name, j.source_entity, j.target_entity, on.join(","), j.cardinality)
            })
            .collect()
    };
    assert_eq!(joins(mine), joins(demo), "joins, keys and cardinalities (no extra joins)");
    for j in mine.joins.values() {
        assert_eq!(j.origin.as_str(), "suggested");
        let p = j.provenance.as_ref().expect("provenance");
        assert_eq!(p.validation_state.as_deref(), Some("draft"));
        assert!(!p.evidence.is_empty());
    }
}

#[test]
fn duckdb_without_foreign_keys_is_joined_by_names_verified_on_the_data() {
    let warehouse = warehouse_without_foreign_keys();
    let source = format!("duckdb:{}", warehouse.display());
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name("index-cli"));
    // Through the binary, as a user runs it.
    let run = |extra: &[&str]| {
        let mut args = vec!["index", "--source", &source, "--out", out.to_str().unwrap(), "--schema", "main"];
        args.extend_from_slice(extra);
        Command::new(env!("CARGO_BIN_EXE_schemabrain")).args(&args).output().expect("binary runs")
    };
    let first = run(&["--json"]);
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(first.status.success(), "exit 0: {stdout}\n{}", String::from_utf8_lossy(&first.stderr));
    let summary: Json = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("one JSON document ({e}): {stdout}"));
    assert_eq!(summary["ok"], true);
    assert_eq!(summary["entities"], 9, "{summary:#}");
    assert!(first.stderr.is_empty() || !String::from_utf8_lossy(&first.stderr).contains("indexing ["), "no progress bar with --json");
    assert_matches_demo(&out);
    let joins_by_name: Vec<String> = Project::open(&out).unwrap().model.joins.values().map(|j| j.provenance.as_ref().unwrap().inference_method.clone().unwrap()).collect();
    assert!(joins_by_name.iter().all(|m| m == "name_match"), "no keys were declared: {joins_by_name:?}");

    // An inferred join and a month grain answer like hand-written SQL.
    let project = Project::open(&out).unwrap();
    let metric = "order_amount_sum";
    assert!(project.model.metrics.contains_key(metric), "{:?}", project.model.metrics.keys().collect::<Vec<_>>());
    let options = SessionOptions { source: Some(source.clone()), audit: false, introspect: Introspect::Always, require_engine: true, ..SessionOptions::default() };
    let session = Session::open(project, options).expect("serve opens the indexed project");
    let env = session.call("get_metric", &json!({"name": metric, "group_by": ["customer.segment"], "time_grain": "month", "limit": 10000, "response_format": "detailed"}));
    assert_eq!(env.status().as_str(), "success", "{}", serde_json::to_string(&env).unwrap());
    let rows: Vec<Vec<Json>> = serde_json::from_value(env.data().unwrap()["rows"].clone()).unwrap();
    let c = duckdb::Connection::open_with_flags(&warehouse, duckdb::Config::default().access_mode(duckdb::AccessMode::ReadOnly).unwrap()).unwrap();
    let mut stmt = c
        .prepare(
            "SELECT c.segment, strftime(date_trunc('month', o.ordered_at), '%Y-%m'), CAST(SUM(o.amount) AS VARCHAR) \
             FROM main.orders o JOIN main.customers c ON c.id = o.customer_id GROUP BY 1, 2",
        )
        .unwrap();
    let expected: BTreeSet<(String, String, String)> =
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).unwrap().map(Result::unwrap).collect();
    let got: BTreeSet<(String, String, String)> = rows
        .iter()
        .map(|r| {
            let month = r.iter().find_map(|v| v.as_str().filter(|s| s.len() >= 7 && s.as_bytes()[4] == b'-')).unwrap().get(..7).unwrap().to_string();
            let segment = r.iter().find_map(|v| v.as_str().filter(|s| !(s.len() >= 7 && s.as_bytes()[4] == b'-'))).unwrap().to_string();
            let amount = r.iter().find_map(|v| v.as_f64().map(|_| v.to_string()).or_else(|| v.as_str().filter(|s| s.parse::<f64>().is_ok()).map(str::to_string))).unwrap();
            (segment, month, amount)
        })
        .collect();
    assert_eq!(expected.len(), got.len());
    let norm = |s: &str| format!("{:.2}", s.parse::<f64>().unwrap());
    let e: BTreeSet<(String, String, String)> = expected.into_iter().map(|(a, b, c)| (a, b, norm(&c))).collect();
    let g: BTreeSet<(String, String, String)> = got.into_iter().map(|(a, b, c)| (a, b, norm(&c))).collect();
    assert_eq!(g, e, "revenue by segment and month over the inferred join");

    // Re-indexing keeps a hand edit, leaves a deleted file deleted, and reports both.
    let edited = out.join("joins/order_customer.yaml");
    let text = std::fs::read_to_string(&edited).unwrap().replace("validation_state: draft", "validation_state: confirmed");
    std::fs::write(&edited, &text).unwrap();
    std::fs::remove_file(out.join("metrics/product_list_price_avg.yaml")).unwrap();
    let second = run(&["--json"]);
    let summary: Json = serde_json::from_slice(&second.stdout).unwrap();
    assert!(second.status.success(), "{summary:#}");
    assert_eq!(summary["files"]["kept"], json!(["joins/order_customer.yaml"]), "{summary:#}");
    assert_eq!(summary["files"]["skipped"], json!(["metrics/product_list_price_avg.yaml"]), "{summary:#}");
    assert_eq!(summary["files"]["added"], json!([]), "{summary:#}");
    assert_eq!(std::fs::read_to_string(&edited).unwrap(), text, "the hand edit survives");
    assert!(!out.join("metrics/product_list_price_avg.yaml").exists());
    // The text output prints the diff.
    let third = run(&[]);
    let text_out = String::from_utf8_lossy(&third.stdout);
    assert!(text_out.contains("= joins/order_customer.yaml (edited by hand: kept)"), "{text_out}");
}

#[test]
fn parquet_without_any_keys_finds_identities_and_joins_from_the_data() {
    let source = crate::engines_datafusion::demo_files("parquet");
    let out = index_into(&source, &[], "index-parquet");
    assert_matches_demo(&out);
    let p = Project::open(&out).unwrap();
    let inv = p.model.entity("inventory_snapshot").unwrap();
    assert_eq!(inv.identity, vec!["store_id".to_string(), "snapshot_date".to_string()], "composite identity found on the data");
    assert_eq!(inv.provenance.as_ref().unwrap().inference_method.as_deref(), Some("data_profile"));
    // A snapshot quantity is a balance, not summed over time.
    let units = p.model.metrics.get("inventory_snapshot_units_on_hand_sum").expect("units metric");
    assert!(units.non_additive.is_some(), "a balance is non-additive");
}

#[test]
fn postgres_with_declared_keys_uses_them() {
    let Some(schema) = crate::engines_servers::PgSchema::create("index") else { return };
    let duck = crate::common::demo_engine();
    let target = engine::export::Target::parse(&schema.url, Some(&schema.name)).unwrap();
    engine::export::export(&duck, "main", &target).expect("export to Postgres");
    let out = index_into(&schema.url, std::slice::from_ref(&schema.name), "index-pg");
    assert_matches_demo(&out);
    let p = Project::open(&out).unwrap();
    for j in p.model.joins.values() {
        assert_eq!(j.provenance.as_ref().unwrap().inference_method.as_deref(), Some("fk_constraint"), "{}", j.name);
    }
    assert_eq!(p.model.entity("order").unwrap().table.schema, schema.name);
}

#[test]
fn mariadb_with_declared_keys_uses_them() {
    let Some(db) = crate::engines_servers::MyDatabase::create("index") else { return };
    let target = engine::export::Target::parse(&db.url, Some(&db.name)).unwrap();
    engine::export::export(&crate::common::demo_engine(), "main", &target).expect("export to MySQL/MariaDB");
    let out = index_into(&db.url, std::slice::from_ref(&db.name), "index-my");
    assert_matches_demo(&out);
}

/// The index tags PII from names and from values: the demo's contact,
/// credential and birth-date columns by name, and a column with an
/// innocent name by its values.
#[test]
fn index_tags_pii_from_names_and_values() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name("index-pii"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("pii.duckdb");
    duckdb::Connection::open(&path)
        .unwrap()
        .execute_batch(
            "CREATE TABLE accounts (id INTEGER PRIMARY KEY, attr_1 VARCHAR, attr_2 VARCHAR, born DATE, product_name VARCHAR, amount DECIMAL(10,2));
             INSERT INTO accounts SELECT i, 'user' || i || '@example.com', '4111111111111111', DATE '1950-01-01' + INTERVAL (i * 97) DAY, 'widget', i * 1.5 FROM range(1, 200) t(i);
             CREATE TABLE tags (id INTEGER PRIMARY KEY, label VARCHAR);
             INSERT INTO tags VALUES (1, 'new'), (2, 'vip'), (3, 'churned');
             CREATE TABLE account_tags (account_id INTEGER, tag_id INTEGER);
             INSERT INTO account_tags SELECT i, 1 + i % 3 FROM range(1, 200) t(i) UNION ALL SELECT i, 2 FROM range(1, 50) t(i) WHERE i % 3 <> 1;",
        )
        .unwrap();
    let out = index_into(&format!("duckdb:{}", path.display()), &[], "index-pii-out");
    let p = Project::open(&out).unwrap();
    let tag = |c: &str| p.model.pii_policy.inferred.get(&format!("main.accounts.{c}")).map(|t| t.categories.clone());
    assert_eq!(tag("attr_1"), Some(vec!["contact".to_string()]), "e-mails found by value");
    assert_eq!(tag("attr_2"), Some(vec!["payment_card".to_string()]), "card numbers found by Luhn");
    assert_eq!(tag("born"), Some(vec!["demographic_protected".to_string()]), "birth dates found by range");
    assert_eq!(tag("product_name"), None);
    assert_eq!(tag("amount"), None);
    let evidence = p.model.pii_policy.inferred["main.accounts.attr_2"].evidence.clone().unwrap();
    assert!(evidence.contains("Luhn"), "{evidence}");
    // No file the index wrote (the snapshot, the model's YAML, the PII
    // policy with its evidence, anything else) keeps a sampled value of a
    // PII column, in any case.
    let walked = assert_no_sampled_value(&out, &["@example.com", "user1@", "4111111111111111"]);
    assert!(walked >= 3, "only {walked} files written");
    // Every tool reads the inferred tags: attr_2 is never named.
    let catalog = schemabrain::catalog::Catalog::load_snapshot(&out).unwrap().unwrap();
    let p = p.with_catalog(catalog).unwrap();
    let env = schemabrain::tools::call(&p, "describe_table", &json!({"qualified_name": "main.accounts"}), schemabrain::tools::Execution::DryRun);
    let text = serde_json::to_string(&env).unwrap();
    assert!(!text.contains("attr_2"), "{text}");
    // A junction table without keys: its identity is its two keys, and it
    // bridges accounts and tags with a many-to-one join to each.
    let bridge = p.model.entity("account_tag").expect("junction entity");
    assert_eq!(bridge.identity, vec!["account_id".to_string(), "tag_id".to_string()]);
    assert!(bridge.description.as_deref().unwrap_or("").contains("many-to-many"), "{:?}", bridge.description);
    let to: BTreeSet<String> = p.model.joins.values().filter(|j| j.source_entity == "account_tag").map(|j| j.target_entity.clone()).collect();
    assert_eq!(to, BTreeSet::from(["account".to_string(), "tag".to_string()]));
    // No measure over PII, and no row count missing.
    assert!(p.model.metrics.contains_key("account_count"));
    assert!(p.model.metrics.contains_key("account_amount_sum"));
}

/// Walks every file under `dir` (recursively, hidden ones too) and fails
/// when one holds any of `values`, compared case-insensitively. Returns how
/// many files it read.
fn assert_no_sampled_value(dir: &Path, values: &[&str]) -> usize {
    let mut walked = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).to_lowercase();
            walked += 1;
            for v in values {
                assert!(!text.contains(&v.to_lowercase()), "{} holds the sampled value {v:?}", path.display());
            }
        }
    }
    walked
}

/// `schemabrain graph` draws every join with its cardinality.
#[test]
fn graph_draws_the_join_graph() {
    for (format, needle) in [("mermaid", "order -->|\"order_customer (many_to_one)\"| customer"), ("dot", "\"order\" -> \"customer\" [label=\"order_customer (many_to_one)\"]")] {
        let out = Command::new(env!("CARGO_BIN_EXE_schemabrain"))
            .args(["graph", "--project", crate::common::repo("semantics/demo").to_str().unwrap(), "--format", format])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        assert!(text.contains(needle), "{format}: {text}");
        assert_eq!(text.matches("many_to_one").count(), demo_project().model.joins.len(), "{text}");
    }
}

/// `schemabrain check --source` on an indexed project: exit 0 while the
/// source matches, exit 1 with stable codes once it drifted.
#[test]
fn check_reports_drift_with_stable_codes() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name("index-drift"));
    std::fs::create_dir_all(&dir).unwrap();
    let (before, after) = (dir.join("before.duckdb"), dir.join("after.duckdb"));
    duckdb::Connection::open(&before)
        .unwrap()
        .execute_batch(
            "CREATE TABLE customers (id INTEGER PRIMARY KEY, segment VARCHAR NOT NULL, signup DATE NOT NULL);
             CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, amount DECIMAL(10,2) NOT NULL, ordered_at TIMESTAMP NOT NULL, note VARCHAR);
             INSERT INTO customers VALUES (1, 'a', DATE '2024-01-01'), (2, 'b', DATE '2024-02-01');
             INSERT INTO orders VALUES (1, 1, 10, TIMESTAMP '2024-03-01 10:00:00', NULL), (2, 1, 20, TIMESTAMP '2024-03-02 10:00:00', 'x'), (3, 2, 5, TIMESTAMP '2024-04-01 10:00:00', NULL);",
        )
        .unwrap();
    duckdb::Connection::open(&after)
        .unwrap()
        .execute_batch(
            "CREATE TABLE customers (id INTEGER PRIMARY KEY, segment VARCHAR, signup DATE NOT NULL);
             CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, amount VARCHAR NOT NULL, ordered_at TIMESTAMP NOT NULL);",
        )
        .unwrap();
    let out = index_into(&format!("duckdb:{}", before.display()), &[], "index-drift-out");
    let check = |db: &Path| {
        Command::new(env!("CARGO_BIN_EXE_schemabrain"))
            .args(["check", "--project", out.to_str().unwrap(), "--source", &format!("duckdb:{}", db.display()), "--json"])
            .output()
            .unwrap()
    };
    let same = check(&before);
    assert!(same.status.success(), "{}", String::from_utf8_lossy(&same.stdout));
    let drifted = check(&after);
    assert_eq!(drifted.status.code(), Some(1), "{}", String::from_utf8_lossy(&drifted.stdout));
    let doc: Json = serde_json::from_slice(&drifted.stdout).unwrap();
    let codes: BTreeSet<(String, String)> = doc["drift"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["code"].as_str().unwrap().to_string(), d["column"].as_str().unwrap_or("").to_string()))
        .collect();
    let want: BTreeSet<(String, String)> =
        [("nullability_changed", "segment"), ("column_missing", "note"), ("type_changed", "amount")].iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
    assert_eq!(codes, want, "{doc:#}");
}

/// The files of a project directory (relative path → bytes), without the
/// temporary files a killed run may leave.
pub(crate) fn tree(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, at: &Path, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(at) else { return };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if !p.to_string_lossy().ends_with(".tmp") {
                out.insert(p.strip_prefix(root).unwrap().display().to_string(), std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = std::collections::BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Crash safety (issue 18, item 5): `schemabrain index` killed (SIGKILL) at
/// random points of its run leaves only whole files, each byte-equal to
/// what a clean run writes (never torn), a manifest and snapshot that parse
/// when present; the next run completes, sweeps the temporary files and
/// ends with exactly the clean run's directory: files a killed run wrote
/// before its manifest are not mistaken for hand edits.
#[test]
fn index_killed_at_random_points_leaves_whole_files_and_converges() {
    let source = format!("duckdb:{}", warehouse_without_foreign_keys().display());
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name("index-kill"));
    // The same leaf name: the project is named after its directory.
    let (clean, killed) = (base.join("clean/project"), base.join("killed/project"));
    let index = |out: &Path| {
        let mut c = Command::new(crate::mcp_stdio::binary());
        c.args(["index", "--source", &source, "--out"]).arg(out).arg("--json").stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
        c
    };
    let started = std::time::Instant::now();
    assert!(index(&clean).status().unwrap().success());
    let full = started.elapsed();
    let want = tree(&clean);
    assert!(want.keys().any(|k| k.starts_with("entities/")), "{:?}", want.keys().collect::<Vec<_>>());
    let mut seed = 0x5eed_u64;
    let mut torn_checks = 0;
    for round in 0..6 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        // Killed a random few milliseconds after it starts writing files
        // (the first entity file newer than the spawn), or once it ran
        // twice as long as a clean run did.
        crate::common::kill_after_first_write(&mut index(&killed), &killed.join("entities"), full * 2, std::time::Duration::from_micros((seed >> 33) % 20_000));
        for (rel, bytes) in tree(&killed) {
            if rel.ends_with(".json") {
                serde_json::from_slice::<serde_json::Value>(&bytes).unwrap_or_else(|e| panic!("round {round}: {rel} is torn: {e}"));
            } else {
                assert_eq!(Some(&bytes), want.get(&rel), "round {round}: {rel} is neither absent nor the clean run's file");
            }
            torn_checks += 1;
        }
    }
    assert!(torn_checks > 0, "no kill landed after a file was written: the test checked nothing");
    assert!(index(&killed).status().unwrap().success(), "the run after the kills completes");
    let got = tree(&killed);
    let differs: Vec<&String> = want.keys().chain(got.keys()).filter(|k| !k.ends_with("snapshot.json") && want.get(*k) != got.get(*k)).collect();
    assert!(differs.is_empty(), "after the kills, the directory differs from a clean run's: {differs:?}");
    let leftovers: Vec<_> = std::fs::read_dir(killed.join("entities")).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().ends_with(".tmp")).collect();
    assert!(leftovers.is_empty(), "temporary files swept");
}
