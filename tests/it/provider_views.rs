//! Tables read through views (issue 17): the policy's `masking` on free SQL
//! (query_sql, materialize_sql, create_view) and preview_masked, checked
//! against direct reads of the warehouse on DuckDB and Postgres; the whole
//! adversarial corpus run again under masking with no raw PII value in any
//! answer; and query_sql's `time_range`, checked against hand-written
//! filters, with paging through a period.

use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

use schemabrain::engine::{self, Engine, PostgresEngine};
use schemabrain::project::Project;
use schemabrain::sql::CompiledSql;

use crate::common::{demo_engine, demo_project_with_catalog, demo_warehouse, limits};
use crate::engines_servers::PgSchema;
use crate::provider::{all_pages, as_multiset, corpus, direct, number, outcome, pii_values, session, strings, writer};

/// Contact columns hashed, e-mail showing its domain, phone its last four;
/// the credential under a rule that would show part of it (ignored: a
/// credential is only ever redacted or hashed, so it stays refused);
/// date_of_birth without a rule (still count-only).
const MASKING: &str = "masking:\n  contact: hash\n  main.customers.email: email_domain\n  main.customers.phone: last4\n  main.customers.password_hash: last4\n";

fn scratch_dir(tag: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{tag}-{}", uuid::Uuid::new_v4().simple()))
}

/// The demo project in `schema`, with the masking above.
fn masked_project(schema: &str, dir: &Path, catalog: schemabrain::catalog::Catalog) -> Project {
    let _ = crate::cross_engine::demo_project_in(schema, dir);
    let policy = dir.join("pii_policy.yaml");
    let text = std::fs::read_to_string(&policy).unwrap();
    std::fs::write(&policy, format!("{text}{MASKING}")).unwrap();
    Project::open_declared(dir).unwrap_or_else(|d| panic!("{d}")).with_catalog(catalog).unwrap_or_else(|d| panic!("{d}"))
}

fn data(env: &schemabrain::envelope::Envelope) -> Json {
    env.data().unwrap_or_else(|| panic!("{}", serde_json::to_string(env).unwrap())).clone()
}

