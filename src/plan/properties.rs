//! Property tests of the planner library alone (they run with
//! `--no-default-features`): any request, however wrong, against the demo
//! model either plans or fails with an `Issue`, and any plan either renders
//! for every dialect or fails with `Unsupported`. Never a panic.
//!
//! Requests are drawn from the model's own names (so most of them are
//! plausible and reach deep into the planner) mixed with near misses,
//! dbt-style names, junk and hostile sizes.

use std::path::Path;
use std::sync::OnceLock;

use proptest::prelude::*;

use crate::ir::{Condition, FilterArg, FilterValue, MetricRequest, OrderArg};
use crate::model::{load_checked, CheckedModel, Literal};
use crate::sql::Dialect;

fn demo() -> &'static CheckedModel {
    static MODEL: OnceLock<CheckedModel> = OnceLock::new();
    MODEL.get_or_init(|| load_checked(&Path::new(env!("CARGO_MANIFEST_DIR")).join("semantics/demo")).expect("the demo model loads"))
}

/// Names a caller might send: every metric, column, entity and join of the
/// model, and names that are almost right or plainly wrong.
struct Pools {
    metrics: Vec<String>,
    columns: Vec<String>,
    /// Date and timestamp columns, the plausible time dimensions.
    times: Vec<String>,
    joins: Vec<String>,
    /// Names that are wrong in some way.
    junk: Vec<String>,
}

fn pools() -> &'static Pools {
    static POOLS: OnceLock<Pools> = OnceLock::new();
    POOLS.get_or_init(|| {
        let m = demo();
        let junk = ["", " ", "x", "order.", ".id", "a.b.c", "metric_time", "metric_time__month", "customer__country", "order__ordered_at__week", "ORDER.ID", "order.id; drop table x", "é.ü"];
        let metrics: Vec<String> = m.metrics.keys().chain(m.derived.keys()).cloned().collect();
        let mut columns: Vec<String> = Vec::new();
        let mut times: Vec<String> = Vec::new();
        let mut junk: Vec<String> = junk.map(String::from).to_vec();
        for e in m.entities.values() {
            // An entity's bare name is wrong wherever a column is expected.
            junk.push(e.name.clone());
            columns.extend(e.columns.iter().map(|c| format!("{}.{}", e.name, c.name)));
            times.extend(e.columns.iter().filter(|c| c.type_class().is_temporal()).map(|c| format!("{}.{}", e.name, c.name)));
        }
        junk.extend(["revenu", "Revenue", "order.amount", "no_such_join"].map(String::from));
        junk.push("a".repeat(5000));
        let joins: Vec<String> = m.joins.keys().cloned().collect();
        Pools { metrics, columns, times, joins, junk }
    })
}

/// A name from `pool`, or now and then a wrong one.
fn pick(pool: &'static [String]) -> impl Strategy<Value = String> {
    let junk = &pools().junk;
    prop_oneof![
        30 => (0..pool.len()).prop_map(move |i| pool[i].clone()),
        1 => (0..junk.len()).prop_map(move |i| junk[i].clone()),
    ]
}

fn literal() -> impl Strategy<Value = Literal> {
    prop_oneof![
        any::<bool>().prop_map(Literal::Bool),
        any::<i64>().prop_map(Literal::Int),
        prop_oneof![Just(0.5), Just(f64::NAN), Just(f64::INFINITY), Just(-1e300)].prop_map(Literal::Float),
        prop_oneof![
            Just("2024-03-01".to_string()),
            Just("2024-03-01 08:00:00".to_string()),
            Just("2024-13-45".to_string()),
            Just("books".to_string()),
            Just("'; drop table orders; --".to_string()),
            "\\PC{0,12}",
        ]
        .prop_map(Literal::Text),
    ]
}

fn filter() -> impl Strategy<Value = FilterArg> {
    let compare = prop_oneof![
        6 => prop_oneof![Just("eq"), Just("ne"), Just("lt"), Just("lte"), Just("gt"), Just("gte"), Just("in"), Just("not_in")],
        1 => prop_oneof![Just("="), Just(">="), Just("like"), Just("")],
    ];
    let value = prop_oneof![
        Just(FilterValue::None),
        literal().prop_map(FilterValue::Scalar),
        prop::collection::vec(literal(), 0..4).prop_map(FilterValue::List),
    ];
    prop_oneof![
        // Null tests need no value of the column's type, so they plan often.
        3 => (pick(&pools().columns), prop_oneof![Just("is_null"), Just("not_null")])
            .prop_map(|(column, op)| FilterArg { column, op: op.to_string(), value: FilterValue::None, metric: None }),
        1 => (pick(&pools().columns), compare, value).prop_map(|(column, op, value)| FilterArg { column, op: op.to_string(), value, metric: None }),
    ]
}

