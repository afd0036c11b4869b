//! Custom grains of the time spine (`time_spine.custom_grains`, dbt's
//! `custom_granularities`) on a copy of the demo warehouse with a spine
//! whose `fiscal_year` column starts fiscal years on 1 February, one day
//! of orders missing from it. Answers at `fiscal_year` (as `time_grain`,
//! in dbt's names, and as a filter) equal SQL written by hand joining the
//! spine on each order's day; what needs a period's length is refused
//! without a recovery that would answer at another grain.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{json, Value as Json};

use schemabrain::engine::{DuckDbEngine, Engine};
use schemabrain::project::Project;
use schemabrain::sql::CompiledSql;
use schemabrain::tools::{self, Execution};

use crate::common::{copy_project, demo_warehouse, limits, repo};

const SPINE: &str = "CREATE TABLE main.metricflow_time_spine AS
SELECT CAST(d AS DATE) AS date_day,
       CASE WHEN month(d) >= 2 THEN make_date(year(d), 2, 1) ELSE make_date(year(d) - 1, 2, 1) END AS fiscal_year
FROM range(TIMESTAMP '2010-01-01', TIMESTAMP '2040-01-01', INTERVAL 1 DAY) AS t(d)
WHERE CAST(d AS DATE) <> (SELECT min(CAST(ordered_at AS DATE)) FROM main.orders)";

/// The demo project with the fiscal spine; `order_count` and `revenue`
/// list `fiscal_year` among their grains (`avg_order_value` does not).
fn fiscal() -> &'static (Project, PathBuf) {
    static P: OnceLock<(Project, PathBuf)> = OnceLock::new();
    P.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("custom-grain-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        copy_project(&repo("semantics/demo"), &dir);
        let warehouse = dir.join("warehouse.duckdb");
        std::fs::copy(demo_warehouse(), &warehouse).unwrap();
        duckdb::Connection::open(&warehouse).unwrap().execute_batch(SPINE).unwrap();
        let settings = dir.join("schemabrain.yaml");
        let text = std::fs::read_to_string(&settings).unwrap();
        // `column` left out: it defaults to the grain's name.
        std::fs::write(&settings, format!("{text}time_spine:\n  table: main.metricflow_time_spine\n  column: date_day\n  custom_grains:\n    - {{name: fiscal_year}}\n")).unwrap();
        let edit = |file: &str, from: &str, to: &str| {
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(text.contains(from), "{file} no longer has `{from}`");
            std::fs::write(&path, text.replace(from, to)).unwrap();
        };
        edit("metrics/order_count.yaml", "time_grains: [day, week, month, quarter, year]", "time_grains: [day, week, month, quarter, year, fiscal_year]");
        edit("metrics/revenue.yaml", "time_grains: [day, week, month, quarter, year]", "time_grains: [day, week, month, quarter, year, fiscal_year]");
        let project = Project::open_declared(&dir).unwrap_or_else(|d| panic!("{d}"));
        (project, warehouse)
    })
}

fn engine() -> DuckDbEngine {
    let w = &fiscal().1;
    DuckDbEngine::open_read_only(w, &format!("duckdb:{}", w.display())).expect("warehouse opens")
}

fn get_metric(args: Json) -> Json {
    serde_json::to_value(tools::call(&fiscal().0, "get_metric", &args, Execution::run(&engine(), limits()))).unwrap()
}

fn rows(env: &Json) -> Vec<String> {
    assert_eq!(env["status"], "success", "{env:#}");
    let mut rows: Vec<String> = env["data"]["rows"].as_array().unwrap().iter().map(Json::to_string).collect();
    rows.sort();
    rows
}

fn by_hand(sql: &str) -> Vec<String> {
    let hand = CompiledSql { sql: sql.to_string(), params: Vec::new(), dialect: "duckdb" };
    let rows = engine().run(&hand, limits()).unwrap().rows;
    assert!(rows.len() > 1, "the hand-written SQL returns {} rows, too few to prove anything", rows.len());
    let mut rows: Vec<String> = serde_json::to_value(rows).unwrap().as_array().unwrap().iter().map(Json::to_string).collect();
    rows.sort();
    rows
}

