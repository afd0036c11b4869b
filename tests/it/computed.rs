//! Computed columns (an entity column with `expr`) on the demo warehouse:
//! answers equal hand-written SQL, the relation carries only the computed
//! columns a request reads, the PII check sees what an expression reads,
//! and an expression the dialect cannot read is refused naming the column.

use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

use schemabrain::engine::Engine;
use schemabrain::sql::CompiledSql;
use schemabrain::project::Project;
use schemabrain::tools::{self, Execution};

use crate::common::{demo_engine, limits, repo};

/// The demo project with computed columns on `customer`, checked against
/// the warehouse's catalog, in a directory of its own (`tag`).
fn demo_with_computed(tag: &str, columns: &str) -> Project {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("computed-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&repo("semantics/demo"), &dir);
    let _ = std::fs::remove_file(dir.join("warehouse.duckdb"));
    let customer = dir.join("entities/customer.yaml");
    let text = std::fs::read_to_string(&customer).unwrap();
    std::fs::write(&customer, format!("{}\n{columns}", text.trim_end())).unwrap();
    let catalog = demo_engine().introspect().expect("introspects");
    Project::open_declared(&dir).unwrap_or_else(|d| panic!("{d}")).with_catalog(catalog).unwrap_or_else(|d| panic!("{d}"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target: PathBuf = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

const COLUMNS: &str = "  - name: country_group
    expr: \"case when country in ('DE', 'AT', 'CH') then 'dach' when country is null then null else 'other' end\"
    type: varchar
  - name: mail_domain
    expr: \"split_part(email, '@', 2)\"
    type: varchar
";

fn run(project: &Project, args: Json) -> Json {
    serde_json::to_value(tools::call(project, "get_metric", &args, Execution::run(&demo_engine(), limits()))).unwrap()
}

fn sorted_rows(v: &Json) -> Vec<String> {
    let mut rows: Vec<String> = v.as_array().unwrap().iter().map(|r| r.to_string()).collect();
    rows.sort();
    rows
}

fn by_hand(sql: &str) -> Vec<String> {
    let hand = CompiledSql { sql: sql.to_string(), params: Vec::new(), dialect: "duckdb" };
    let rows = demo_engine().run(&hand, limits()).unwrap().rows;
    assert!(!rows.is_empty(), "the hand-written SQL returns no rows, so it proves nothing");
    sorted_rows(&serde_json::to_value(rows).unwrap())
}

#[test]
fn computed_columns_answer_as_hand_written_sql() {
    let project = demo_with_computed("answers", COLUMNS);
    let env = run(&project, json!({"name": "revenue", "group_by": ["customer.country_group"]}));
    assert_eq!(env["status"], "success", "{env:#}");
    let sql = env["data"]["sql"].as_str().unwrap();
    // Only the computed column read is added, to the relation that has it.
    assert!(sql.contains("AS \"country_group\"") && !sql.contains("mail_domain"), "{sql}");
    assert_eq!(
        sorted_rows(&env["data"]["rows"]),
        by_hand(
            "SELECT CASE WHEN c.country IN ('DE', 'AT', 'CH') THEN 'dach' WHEN c.country IS NULL THEN NULL ELSE 'other' END AS g, sum(o.amount)
             FROM main.orders o LEFT JOIN main.customers c ON c.id = o.customer_id
             WHERE o.status NOT IN ('cancelled') GROUP BY 1"
        )
    );
    // In a where string (OR with a plain column), grouped by another column.
    let env = run(
        &project,
        json!({"name": "order_count", "group_by": ["customer.segment"], "where": ["{{ Dimension('customer__country_group') }} = 'dach' OR {{ Dimension('order__status') }} = 'returned'"]}),
    );
    assert_eq!(env["status"], "success", "{env:#}");
    assert_eq!(
        sorted_rows(&env["data"]["rows"]),
        by_hand(
            "SELECT c.segment, count(o.id) FROM main.orders o LEFT JOIN main.customers c ON c.id = o.customer_id
             WHERE c.country IN ('DE', 'AT', 'CH') OR o.status = 'returned' GROUP BY 1"
        )
    );
    // A request that reads no computed column reads the plain table.
    let env = run(&project, json!({"name": "revenue", "group_by": ["customer.country"]}));
    assert!(!env["data"]["sql"].as_str().unwrap().contains("sb_c"), "{env:#}");
}

#[test]
fn a_computed_column_is_as_personal_as_what_it_reads() {
    let project = demo_with_computed("pii", COLUMNS);
    for args in [
        json!({"name": "revenue", "group_by": ["customer.mail_domain"]}),
        json!({"name": "revenue", "filters": [{"column": "customer.mail_domain", "op": "eq", "value": "example.com"}]}),
        json!({"name": "revenue", "where": ["{{ Dimension('customer__country_group') }} = 'dach' OR {{ Dimension('customer__mail_domain') }} LIKE '%.de'"]}),
    ] {
        let env = run(&project, args.clone());
        assert_eq!(env["error"]["kind"], "pii_blocked", "{args}: {env:#}");
        assert!(env["error"]["message"].as_str().unwrap().contains("contact"), "{env:#}");
    }
}

#[test]
fn an_expression_the_dialect_cannot_read_is_refused_naming_the_column() {
    let project = demo_with_computed("unreadable", "  - {name: half_done, expr: \"case when country = 'DE' then 1\", type: integer}\n");
    let env = run(&project, json!({"name": "revenue", "group_by": ["customer.half_done"]}));
    assert_eq!(env["status"], "error", "{env:#}");
    assert!(env["error"]["message"].as_str().unwrap().contains("customer.half_done"), "{env:#}");
    // The model is at fault, not the dialect: no other dialect is offered,
    // and the recovery shows the entity's other columns.
    assert_eq!(env["error"]["kind"], "internal_error", "{env:#}");
    assert_eq!(env["error"]["recovery"]["suggested_tool"], "describe_entity", "{env:#}");
    assert_eq!(env["error"]["recovery"]["suggested_args"]["name"], "customer", "{env:#}");
    // The loader refuses a computed column that shadows a column of the table.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("computed-shadow");
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&repo("semantics/demo"), &dir);
    let customer = dir.join("entities/customer.yaml");
    // Not declared, so only the table knows `segment`.
    let declared = "  - name: segment\n    type: varchar\n    description: Customer segment, one of consumer, small_business, enterprise.\n";
    let text = std::fs::read_to_string(&customer).unwrap();
    assert!(text.contains(declared));
    std::fs::write(&customer, format!("{}\n  - {{name: segment, expr: \"upper(segment)\"}}\n", text.replace(declared, "").trim_end())).unwrap();
    let catalog = demo_engine().introspect().unwrap();
    let problems = Project::open_declared(&dir).and_then(|p| p.with_catalog(catalog)).err().expect("a computed column named like a table column is refused");
    assert!(problems.to_string().contains("computed column `segment`"), "{problems}");
}