/// A disjunction of two filters, or of a filter and a conjunction. Boxed:
/// unboxed, its value trees make stack frames that overflow a test thread.
fn condition() -> BoxedStrategy<Condition<FilterArg>> {
    // Mostly null tests, which type on every column: a request plans only
    // when every atom does. (`like` without a value never types: not drawn.)
    let null_test = || {
        (pick(&pools().columns), prop_oneof![Just("is_null"), Just("not_null")])
            .prop_map(|(column, op)| FilterArg { column, op: op.to_string(), value: FilterValue::None, metric: None })
    };
    let atom = move || prop_oneof![4 => null_test(), 1 => filter()].prop_map(Condition::Atom).boxed();
    prop_oneof![
        (atom(), atom()).prop_map(|(a, b)| Condition::Any(vec![a, b])),
        (atom(), atom(), atom()).prop_map(|(a, b, c)| Condition::Any(vec![a, Condition::All(vec![b, c])])),
    ]
    .boxed()
}

fn request() -> impl Strategy<Value = MetricRequest> {
    let p = pools();
    let grain = prop::option::weighted(0.4, prop_oneof![
        8 => prop_oneof![Just("day"), Just("week"), Just("month"), Just("quarter"), Just("year")],
        1 => prop_oneof![Just("hour"), Just("fortnight"), Just("MONTH")],
    ]);
    let order = (prop_oneof![pick(&p.columns), pick(&p.metrics)], prop::option::of(prop_oneof![4 => Just("asc"), 4 => Just("desc"), 1 => Just("up")]))
        .prop_map(|(column, d)| OrderArg { column, direction: d.map(str::to_string) });
    (
        prop::collection::vec(pick(&p.metrics), 1..3),
        prop::collection::vec(pick(&p.columns), 0..3),
        prop::collection::vec(filter(), 0..2),
        grain,
        prop::option::weighted(0.2, pick(&p.times)),
        prop::collection::vec(order, 0..2),
        prop::option::weighted(0.3, prop_oneof![4 => Just(1i64), 4 => Just(10), 1 => Just(-1), 1 => Just(0), 1 => Just(i64::MAX)]),
        prop::collection::vec(pick(&p.joins), 0..2),
        // Rarely: a request plans only when every atom types, and the property
        // needs a tenth of the requests to plan (drawn more often, it fell short).
        prop::option::weighted(0.05, condition()),
    )
        .prop_map(|(names, group_by, filters, grain, time_dimension, order_by, limit, via, any_of)| MetricRequest {
            where_strings: Vec::new(),
            any_of: any_of.into_iter().collect(),
            names,
            group_by,
            filters,
            time_grain: grain.map(str::to_string),
            time_dimension,
            order_by,
            limit,
            via,
        })
}

/// Plans `req` and, when it plans, renders it for every dialect. Returns
/// whether it planned, or the property that broke.
fn plans_or_fails_cleanly(req: &MetricRequest) -> Result<bool, TestCaseError> {
    let model = demo();
    let plan = match crate::plan(model, req) {
        Ok(p) => p,
        Err(_) => return Ok(false),
    };
    // The plan's own rendering never panics either.
    let _ = plan.to_string();
    for name in Dialect::supported() {
        match crate::compile(model, req, name) {
            Ok(sql) => prop_assert!(sql.sql.starts_with("SELECT") || sql.sql.starts_with("WITH"), "{}", sql.sql),
            Err(crate::CompileError::Unsupported(_)) => {}
            Err(other) => prop_assert!(false, "planned, then failed to compile for {name}: {other:?}"),
        }
    }
    Ok(true)
}

/// Where a failing random case is kept and replayed first on every run.
const PERSISTED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/regressions/planner_properties.txt");

/// A random seed on every run, so the property keeps exploring; a failing
/// case is persisted (`tests/regressions/planner_properties.txt`) and
/// replayed first. Asserts only the property, never a share, so a seed
/// cannot make it flake.
#[test]
fn any_request_plans_or_fails_cleanly_on_a_random_seed() {
    use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
    let config = Config { cases: 200, failure_persistence: Some(Box::new(FileFailurePersistence::Direct(PERSISTED))), ..Config::default() };
    TestRunner::new(config).run(&request(), |req| plans_or_fails_cleanly(&req).map(|_| ())).unwrap_or_else(|e| panic!("{e}"));
}

/// The same property on a fixed seed, where the share of requests that
/// reach planning is asserted: with a random seed the share hovered around
/// the bound (36 of 400 planned in one CI run), so the bound is checked
/// only where it is reproducible.
#[test]
fn any_request_plans_or_fails_cleanly_and_every_plan_renders_or_says_why() {
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let cases = 400;
    let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut runner = TestRunner::new_with_rng(Config { cases, failure_persistence: None, ..Config::default() }, rng);
    let planned = std::cell::Cell::new(0u32);
    runner
        .run(&request(), |req| {
            if plans_or_fails_cleanly(&req)? {
                planned.set(planned.get() + 1);
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    // The generator must reach past the name checks into planning and
    // rendering, or the property says little.
    assert!(planned.get() * 10 >= cases, "only {} of {cases} requests planned", planned.get());
}