const BY_DAY: &str = "FROM main.orders AS o LEFT JOIN main.metricflow_time_spine AS s ON s.date_day = CAST(o.ordered_at AS DATE)";

#[test]
fn a_custom_grain_buckets_as_the_spine_says_and_a_missing_day_groups_under_null() {
    let hand = by_hand(&format!("SELECT s.fiscal_year, o.status, count(*) {BY_DAY} GROUP BY ALL"));
    assert!(hand.iter().any(|r| r.starts_with("[null,")), "the spine lacks a day with orders, so some orders have no fiscal year: {hand:?}");
    let env = get_metric(json!({"name": "order_count", "time_grain": "fiscal_year", "group_by": ["order.status"]}));
    assert_eq!(rows(&env), hand);
    assert_eq!(env["data"]["columns"][0]["name"], "order.ordered_at__fiscal_year", "{env:#}");
    // In dbt's names, and for two metrics.
    let env = get_metric(json!({"name": "order_count", "group_by": ["metric_time__fiscal_year"]}));
    assert_eq!(rows(&env), by_hand(&format!("SELECT s.fiscal_year, count(*) {BY_DAY} GROUP BY ALL")));
    let env = get_metric(json!({"names": ["revenue", "order_count"], "time_grain": "fiscal_year"}));
    assert_eq!(
        rows(&env),
        by_hand(&format!("SELECT s.fiscal_year, sum(o.amount) FILTER (WHERE o.status NOT IN ('cancelled')), count(*) {BY_DAY} GROUP BY ALL"))
    );
}

#[test]
fn a_filter_on_a_custom_period_keeps_the_rows_of_that_period() {
    let fy: String = {
        let c = duckdb::Connection::open_with_flags(&fiscal().1, duckdb::Config::default().access_mode(duckdb::AccessMode::ReadOnly).unwrap()).unwrap();
        c.query_row(&format!("SELECT CAST(max(s.fiscal_year) AS VARCHAR) {BY_DAY}"), [], |r| r.get(0)).unwrap()
    };
    let hand = by_hand(&format!("SELECT date_trunc('month', o.ordered_at), count(*) {BY_DAY} WHERE s.fiscal_year = DATE '{fy}' GROUP BY ALL"));
    let filtered = get_metric(json!({"name": "order_count", "time_grain": "month", "filters": [{"column": "order.ordered_at__fiscal_year", "op": "eq", "value": fy}]}));
    assert_eq!(rows(&filtered), hand);
    let dbt = get_metric(json!({"name": "order_count", "group_by": ["metric_time__month"], "where": [format!("{{{{ TimeDimension('metric_time', 'fiscal_year') }}}} = '{fy}'")]}));
    assert_eq!(rows(&dbt), hand);
    // Periods compare as dates: every order before that fiscal year.
    let before = get_metric(json!({"name": "order_count", "filters": [{"column": "order.ordered_at__fiscal_year", "op": "lt", "value": fy}]}));
    let hand_before = {
        let sql = format!("SELECT count(*) {BY_DAY} WHERE s.fiscal_year < DATE '{fy}'");
        let rows = engine().run(&CompiledSql { sql, params: Vec::new(), dialect: "duckdb" }, limits()).unwrap().rows;
        serde_json::to_value(rows).unwrap().as_array().unwrap().iter().map(Json::to_string).collect::<Vec<_>>()
    };
    assert_eq!(rows(&before), hand_before);
    // A calendar period filtered the same way.
    let march = get_metric(json!({"name": "order_count", "time_grain": "day", "filters": [{"column": "order.ordered_at__month", "op": "eq", "value": "2024-03-01"}]}));
    assert_eq!(rows(&march), by_hand("SELECT date_trunc('day', o.ordered_at), count(*) FROM main.orders AS o WHERE date_trunc('month', o.ordered_at) = TIMESTAMP '2024-03-01' GROUP BY ALL"));
    let bad = get_metric(json!({"name": "order_count", "filters": [{"column": "order.status__fiscal_year", "op": "eq", "value": fy}]}));
    assert_eq!(bad["status"], "error", "{bad:#}");
    assert!(bad.to_string().contains("not a date or timestamp column"), "{bad:#}");
    let typo = get_metric(json!({"name": "order_count", "filters": [{"column": "order.ordered_at__fiscal_yr", "op": "eq", "value": fy}]}));
    assert_eq!(typo["status"], "error", "{typo:#}");
    assert!(typo.to_string().contains("`fiscal_yr` is not a grain") && typo.to_string().contains("fiscal_year"), "{typo:#}");
}