fn text(v: &Json) -> Option<String> {
    match v {
        Json::Null => None,
        Json::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// What each mask must show of a raw value.
fn email_domain(raw: &str) -> String {
    match raw.find('@') {
        Some(at) => format!("***{}", &raw[at..]),
        None => "***".into(),
    }
}

fn last4(raw: &str) -> String {
    let chars: Vec<char> = raw.chars().collect();
    if chars.len() > 8 {
        format!("***{}", chars[chars.len() - 4..].iter().collect::<String>())
    } else {
        "***".into()
    }
}

fn is_md5(v: &str) -> bool {
    v.len() == 32 && v.chars().all(|c| c.is_ascii_hexdigit())
}

/// query_sql's masked columns against the raw rows, read directly.
fn assert_masked_rows(got: &Json, raw: &[Vec<Json>]) {
    let rows = got["rows"].as_array().unwrap();
    assert_eq!(rows.len(), raw.len());
    assert!(!rows.is_empty());
    for (row, truth) in rows.iter().zip(raw) {
        assert_eq!(text(&row[0]), text(&truth[0]), "ids in the same order");
        let expect = |i: usize, f: &dyn Fn(&str) -> String| text(&truth[i]).map(|r| f(&r));
        assert_eq!(text(&row[1]), expect(1, &email_domain), "email of {}", truth[0]);
        assert_eq!(text(&row[2]), expect(2, &last4), "phone of {}", truth[0]);
        match (text(&row[3]), text(&truth[3])) {
            (Some(h), Some(r)) => assert!(is_md5(&h) && h != r, "full_name {h}"),
            (a, b) => assert_eq!(a.is_none(), b.is_none(), "NULL stays NULL"),
        }
    }
}

#[test]
fn masked_columns_are_read_only_through_their_masks_on_duckdb() {
    let dir = scratch_dir("masked");
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("warehouse.duckdb");
    std::fs::copy(demo_warehouse(), &db).unwrap();
    let source = format!("duckdb:{}", db.display());
    let catalog = demo_engine().introspect().unwrap();
    let project = masked_project("main", &dir.join("project"), catalog);
    let s = writer(project, &source, Some("scratch"));
    let sql = "SELECT id, email, phone, full_name FROM main.customers ORDER BY id LIMIT 60";
    let env = s.call("query_sql", &json!({"sql": sql, "page_size": 100}));
    let got = data(&env);
    assert_masked_rows(&got, &direct(sql));
    let applied = &got["policy_applied"];
    assert_eq!(applied["policy_id"], "pii_policy");
    let methods: Vec<(String, String)> = applied["masked"].as_array().unwrap().iter().map(|m| (m["column"].as_str().unwrap().to_string(), m["method"].as_str().unwrap().to_string())).collect();
    for want in [("main.customers.email", "email_domain"), ("main.customers.phone", "last4"), ("main.customers.full_name", "hash")] {
        assert!(methods.contains(&(want.0.to_string(), want.1.to_string())), "{methods:?}");
    }
    let whole = serde_json::to_string(&env).unwrap();
    assert!(!whole.contains("password_hash"), "a catastrophic column is never named: {whole}");
    assert_eq!(got["sql"], "SELECT id, email, phone, full_name FROM main.customers ORDER BY id LIMIT 60", "the caller's statement is shown, not its views");

    // Equal values hash equally: counting and grouping work on the hash.
    let one = |sql: &str| -> f64 {
        let env = s.call("query_sql", &json!({"sql": sql}));
        number(&data(&env)["rows"][0][0])
    };
    let truth = |sql: &str| number(&direct(sql)[0][0]);
    assert_eq!(one("SELECT count(DISTINCT full_name) FROM main.customers"), truth("SELECT count(DISTINCT full_name) FROM main.customers"));
    let top = "SELECT full_name, count(*) AS n FROM main.customers GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1";
    let env = s.call("query_sql", &json!({"sql": top}));
    assert_eq!(number(&data(&env)["rows"][0][1]), truth("SELECT count(*) FROM main.customers GROUP BY full_name ORDER BY 1 DESC LIMIT 1"));
    // A filter meets the mask, not the value: probing for a known e-mail finds nothing.
    let known = text(&direct("SELECT email FROM main.customers WHERE email IS NOT NULL ORDER BY id LIMIT 1")[0][0]).unwrap();
    assert_eq!(one(&format!("SELECT count(*) FROM main.customers WHERE email = '{known}'")), 0.0);
    assert_eq!(one(&format!("SELECT count(*) FROM main.customers WHERE email = '{}'", email_domain(&known))), truth(&format!("SELECT count(*) FROM main.customers WHERE email LIKE '%{}'", &known[known.find('@').unwrap()..])));
    // Through a CTE, a join, a subquery and UNION the value is still masked.
    for sql in [
        "WITH c AS (SELECT id, email FROM main.customers) SELECT c.email FROM c JOIN main.orders o ON o.customer_id = c.id ORDER BY o.id LIMIT 20",
        "SELECT x.phone FROM (SELECT phone FROM main.customers) x LIMIT 20",
        "SELECT email FROM main.customers UNION SELECT full_name FROM main.customers",
        "SELECT customers.email FROM main.customers WHERE customers.id < 30",
        "SELECT c.* EXCLUDE (password_hash, date_of_birth) FROM main.customers c LIMIT 20",
    ] {
        let env = s.call("query_sql", &json!({"sql": sql, "page_size": 1000}));
        assert_eq!(env.status().as_str(), "success", "{sql}: {}", serde_json::to_string(&env).unwrap());
    }
    // Still refused: the credential (its rule would show part of it) and unmasked PII.
    for sql in ["SELECT password_hash FROM main.customers", "SELECT date_of_birth FROM main.customers", "SELECT * FROM main.customers", "SELECT c FROM main.customers c"] {
        let env = s.call("query_sql", &json!({"sql": sql}));
        assert_eq!(outcome(&env), "pii", "{sql}: {}", serde_json::to_string(&env).unwrap());
    }
    // A CTE named like a masked table could shadow it in one scope only: refused.
    let env = s.call("query_sql", &json!({"sql": "WITH customers AS (SELECT 1 AS email) SELECT email FROM customers"}));
    assert_eq!(outcome(&env), "invalid", "{}", serde_json::to_string(&env).unwrap());

    // The whole adversarial corpus under masking: no answered cell is a raw PII value.
    let values = pii_values(&demo_engine(), "main", "duckdb");
    let mut answered = 0;
    for case in corpus().into_iter().filter(|c| c.only.as_deref() != Some("postgres")) {
        let env = s.call("query_sql", &json!({"sql": case.sql.replace("{s}", "main"), "page_size": 200}));
        answered += usize::from(outcome(&env) == "ok");
        let mut all = Vec::new();
        strings(&serde_json::to_value(&env).unwrap(), &mut all);
        for v in all {
            assert!(!values.contains(&v), "line {}: an answer under masking holds a raw PII value\n  {}", case.line, case.sql.trim());
        }
    }
    assert!(answered > 60, "{answered} corpus cases answered under masking");

    // preview_masked shows what query_sql shows, and lists what it withholds.
    let env = s.call("preview_masked", &json!({"qualified_name": "main.customers", "rows": 5}));
    let preview = data(&env);
    let names: Vec<&str> = preview["columns"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    let at = |n: &str| names.iter().position(|x| *x == n).unwrap_or_else(|| panic!("{n} in {names:?}"));
    let q = data(&s.call("query_sql", &json!({"sql": "SELECT id, email, phone, full_name FROM main.customers ORDER BY id LIMIT 5"})));
    for (p, r) in preview["rows"].as_array().unwrap().iter().zip(q["rows"].as_array().unwrap()) {
        assert_eq!(p[at("id")], r[0]);
        assert_eq!((&p[at("email")], &p[at("phone")], &p[at("full_name")]), (&r[1], &r[2], &r[3]), "preview and query_sql mask alike");
    }
    let withheld: Vec<String> = preview["policy_applied"]["withheld"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap().to_string()).collect();
    assert!(withheld.contains(&"date_of_birth".to_string()) && withheld.len() == 2, "{withheld:?}");
    assert!(!serde_json::to_string(&env).unwrap().contains("password_hash"));
    let env = s.call("preview_masked", &json!({"qualified_name": "main.customers", "policy_id": "strict"}));
    assert_eq!(env.tool_error().map(|e| e.code().as_str()), Some("INVALID_INPUT"));
    assert_eq!(env.tool_error().unwrap().recovery().suggested_tool(), Some("preview_masked"));

    // Writes store what query_sql shows; a view cannot hold the hash's salt.
    let env = s.call("materialize_sql", &json!({"sql": "SELECT id, email, phone, full_name FROM main.customers", "table": "contacts"}));
    assert_eq!(env.status().as_str(), "success", "{}", serde_json::to_string(&env).unwrap());
    assert!(data(&env)["policy_applied"]["masked"].as_array().is_some_and(|m| !m.is_empty()));
    // A view over a table with a hashed column would hold the salt in its
    // definition, which anyone allowed to read the view's schema may read:
    // refused, even for the table's other columns.
    for sql in ["SELECT id, full_name FROM main.customers", "SELECT id, email FROM main.customers"] {
        let env = s.call("create_view", &json!({"sql": sql, "view": "names"}));
        assert_eq!(env.tool_error().map(|e| e.kind().as_str()), Some("policy_blocked"), "{}", serde_json::to_string(&env).unwrap());
        assert!(env.tool_error().unwrap().message().contains("materialize_sql"));
    }
    drop(s);
    let stored = engine::open(&source).unwrap();
    for table in ["scratch.contacts"] {
        let r = stored.run(&CompiledSql { sql: format!("SELECT * FROM {table}"), params: Vec::new(), dialect: "duckdb" }, schemabrain::engine::Limits { max_rows: 1_000_000, ..limits() }).unwrap();
        assert!(r.rows.len() > 1000);
        let mut cells = Vec::new();
        strings(&serde_json::to_value(&r.rows).unwrap(), &mut cells);
        assert!(cells.iter().all(|c| !values.contains(c)), "{table} stores a raw PII value");
    }
    drop(stored);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn masks_read_alike_on_postgres() {
    let Some(schema) = PgSchema::create("masking") else { return };
    let duck = demo_engine();
    let target = engine::export::Target::parse(&schema.url, Some(&schema.name)).unwrap();
    engine::export::export(&duck, "main", &target).expect("export to Postgres");
    let pg = PostgresEngine::connect(&schema.url).expect("connects");
    let catalog = pg.introspect().expect("introspects");
    let dir = scratch_dir(&schema.name);
    let s = session(masked_project(&schema.name, &dir, catalog), &schema.url, true);
    let sql = format!("SELECT id, email, phone, full_name FROM {}.customers ORDER BY id LIMIT 60", schema.name);
    let got = data(&s.call("query_sql", &json!({"sql": sql, "page_size": 100})));
    let raw = pg.run(&CompiledSql { sql: sql.clone(), params: Vec::new(), dialect: "postgres" }, limits()).unwrap().rows;
    assert_masked_rows(&got, &raw);
    // DuckDB and Postgres mask the same values alike (md5 of the same text).
    let preview = data(&s.call("preview_masked", &json!({"qualified_name": format!("{}.customers", schema.name), "rows": 3})));
    assert_eq!(preview["rows"].as_array().unwrap().len(), 3);
    let values = pii_values(&pg, &schema.name, "postgres");
    let mut all = Vec::new();
    strings(&preview, &mut all);
    strings(&got, &mut all);
    assert!(all.iter().all(|v| !values.contains(v)), "a raw PII value shown on Postgres");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn query_sql_time_ranges_restrict_the_table_the_period_is_about() {
    let w = demo_warehouse();
    let s = session(demo_project_with_catalog().clone(), &format!("duckdb:{}", w.display()), true);
    let march = json!({"start": "2024-03-01", "end": "2024-04-01"});
    let call = |sql: &str, range: Json| s.call("query_sql", &json!({"sql": sql, "time_range": range, "page_size": 1000}));
    let env = call("SELECT count(*), sum(amount) FROM main.orders", march.clone());
    let got = data(&env);
    let truth = direct("SELECT count(*), sum(amount) FROM main.orders WHERE ordered_at >= TIMESTAMP '2024-03-01' AND ordered_at < TIMESTAMP '2024-04-01'");
    assert_eq!(number(&got["rows"][0][0]), number(&truth[0][0]));
    assert!(number(&got["rows"][0][0]) > 0.0);
    assert!((number(&got["rows"][0][1]) - number(&truth[0][1])).abs() < 1e-6);
    assert_eq!(got["time_range"]["restricted"], json!([{"table": "main.orders", "column": "ordered_at"}]));

    // Two tables with a time dimension: the caller names the one the period is about.
    let join = "SELECT c.country, count(*) FROM main.orders o JOIN main.customers c ON c.id = o.customer_id GROUP BY 1 ORDER BY 1";
    let env = call(join, march.clone());
    assert_eq!(outcome(&env), "invalid", "{}", serde_json::to_string(&env).unwrap());
    let message = env.tool_error().unwrap().message().to_string();
    assert!(message.contains("main.orders.ordered_at") && message.contains("main.customers.signup_date"), "{message}");
    let truth = direct("SELECT c.country, count(*) FROM main.orders o JOIN main.customers c ON c.id = o.customer_id WHERE o.ordered_at >= TIMESTAMP '2024-03-01' AND o.ordered_at < TIMESTAMP '2024-04-01' GROUP BY 1 ORDER BY 1");
    for column in ["orders.ordered_at", "main.orders.ordered_at", "ordered_at"] {
        let range = json!({"start": "2024-03-01", "end": "2024-04-01", "column": column});
        let got = data(&call(join, range));
        assert_eq!(as_multiset(&got["rows"].as_array().unwrap().iter().map(|r| r.as_array().unwrap().clone()).collect::<Vec<_>>()), as_multiset(&truth), "{column}");
        assert_eq!(got["time_range"]["unrestricted"], json!(["main.customers"]), "{column}");
    }

    // Paging through a period returns every row once; a token is bound to its period.
    let ids = "SELECT id, status FROM main.orders";
    let (rows, pages, _) = all_pages(&s, "a", json!({"sql": ids, "time_range": march, "page_size": 400}));
    assert!(pages > 2, "{pages} pages");
    assert_eq!(as_multiset(&rows), as_multiset(&direct("SELECT id, status FROM main.orders WHERE ordered_at >= TIMESTAMP '2024-03-01' AND ordered_at < TIMESTAMP '2024-04-01'")));
    let first = data(&s.call("query_sql", &json!({"sql": ids, "time_range": march, "page_size": 400})));
    let token = first["page_token"].as_str().unwrap();
    let april = json!({"start": "2024-04-01", "end": "2024-05-01"});
    let env = s.call("query_sql", &json!({"sql": ids, "time_range": april, "page_size": 400, "page_token": token}));
    assert!(env.tool_error().is_some_and(|e| e.message().contains("another statement")), "{}", serde_json::to_string(&env).unwrap());

    // dry_run says what would be restricted; bad ranges are clear errors.
    let dry = data(&s.call("query_sql", &json!({"sql": ids, "time_range": march, "dry_run": true})));
    assert_eq!(dry["valid"], true);
    assert_eq!(dry["time_range"]["restricted"][0]["column"], "ordered_at");
    for (sql, range) in [
        ("SELECT count(*) FROM main.products", march.clone()),
        ("SELECT count(*) FROM main.orders", json!({"start": "2024-03-01' OR 1=1 --"})),
        ("SELECT count(*) FROM main.orders", json!({"start": "2024-03-01", "column": "status"})),
        ("SELECT count(*) FROM main.customers", json!({"start": "2024-03-01", "column": "date_of_birth"})),
        ("SELECT count(*) FROM main.orders", json!({})),
        ("WITH orders AS (SELECT 1 AS id) SELECT * FROM orders, main.orders", march.clone()),
    ] {
        let env = call(sql, range.clone());
        assert_eq!(outcome(&env), "invalid", "{sql} {range}: {}", serde_json::to_string(&env).unwrap());
    }
}

#[test]
fn the_masking_grammar_names_file_line_and_key() {
    let dir = scratch_dir("masking-grammar");
    let _ = crate::cross_engine::demo_project_in("main", &dir);
    let policy = dir.join("pii_policy.yaml");
    let text = std::fs::read_to_string(&policy).unwrap();
    let lines = text.lines().count();
    std::fs::write(&policy, format!("{text}masking:\n  contcat: hash\n  credential: last4\n  location: scramble\n  main.customers: redact\n")).unwrap();
    let err = Project::open_declared(&dir).err().expect("the policy is refused").to_string();
    for (line, key, says) in [
        (lines + 2, "masking.contcat", "did you mean `contact`"),
        (lines + 3, "masking.credential", "only be masked by redact or hash"),
        (lines + 4, "masking.location", "redact"),
        (lines + 5, "masking.main.customers", "neither a PII category"),
    ] {
        let at = format!("pii_policy.yaml:{line}: key `{key}`");
        assert!(err.lines().any(|l| l.contains(&at) && l.contains(says)), "{at} … {says} in:\n{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_substrait_plan_runs_as_the_sql_it_stands_for_and_no_side_door() {
    let w = demo_warehouse();
    let project = demo_project_with_catalog().clone();
    let catalog = project.catalog.clone().unwrap();
    let s = session(project, &format!("duckdb:{}", w.display()), true);
    // The plan of a SELECT (DataFusion's producer), run through query_plan,
    // answers as the SELECT does through a direct read.
    let sql = "SELECT status, count(*) AS n, sum(amount) AS revenue FROM main.orders WHERE id <= 5000 GROUP BY status ORDER BY status";
    let plan = schemabrain::engine::substrait::sql_to_plan(sql, &catalog).unwrap();
    let got = data(&s.call("query_plan", &json!({"substrait": plan, "page_size": 100})));
    assert_eq!(got["from"], "substrait");
    let rows: Vec<Vec<Json>> = got["rows"].as_array().unwrap().iter().map(|r| r.as_array().unwrap().clone()).collect();
    let truth = direct(sql);
    assert_eq!(rows.len(), truth.len());
    for (a, b) in rows.iter().zip(&truth) {
        assert_eq!(text(&a[0]), text(&b[0]));
        assert_eq!(number(&a[1]), number(&b[1]));
        assert!((number(&a[2]) - number(&b[2])).abs() < 1e-6);
    }
    // dry_run shows the SQL it became; a time range applies as in query_sql.
    let dry = data(&s.call("query_plan", &json!({"substrait": plan, "dry_run": true, "time_range": {"start": "2024-01-01"}})));
    assert_eq!(dry["valid"], true);
    assert!(dry["sql"].as_str().unwrap().contains("orders"), "{dry}");
    assert_eq!(dry["time_range"]["restricted"][0]["column"], "ordered_at");
    // PII through a plan is refused as through SQL; unknown tables and junk are clear errors.
    let leak = schemabrain::engine::substrait::sql_to_plan("SELECT email FROM main.customers", &catalog).unwrap();
    assert_eq!(outcome(&s.call("query_plan", &json!({"substrait": leak}))), "pii");
    let text_of = |v: &Json| serde_json::to_string(v).unwrap();
    let unknown: Json = serde_json::from_str(&text_of(&plan).replace("\"orders\"", "\"ordres\"")).unwrap();
    let env = s.call("query_plan", &json!({"substrait": unknown}));
    assert_eq!(outcome(&env), "invalid", "{}", serde_json::to_string(&env).unwrap());
    assert!(env.tool_error().unwrap().message().contains("ordres"), "{}", env.tool_error().unwrap().message());
    let env = s.call("query_plan", &json!({"substrait": {"relations": "nope"}}));
    assert_eq!(outcome(&env), "invalid");
}