#[test]
fn what_needs_a_periods_length_is_refused_at_a_custom_grain_without_another_grain_offered() {
    for name in ["revenue_month_ago", "cumulative_revenue"] {
        let env = get_metric(json!({"name": name, "time_grain": "fiscal_year"}));
        assert_eq!(env["status"], "error", "{name}: {env:#}");
        assert_eq!(env["error"]["kind"], "invalid_time_grain", "{name}: {env:#}");
        // Calendar years are another question: no correction proposes one.
        let text = env.to_string();
        assert!(!text.contains("\"time_grain\":\"year\""), "{name}: a recovery answers at calendar years: {env:#}");
    }
    // A metric whose grain list leaves the custom grain out refuses it too.
    let env = get_metric(json!({"name": "avg_order_value", "time_grain": "fiscal_year"}));
    assert_eq!(env["error"]["kind"], "invalid_time_grain", "{env:#}");
}

#[test]
fn list_metrics_shows_the_custom_grains_a_metric_takes() {
    let env = serde_json::to_value(tools::call(&fiscal().0, "list_metrics", &json!({}), Execution::DryRun)).unwrap();
    let grains = |name: &str| env["data"]["items"].as_array().unwrap().iter().find(|i| i["name"] == name).map(|i| i["time_grains"].clone()).unwrap_or_else(|| panic!("{name}: {env:#}"));
    assert_eq!(grains("order_count"), json!(["day", "week", "month", "quarter", "year", "fiscal_year"]), "{env:#}");
    assert_eq!(grains("avg_order_value"), json!(["day", "week", "month", "quarter", "year"]), "{env:#}");
}

/// DataFusion over the same warehouse exported to Parquet (the spine too)
/// answers as DuckDB does.
#[test]
fn datafusion_answers_at_a_custom_grain_as_duckdb_does() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name("custom-grain-parquet"));
    let target = schemabrain::engine::export::Target::parse(&format!("parquet:{}", dir.display()), None).unwrap();
    schemabrain::engine::export::export(&engine(), "main", &target).expect("export");
    let df = schemabrain::engine::DataFusionEngine::open(&format!("parquet:{}", dir.display())).unwrap_or_else(|e| panic!("{e}"));
    for args in [
        json!({"name": "order_count", "time_grain": "fiscal_year", "group_by": ["order.status"]}),
        json!({"name": "order_count", "time_grain": "month", "filters": [{"column": "order.ordered_at__fiscal_year", "op": "gte", "value": "2024-02-01"}]}),
    ] {
        let mut on_df = args.clone();
        on_df["dialect"] = "datafusion".into();
        let answer = serde_json::to_value(tools::call(&fiscal().0, "get_metric", &on_df, Execution::run(&df, limits()))).unwrap();
        assert_eq!(rows(&answer), rows(&get_metric(args.clone())), "{args}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Over MCP, get_metric's published `time_grain` enum holds the project's
/// custom grains after the calendar ones (each answered: see above).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_publishes_the_custom_grains_in_get_metrics_schema() {
    let (project, warehouse) = fiscal();
    let session = std::sync::Arc::new(crate::mcp::session(project.clone(), Some(&format!("duckdb:{}", warehouse.display())), false));
    let client = crate::mcp::connect(session, crate::mcp::Era::Legacy).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let get_metric = tools.iter().find(|t| t.name == "get_metric").expect("get_metric listed");
    let grains: Vec<String> = get_metric.input_schema["properties"]["time_grain"]["enum"].as_array().unwrap().iter().map(|g| g.as_str().unwrap().to_string()).collect();
    assert_eq!(grains, ["hour", "day", "week", "month", "quarter", "year", "fiscal_year"]);
    client.cancel().await.expect("cancel");
    // The demo project without a spine publishes the calendar grains only.
    let demo = schemabrain::tools::surface::find("get_metric").unwrap();
    assert_eq!(demo.input_schema["properties"]["time_grain"]["enum"].as_array().unwrap().len(), 6);
}
