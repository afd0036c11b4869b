//! `schemabrain import dbt`: a dbt project's semantic layer as a
//! schemabrain project. It maps the `semantic_manifest.json` dbt writes
//! (`dbt parse`), the most stable form of both spec styles, or the same
//! JSON that `project` builds from the project's YAML without dbt; it maps
//! what our grammar expresses exactly; everything else is listed item
//! by item (nothing is dropped silently) and the import exits 1.
//!
//! Mapped: each semantic model with a primary entity becomes an entity
//! named after it, bound to the model's relation; foreign and unique
//! entities become many-to-one and one-to-one joins to the entity whose
//! primary they are; categorical and time dimensions over a plain column
//! become columns; simple metrics over a measure (or the v2 spec's
//! `metric_aggregation_params`) with every aggregation (percentiles exact,
//! continuous or discrete), a column or an arithmetic `expr`, the agg time dimension
//! and `non_additive_dimension`; ratio metrics over two mapped metrics,
//! their inputs' filters included.
//!
//! Derived metrics (with `offset_window`: `periods: any_input`, MetricFlow's
//! periods), cumulative metrics (computed per day
//! of the time spine, then one value per bucket by `period_agg`, as
//! MetricFlow does), conversion metrics (MetricFlow's counting, `counts:
//! conversion_rows`), `fill_nulls_with` and `join_to_timespine` (with the
//! manifest's time spine in `schemabrain.yaml`) map too. Metric and input
//! filters (MetricFlow where strings) become our filters (`where_filter`).
//! Dimensions and measures whose `expr` is SQL (beyond a column or our
//! arithmetic) become computed columns of the entity, named after them.
//! A model without a primary key column (`primary_entity` alone) becomes
//! an entity without an identity; `offset_to_grain` inputs are answered on
//! the time spine as MetricFlow does; a natural entity with validity
//! windows (SCD) becomes an entity without identity joined by the version
//! valid at the metric's time (`valid_between`); a metric's filter with OR
//! becomes `any_of` items. Ratio and derived metrics over other ratio and
//! derived metrics are flattened to arithmetic over simple metrics
//! (`nested`), each input's own filter, alias and offset carried down;
//! metrics that read each other in a cycle are listed with the cycle.
//! A derived metric's own filter goes to each of its inputs (MetricFlow's
//! rule). Not yet (listed when met): filters on ratio, cumulative or
//! conversion metrics themselves, or on a derived metric with a moved input, OR in an input's filter or in a conversion
//! metric's own filter, `Metric()` inside a metric's own filter, an
//! offset on an input that is already moved below, a derived input that
//! is a cumulative or conversion metric, the time spine's custom
//! granularities (`metric_time__fiscal_year`). Saved queries become `queries/<name>.yaml` (their names
//! stay MetricFlow's: requests read them).
//!
//! Models and sources without semantic models (most dbt projects) are
//! `plain`'s: their tests, descriptions and docs drafted as `index` drafts
//! a warehouse, and a semantic model's foreign entity may name one of
//! their entities (`import_semantic_manifest_with`).
//!
//! Architecture invariant: pure over the manifest JSON; writing goes
//! through `index::write` (atomic files, re-import keeps none stale).
//! Only `plain::check` (feature `app`) reads a warehouse.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;

use crate::model::{is_identifier, MeasureExpr};

pub mod nested;
pub mod plain;
pub mod project;
pub mod where_filter;

pub use crate::unmapped::Unmapped;

/// The import: project files by relative path, what was left out, and the
/// dbt names of what was mapped (`customer__country` → `customer.country`).
#[derive(Clone, Debug, Default)]
pub struct Imported {
    pub files: BTreeMap<String, String>,
    pub unmapped: Vec<Unmapped>,
    pub names: BTreeMap<String, String>,
    pub entities: usize,
    pub joins: usize,
    pub metrics: usize,
    pub queries: usize,
    /// The project's daily time spine as `(schema.table, column)`, when the
    /// manifest names one (`join_to_timespine` metrics need it).
    pub time_spine: Option<(String, String)>,
    /// The time spine's custom granularities as `(name, column)`
    /// (`custom_grains` of our `time_spine`).
    pub custom_grains: Vec<(String, String)>,
    /// The relation (`schema.table`) of each semantic model, with the
    /// entity it was imported as when it has a one-column key (`None`: not
    /// imported, or `primary_entity` alone). Plain models on these
    /// relations are not imported again, and a plain model's
    /// `relationships` test pointing at one joins its entity.
    pub relations: BTreeMap<String, Option<SemanticEntity>>,
}

impl Imported {
    /// The `time_spine: {table, column, custom_grains}` line of
    /// `schemabrain.yaml`, when the manifest names a time spine.
    pub fn time_spine_setting(&self) -> Option<String> {
        let (table, column) = self.time_spine.as_ref()?;
        let custom: Vec<String> = self.custom_grains.iter().map(|(name, column)| format!("{{name: {name}, column: {column}}}")).collect();
        let custom = if custom.is_empty() { String::new() } else { format!(", custom_grains: [{}]", custom.join(", ")) };
        Some(format!("time_spine: {{table: {table}, column: {column}{custom}}}\n"))
    }
}

/// The entity a semantic model's relation is imported as: its primary
/// entity's name and key column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SemanticEntity {
    pub entity: String,
    pub key: String,
}

/// The relation a semantic model binds: its `node_relation`, else
/// `main.<model name>`.
fn relation_of<'a>(sm: &'a Json, name: &'a str) -> (&'a str, &'a str) {
    let relation = sm.get("node_relation");
    (relation.and_then(|r| s(r, "schema_name")).unwrap_or("main"), relation.and_then(|r| s(r, "alias")).unwrap_or(name))
}

/// The daily time spine the manifest names: the current `time_spines`
/// (the one at day granularity, else the first) or the legacy
/// `time_spine_table_configurations` (`location: db.schema.table`).
fn time_spine(manifest: &Json) -> Option<(String, String)> {
    let config = manifest.get("project_configuration")?;
    if let Some(sp) = daily_spine(manifest) {
        let relation = sp.get("node_relation")?;
        let column = sp.get("primary_column").and_then(|c| s(c, "name"))?;
        let (schema, table) = (s(relation, "schema_name")?, s(relation, "alias")?);
        return [schema, table, column].iter().all(|p| is_identifier(p)).then(|| (format!("{schema}.{table}"), column.to_string()));
    }
    let legacy = arr(config, "time_spine_table_configurations");
    let sp = legacy.iter().find(|sp| s(sp, "grain") == Some("day")).or(legacy.first())?;
    let parts: Vec<&str> = s(sp, "location")?.split('.').collect();
    let (schema, table) = (parts.get(parts.len().checked_sub(2)?)?, parts.last()?);
    let column = s(sp, "column_name")?;
    let plain = [schema, table, column].iter().all(|p| is_identifier(p));
    plain.then(|| (format!("{schema}.{table}"), column.to_string()))
}

/// The `time_spines` entry at day granularity, else the first.
fn daily_spine(manifest: &Json) -> Option<&Json> {
    let spines = arr(manifest.get("project_configuration")?, "time_spines");
    let day = |sp: &&Json| sp.get("primary_column").and_then(|c| s(c, "time_granularity")) == Some("day");
    spines.iter().find(day).or(spines.first())
}

/// The custom granularities of the time spine `time_spine` chose, as
/// `(name, column)` (the column defaulting to the name, as dbt's does);
/// those that cannot be a grain of ours (a name a calendar grain or a date
/// part has, a column that is not a plain name, another spine's) listed.
fn custom_grains(manifest: &Json, spine_named: bool, unmapped: &mut Vec<Unmapped>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let chosen = daily_spine(manifest);
    let spines = manifest.get("project_configuration").map(|c| arr(c, "time_spines")).unwrap_or(&[]);
    for sp in spines {
        for g in arr(sp, "custom_granularities") {
            let name = s(g, "name").unwrap_or("?");
            let column = s(g, "column_name").unwrap_or(name);
            let item = format!("custom_granularity {name}");
            let problem = if !spine_named || !chosen.is_some_and(|c| std::ptr::eq(c, sp)) {
                Some("it is declared on a time spine other than the daily one the import reads".to_string())
            } else if !is_identifier(name) || !is_identifier(column) {
                Some(format!("`{name}` (column `{column}`) is not a plain name"))
            } else if let Some(why) = crate::model::CustomGrain::name_clash(name) {
                Some(format!("`{name}` cannot name a custom grain: {why}"))
            } else if out.iter().any(|(n, _)| n == name) {
                Some("declared twice".to_string())
            } else {
                None
            };
            match problem {
                Some(reason) => unmapped.push(Unmapped { item, reason }),
                None => out.push((name.to_string(), column.to_string())),
            }
        }
    }
    out
}

use crate::model::yaml_quoted as q;

/// The first lines of every file the import writes: version, name, and
/// the item's dbt description when it has one.
fn header(name: &str, item: &Json) -> String {
    let mut text = format!("version: 1\nname: {name}\n");
    if let Some(d) = s(item, "description").filter(|d| !d.trim().is_empty()) {
        text.push_str(&format!("description: {}\n", q(d)));
    }
    text
}

/// Where an item came from: its `file:line` when the project was read from
/// YAML (`__source`), else the manifest file; with the item's path.
fn origin(item: &Json, source_file: &str, path: &str) -> String {
    match s(item, "__source") {
        Some(at) => format!("{at}: {path}"),
        None => format!("{source_file}: {path}"),
    }
}

fn s<'a>(v: &'a Json, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Json::as_str)
}

fn arr<'a>(v: &'a Json, key: &str) -> &'a [Json] {
    v.get(key).and_then(Json::as_array).map(Vec::as_slice).unwrap_or(&[])
}

fn provenance(source: &str) -> String {
    format!("origin: dbt_import\nprovenance:\n  inference_method: dbt_import\n  validation_state: applied\n  confidence: high\n  source: {}\n", q(source))
}

/// A natural entity with its validity window (dbt's `validity_params`).
struct Versioned {
    entity: String,
    column: String,
    from: String,
    to: String,
}

/// The natural entity of an SCD model and its window's columns.
fn versioned_by(sm: &Json, natural: &Json) -> Result<Versioned, String> {
    let entity = s(natural, "name").unwrap_or("?").to_string();
    let column = s(natural, "expr").unwrap_or(&entity).trim().to_string();
    let bound = |flag: &str| {
        arr(sm, "dimensions")
            .iter()
            .find(|d| d.get("type_params").and_then(|t| t.get("validity_params")).and_then(|v| v.get(flag)).and_then(Json::as_bool) == Some(true))
            .map(|d| s(d, "expr").unwrap_or(s(d, "name").unwrap_or("?")).trim().to_string())
    };
    let (Some(from), Some(to)) = (bound("is_start"), bound("is_end")) else {
        return Err(format!("the natural entity `{entity}` needs a time dimension with `is_start` and one with `is_end` (validity_params)"));
    };
    if ![&column, &from, &to].iter().all(|c| is_identifier(c)) {
        return Err(format!("the natural entity `{entity}` or its validity window is a SQL expression, not a column"));
    }
    Ok(Versioned { entity, column, from, to })
}

/// Writes `joins/<source>_<target>.yaml`: `source.column = target.column`,
/// with the target's validity window when it is versioned.
fn add_join(out: &mut Imported, (source, column): (&str, &str), (target, key): (&str, &str), cardinality: &str, window: Option<&Versioned>, at: &str) {
    let join = format!("{source}_{target}");
    let window = window.map_or(String::new(), |v| format!("valid_between: {{from: {}, to: {}}}\n", v.from, v.to));
    out.files.insert(
        format!("joins/{join}.yaml"),
        format!(
            "version: 1\nname: {join}\nsource_entity: {source}\ntarget_entity: {target}\n\"on\": [{{source: {column}, target: {key}}}]\ncardinality: {cardinality}\n{window}{}",
            provenance(at)
        ),
    );
    out.joins += 1;
}

/// One semantic model as an entity.
struct Model<'a> {
    json: &'a Json,
    entity: String,
    /// The primary entity's column; none when the model names its entity
    /// with `primary_entity` alone.
    key: Option<String>,
    /// dbt dimension name → column.
    columns: BTreeMap<String, String>,
    /// A versioned model (natural entity): the entity's name, its column
    /// and the validity window's start and end columns.
    versioned: Option<Versioned>,
    /// Computed columns (dimensions and measures whose `expr` is SQL):
    /// name → (expression, type if known).
    computed: BTreeMap<String, (String, Option<&'static str>)>,
    agg_time_dimension: Option<String>,
}

/// Whether a measure's `expr` needs a computed column: neither a column
/// nor within the measure expression grammar.
fn needs_computed(expr: &str) -> bool {
    !is_identifier(expr) && MeasureExpr::parse(expr).is_err()
}

/// The aggregate function a measure's `expr` calls, if any. MetricFlow
/// reads a measure's `expr` as row-level SQL over the model's table and
/// aggregates it: `SUM(SUM(x) - SUM(y))` does not run anywhere. Such an
/// `expr` is what a converter writes for a metric it could not decompose
/// (Ossie's dbt converter keeps the whole expression and guesses SUM), so
/// it is listed, never mapped to a computed column that fails or a number
/// that differs.
fn aggregate_inside(expr: &str) -> Option<String> {
    use sqlparser::dialect::GenericDialect;
    use sqlparser::parser::Parser;
    use std::ops::ControlFlow;
    const AGGREGATES: &[&str] = &[
        "SUM", "COUNT", "AVG", "MIN", "MAX", "MEDIAN", "PERCENTILE_CONT", "PERCENTILE_DISC", "APPROX_PERCENTILE", "STDDEV", "STDDEV_POP", "STDDEV_SAMP", "VARIANCE",
        "VAR_POP", "VAR_SAMP", "ANY_VALUE", "ARRAY_AGG", "STRING_AGG", "LISTAGG", "BOOL_AND", "BOOL_OR", "COUNT_IF", "APPROX_COUNT_DISTINCT",
    ];
    let mut parser = Parser::new(&GenericDialect {}).try_with_sql(expr).ok()?;
    let e = parser.parse_expr().ok()?;
    let mut found = None;
    let _ = sqlparser::ast::visit_expressions(&e, |node| {
        if let sqlparser::ast::Expr::Function(f) = node {
            let name = f.name.to_string().to_ascii_uppercase();
            if AGGREGATES.contains(&name.as_str()) || f.over.is_some() {
                found = Some(name);
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    });
    found
}

const GRAINS: &str = "[day, week, month, quarter, year]";

fn agg_of(dbt: &str) -> Option<&'static str> {
    Some(match dbt {
        "sum" => "sum",
        "count" => "count",
        "count_distinct" => "count_distinct",
        "average" | "avg" => "avg",
        "min" => "min",
        "max" => "max",
        "median" => "median",
        "percentile" => "percentile",
        "sum_boolean" => "sum_boolean",
        _ => return None,
    })
}

/// Reads a semantic manifest (the JSON `dbt parse` writes).
pub fn import_semantic_manifest(manifest: &Json, source_file: &str) -> Imported {
    import_semantic_manifest_with(manifest, source_file, &BTreeMap::new())
}

/// As `import_semantic_manifest`, with entities imported from elsewhere
/// (plain dbt models: entity name → its one key column) that a semantic
/// model's foreign entity may name: the join goes to them.
pub fn import_semantic_manifest_with(manifest: &Json, source_file: &str, outside: &BTreeMap<String, String>) -> Imported {
    let mut out = Imported { time_spine: time_spine(manifest), ..Imported::default() };
    // A custom granularity (`metric_time__fiscal_year`: the spine's column
    // at each day) is a custom grain of our time spine.
    out.custom_grains = custom_grains(manifest, out.time_spine.is_some(), &mut out.unmapped);
    let mut models: Vec<Model<'_>> = Vec::new();
    let mut primary_of: BTreeMap<String, usize> = BTreeMap::new();
    for sm in arr(manifest, "semantic_models") {
        let name = s(sm, "name").unwrap_or("?");
        let (schema, table) = relation_of(sm, name);
        // Bound even when not imported: its relation is not a plain model's.
        out.relations.entry(format!("{schema}.{table}")).or_insert(None);
        let primary = arr(sm, "entities").iter().find(|e| s(e, "type") == Some("primary"));
        let natural = arr(sm, "entities").iter().find(|e| s(e, "type") == Some("natural"));
        // A model without a primary key column names its entity with
        // `primary_entity`: an entity without an identity (`identity: []`),
        // whose fan-out is reported, never deduplicated by a guessed key.
        let (entity, key) = match (primary, s(sm, "primary_entity")) {
            (Some(primary), _) => {
                let entity = s(primary, "name").unwrap_or(name).to_string();
                (entity, Some(s(primary, "expr").or(s(primary, "name")).unwrap_or("").to_string()))
            }
            (None, Some(entity)) => (entity.to_string(), None),
            (None, None) => {
                let reason = "no primary entity: dbt itself requires `primary_entity` for a model without a primary key";
                out.unmapped.push(Unmapped { item: format!("semantic_model {name}"), reason: reason.into() });
                continue;
            }
        };
        // A natural entity with validity windows (SCD type 2): joined from
        // the models holding that entity by the version valid at the time
        // of the metric's row.
        let versioned = match natural {
            None => None,
            Some(n) => match versioned_by(sm, n) {
                Ok(v) => Some(v),
                Err(reason) => {
                    out.unmapped.push(Unmapped { item: format!("semantic_model {name}"), reason });
                    continue;
                }
            },
        };
        if !is_identifier(&entity) || key.as_deref().is_some_and(|k| !is_identifier(k)) {
            out.unmapped.push(Unmapped {
                item: format!("semantic_model {name}"),
                reason: format!("primary entity `{entity}` ({}) is not a plain column", key.as_deref().unwrap_or("")),
            });
            continue;
        }
        let mut columns = BTreeMap::new();
        let mut computed = BTreeMap::new();
        for d in arr(sm, "dimensions") {
            let dname = s(d, "name").unwrap_or("?");
            let col = s(d, "expr").unwrap_or(dname).trim();
            if is_identifier(col) {
                columns.insert(dname.to_string(), col.to_string());
                continue;
            }
            // A computed dimension: a column of its own, named as dbt names it.
            match crate::model::computed_expr_problem(col) {
                Some(problem) if is_identifier(dname) => out.unmapped.push(Unmapped { item: format!("dimension {name}.{dname}"), reason: format!("its SQL `expr` {problem}") }),
                _ if !is_identifier(dname) => out.unmapped.push(Unmapped { item: format!("dimension {name}.{dname}"), reason: "its name is not a plain identifier".into() }),
                _ => {
                    let ty = (s(d, "type") == Some("time")).then_some("timestamp");
                    columns.insert(dname.to_string(), dname.to_string());
                    computed.insert(dname.to_string(), (col.to_string(), ty));
                }
            }
        }
        // Measures (and the latest spec's metrics with their own aggregation)
        // whose `expr` is SQL outside our grammar read a computed column
        // named after them.
        let own_metrics = arr(manifest, "metrics")
            .iter()
            .filter(|m| m.get("type_params").and_then(|t| t.get("metric_aggregation_params")).and_then(|p| s(p, "semantic_model")) == Some(name))
            .filter_map(|m| Some((s(m, "name")?, s(m.get("type_params")?, "expr")?, m.get("type_params")?.get("metric_aggregation_params")?)));
        let measures = arr(sm, "measures").iter().filter_map(|x| Some((s(x, "name")?, s(x, "expr")?, x)));
        for (mname, expr, agg) in measures.chain(own_metrics) {
            let expr = expr.trim();
            if needs_computed(expr) && crate::model::computed_expr_problem(expr).is_none() && aggregate_inside(expr).is_none() && is_identifier(mname) && !computed.contains_key(mname) {
                let ty = (s(agg, "agg") == Some("sum_boolean")).then_some("boolean");
                computed.insert(mname.to_string(), (expr.to_string(), ty));
            }
        }
        let agg_time_dimension = sm.get("defaults").and_then(|d| s(d, "agg_time_dimension")).map(str::to_string);
        primary_of.insert(entity.clone(), models.len());
        if let Some(key) = &key {
            out.relations.insert(format!("{schema}.{table}"), Some(SemanticEntity { entity: entity.clone(), key: key.clone() }));
        }
        models.push(Model { json: sm, entity, key, columns, computed, agg_time_dimension, versioned });
    }
    // Entities and their joins.
    for m in &models {
        let sm = m.json;
        let name = s(sm, "name").unwrap_or("?");
        let (schema, table) = relation_of(sm, name);
        for e in arr(sm, "entities") {
            let ename = s(e, "name").unwrap_or("?");
            let kind = s(e, "type").unwrap_or("");
            if kind == "primary" || kind == "natural" {
                continue;
            }
            let col = s(e, "expr").unwrap_or(ename);
            let Some(&target) = primary_of.get(ename) else {
                // A versioned model's natural entity: joined below, by version.
                if models.iter().any(|v| v.versioned.as_ref().is_some_and(|n| n.entity == ename)) {
                    continue;
                }
                // A plain model's entity of that name.
                if let Some(key) = outside.get(ename).filter(|_| is_identifier(col)) {
                    let cardinality = if kind == "unique" { "one_to_one" } else { "many_to_one" };
                    let at = origin(sm, source_file, &format!("semantic_models[{name}].entities[{ename}]"));
                    add_join(&mut out, (&m.entity, col), (ename, key), cardinality, None, &at);
                    continue;
                }
                out.unmapped.push(Unmapped { item: format!("entity {name}.{ename}"), reason: format!("no semantic model has `{ename}` as its primary entity") });
                continue;
            };
            if !is_identifier(col) {
                out.unmapped.push(Unmapped { item: format!("entity {name}.{ename}"), reason: "the key is a SQL expression".into() });
                continue;
            }
            let cardinality = if kind == "unique" { "one_to_one" } else { "many_to_one" };
            let Some(t) = models.get(target) else { continue };
            let Some(target_key) = &t.key else {
                out.unmapped.push(Unmapped { item: format!("entity {name}.{ename}"), reason: format!("`{ename}` has no key column to join on") });
                continue;
            };
            let at = origin(sm, source_file, &format!("semantic_models[{name}].entities[{ename}]"));
            add_join(&mut out, (&m.entity, col), (&t.entity, target_key), cardinality, None, &at);
        }
        // No `columns:`: a semantic model names only some of its table's
        // columns (measures read others), so the catalog supplies them.
        // Dimensions named apart from their column answer to their dbt name too.
        let aliases: Vec<String> = m.columns.iter().filter(|(d, c)| d != c).map(|(d, c)| format!("{d}: {c}")).collect();
        let mut aliases = if aliases.is_empty() { String::new() } else { format!("column_aliases: {{{}}}\n", aliases.join(", ")) };
        // Computed columns are declared; the table's own come from the catalog.
        if !m.computed.is_empty() {
            aliases.push_str("columns:\n");
            for (cname, (expr, ty)) in &m.computed {
                let ty = ty.map(|t| format!(", type: {t}")).unwrap_or_default();
                aliases.push_str(&format!("  - {{name: {cname}, expr: {}{ty}}}\n", q(expr)));
            }
        }
        let text = format!(
            "version: 1\nname: {}\ndescription: {}\nbinding: {{single_table: {schema}.{table}}}\nidentity: {}\n{aliases}{}",
            m.entity,
            q(s(sm, "description").filter(|d| !d.trim().is_empty()).unwrap_or(&format!("dbt semantic model `{name}`"))),
            m.key.as_deref().unwrap_or("[]"),
            provenance(&origin(sm, source_file, &format!("semantic_models[{name}]")))
        );
        out.files.insert(format!("entities/{}.yaml", m.entity), text);
        out.entities += 1;
        for (dname, col) in &m.columns {
            out.names.insert(format!("{}__{dname}", m.entity), format!("{}.{col}", m.entity));
        }
    }
    // Versioned models: joined from every model holding their natural
    // entity, by the version valid at the metric's time; their dimensions
    // answer to the natural entity's name (`store__manager_name`), as in
    // MetricFlow, where no other model's dimension has that name.
    for v in &models {
        let Some(versioned) = &v.versioned else { continue };
        let vname = s(v.json, "name").unwrap_or("?");
        for m in models.iter().filter(|m| !std::ptr::eq(*m, v)) {
            let name = s(m.json, "name").unwrap_or("?");
            let held = arr(m.json, "entities").iter().find(|e| s(e, "name") == Some(versioned.entity.as_str()) && s(e, "type") != Some("natural"));
            let Some(e) = held else { continue };
            let col = s(e, "expr").unwrap_or(&versioned.entity).trim();
            if !is_identifier(col) {
                out.unmapped.push(Unmapped { item: format!("entity {name}.{}", versioned.entity), reason: "the key is a SQL expression".into() });
                continue;
            }
            let at = origin(v.json, source_file, &format!("semantic_models[{vname}].entities[{}]", versioned.entity));
            add_join(&mut out, (&m.entity, col), (&v.entity, &versioned.column), "many_to_one", Some(versioned), &at);
        }
        for (dname, col) in &v.columns {
            out.names.entry(format!("{}__{dname}", versioned.entity)).or_insert_with(|| format!("{}.{col}", v.entity));
        }
    }
    // Measures by name, with their model.
    let mut measures: BTreeMap<&str, (&Model<'_>, &Json)> = BTreeMap::new();
    for m in &models {
        for x in arr(m.json, "measures") {
            if let Some(n) = s(x, "name") {
                measures.insert(n, (m, x));
            }
        }
    }
    let by_name: BTreeMap<&str, &Json> = arr(manifest, "metrics").iter().filter_map(|x| s(x, "name").map(|n| (n, x))).collect();
    let identities: BTreeMap<String, String> = models.iter().filter_map(|m| Some((m.entity.clone(), format!("{}.{}", m.entity, m.key.as_ref()?)))).collect();
    let names = Names { dbt: out.names.clone(), identities };
    let mut mapped: BTreeSet<String> = BTreeSet::new();
    // Simple metrics whose own filter has OR: conversion events take plain filters only.
    let mut with_or: BTreeSet<String> = BTreeSet::new();
    // Simple metrics first, then ratios over them.
    for (name, metric) in &by_name {
        if s(metric, "type") == Some("simple") {
            let spine = SpineUse { named: out.time_spine.is_some(), custom_grains: &out.custom_grains };
            match simple_metric(name, metric, &measures, &models, &names, &spine, source_file) {
                Ok((text, or)) => {
                    if or {
                        with_or.insert(name.to_string());
                    }
                    out.files.insert(format!("metrics/{name}.yaml"), text);
                    mapped.insert(name.to_string());
                }
                Err(reason) => out.unmapped.push(Unmapped { item: format!("metric {name}"), reason }),
            }
        }
    }
    for (name, metric) in &by_name {
        match s(metric, "type") {
            Some("simple") | Some("ratio") | Some("derived") | Some("cumulative") => {}
            Some("conversion") => match conversion_metric(name, metric, &mapped, &with_or, &by_name, &measures, &models, source_file) {
                Ok(text) => {
                    out.files.insert(format!("metrics/{name}.yaml"), text);
                    mapped.insert(name.to_string());
                }
                Err(reason) => out.unmapped.push(Unmapped { item: format!("metric {name}"), reason }),
            },
            Some(other) => out.unmapped.push(Unmapped { item: format!("metric {name}"), reason: format!("{other} metrics are not imported yet") }),
            None => out.unmapped.push(Unmapped { item: format!("metric {name}"), reason: "no type".into() }),
        }
    }
    // Ratio, derived and cumulative metrics read other metrics: map them in
    // rounds until no more can be (a derived metric may read a ratio or
    // another derived metric, flattened by `nested`).
    let simple: BTreeSet<String> = by_name.iter().filter(|(_, m)| s(m, "type") == Some("simple")).map(|(n, _)| n.to_string()).filter(|n| mapped.contains(n)).collect();
    let mut composites: BTreeMap<String, nested::Composite> = BTreeMap::new();
    let mut pending: Vec<&str> =
        by_name.iter().filter(|(_, m)| matches!(s(m, "type"), Some("ratio") | Some("derived") | Some("cumulative"))).map(|(n, _)| *n).collect();
    let has_spine = out.time_spine.is_some();
    let map_one = |name: &str, metric: &Json, mapped: &BTreeSet<String>, composites: &mut BTreeMap<String, nested::Composite>| -> Result<String, Pending> {
        let reads = Reads { simple: &simple, composites, mapped, names: &names };
        let (text, composite) = match s(metric, "type") {
            Some("ratio") => ratio_metric(name, metric, &reads, source_file)?,
            Some("derived") => derived_metric(name, metric, &reads, has_spine, source_file)?,
            _ => return cumulative_metric(name, metric, mapped, has_spine, source_file),
        };
        composites.insert(name.to_string(), composite);
        Ok(text)
    };
    loop {
        let mut progress = false;
        let mut still = Vec::new();
        for name in pending {
            let Some(&metric) = by_name.get(name) else { continue };
            match map_one(name, metric, &mapped, &mut composites) {
                Ok(text) => {
                    out.files.insert(format!("metrics/{name}.yaml"), text);
                    mapped.insert(name.to_string());
                    progress = true;
                }
                Err(Pending::Waiting(_)) => still.push(name),
                Err(Pending::Never(reason)) => out.unmapped.push(Unmapped { item: format!("metric {name}"), reason }),
            }
        }
        pending = still;
        if !progress || pending.is_empty() {
            break;
        }
    }
    for &name in &pending {
        let Some(&metric) = by_name.get(name) else { continue };
        let reason = match cycle_through(name, &pending, &by_name) {
            Some(cycle) => Err(Pending::Never(format!("it reads itself through {}: metrics that read each other in a cycle have no value", cycle.join(" -> ")))),
            None => map_one(name, metric, &mapped, &mut composites),
        };
        if let Err(Pending::Waiting(reason) | Pending::Never(reason)) = reason {
            out.unmapped.push(Unmapped { item: format!("metric {name}"), reason });
        }
    }
    for sq in arr(manifest, "saved_queries") {
        let name = s(sq, "name").unwrap_or("?");
        match saved_query(name, sq, &mapped, source_file) {
            Ok(text) => {
                out.files.insert(format!("queries/{name}.yaml"), text);
                out.queries += 1;
            }
            Err(reason) => out.unmapped.push(Unmapped { item: format!("saved_query {name}"), reason }),
        }
    }
    drop_what_does_not_load(&mut out, &mut mapped);
    out.metrics = mapped.len();
    out
}

/// `Metric('revenue').descending(True)` as `-revenue`, `Dimension('x').descending(True)` as `-Dimension('x')`.
fn order_key(text: &str) -> String {
    let t = text.trim();
    let (inner, descending) = match t.strip_suffix(".descending(True)") {
        Some(inner) => (inner, true),
        None => (t.strip_suffix(".descending(False)").unwrap_or(t), false),
    };
    let inner = match inner.strip_prefix("Metric(").and_then(|x| x.strip_suffix(')')) {
        Some(args) => args.split(',').next().unwrap_or("").trim().trim_matches(|c| c == '\'' || c == '"').to_string(),
        None => inner.to_string(),
    };
    if descending { format!("-{inner}") } else { inner }
}

/// A saved query as `queries/<name>.yaml`: its metrics (all mapped), group-bys
/// and order in MetricFlow's names (requests read them), where strings, limit.
fn saved_query(name: &str, sq: &Json, mapped: &BTreeSet<String>, source_file: &str) -> Result<String, String> {
    if !is_identifier(name) {
        return Err("the name is not an identifier".into());
    }
    let p = sq.get("query_params").cloned().unwrap_or(Json::Null);
    let metrics: Vec<&str> = arr(&p, "metrics").iter().filter_map(Json::as_str).collect();
    if metrics.is_empty() {
        return Err("no metrics".into());
    }
    if let Some(m) = metrics.iter().find(|m| !mapped.contains(**m)) {
        return Err(format!("it reads metric `{m}`, which was not mapped"));
    }
    let quoted = |items: Vec<String>| items.iter().map(|x| q(x)).collect::<Vec<_>>().join(", ");
    let mut text = header(name, sq);
    text.push_str(&format!("metrics: [{}]\n", metrics.join(", ")));
    let group_by: Vec<String> = arr(&p, "group_by").iter().filter_map(Json::as_str).map(str::to_string).collect();
    if !group_by.is_empty() {
        text.push_str(&format!("group_by: [{}]\n", quoted(group_by)));
    }
    let wheres: Vec<String> = p.get("where").map(|w| arr(w, "where_filters")).unwrap_or(&[]).iter().filter_map(|w| s(w, "where_sql_template")).map(str::to_string).collect();
    if !wheres.is_empty() {
        text.push_str(&format!("where: [{}]\n", quoted(wheres)));
    }
    let order: Vec<String> = arr(&p, "order_by").iter().filter_map(Json::as_str).map(order_key).collect();
    if !order.is_empty() {
        text.push_str(&format!("order_by: [{}]\n", quoted(order)));
    }
    if let Some(n) = p.get("limit").and_then(Json::as_i64) {
        text.push_str(&format!("limit: {n}\n"));
    }
    text.push_str(&provenance(&origin(sq, source_file, &format!("saved_queries[{name}]"))));
    Ok(text)
}

/// What where strings resolve against.
struct Names {
    /// `customer__country` → `customer.country`.
    dbt: BTreeMap<String, String>,
    /// `customer` → `customer.customer_id`.
    identities: BTreeMap<String, String>,
}

/// A `filter` field as our filter items (YAML flow text).
#[derive(Default)]
struct Filters {
    items: Vec<String>,
    /// Whether some item is an `any_of`/`all_of` (a where string with OR),
    /// which only a simple metric's own `filter` can hold.
    or: bool,
}

/// The where strings of a `filter` field: plain filters, and `any_of` /
/// `all_of` items for the parts with OR.
fn filters_of(v: &Json, names: &Names, metric_time: Option<&str>) -> Result<Filters, String> {
    let Some(f) = v.get("filter").filter(|f| !f.is_null()) else { return Ok(Filters::default()) };
    let resolve = where_filter::resolver(&names.dbt, &names.identities, metric_time);
    let mut out = Filters::default();
    for w in arr(f, "where_filters") {
        let text = s(w, "where_sql_template").unwrap_or("");
        let (filters, any_of) = where_filter::conjuncts(where_filter::parse(text, &resolve)?);
        let atoms = filters.iter().chain(any_of.iter().flat_map(|c| c.atoms()));
        if atoms.into_iter().any(|f| f.get("metric").is_some()) {
            return Err(format!("the filter `{text}` compares a metric, which a metric's own filters cannot say yet"));
        }
        out.or |= !any_of.is_empty();
        out.items.extend(filters.iter().map(ToString::to_string));
        out.items.extend(any_of.iter().map(condition_item));
    }
    Ok(out)
}

/// `{any_of: [...]}` / `{all_of: [...]}` of a metric's `filter` list.
fn condition_item(c: &where_filter::Cond) -> String {
    match c {
        crate::model::Condition::Atom(f) => f.to_string(),
        crate::model::Condition::Any(cs) => format!("{{any_of: [{}]}}", cs.iter().map(condition_item).collect::<Vec<_>>().join(", ")),
        crate::model::Condition::All(cs) => format!("{{all_of: [{}]}}", cs.iter().map(condition_item).collect::<Vec<_>>().join(", ")),
    }
}

/// What a simple metric reads of the time spine: whether the manifest
/// names one, and its custom grains (which the metric's grains list).
struct SpineUse<'a> {
    named: bool,
    custom_grains: &'a [(String, String)],
}

/// A simple metric's file, and whether its filter has OR.
fn simple_metric(
    name: &str,
    metric: &Json,
    measures: &BTreeMap<&str, (&Model<'_>, &Json)>,
    models: &[Model<'_>],
    names: &Names,
    spine: &SpineUse<'_>,
    source_file: &str,
) -> Result<(String, bool), String> {
    let tp = metric.get("type_params").cloned().unwrap_or(Json::Null);
    let input = tp.get("measure").filter(|m| !m.is_null());
    // On the metric (latest spec) or on its measure input (legacy).
    let join_to_timespine = [Some(&tp), input].into_iter().flatten().any(|v| v.get("join_to_timespine") == Some(&Json::Bool(true)));
    let fill = [Some(&tp), input].into_iter().flatten().filter_map(|v| v.get("fill_nulls_with").filter(|f| !f.is_null())).next();
    let fill_nulls_with = match fill {
        None => None,
        Some(f) => Some(f.as_i64().ok_or_else(|| format!("fill_nulls_with `{f}` is not a whole number"))?),
    };
    if join_to_timespine && !spine.named {
        return Err("join_to_timespine needs the project's time spine, which the manifest does not name (project_configuration.time_spines)".into());
    }
    // The aggregation, its operand and parameters, and the model it reads.
    // `name_of_measure` names the computed column of an `expr` outside the grammar.
    let (model, agg, expr, params, non_additive, agg_time, name_of_measure) = match (input, tp.get("metric_aggregation_params").filter(|p| !p.is_null())) {
        (Some(input), _) => {
            let mname = s(input, "name").unwrap_or("?");
            let (model, x) = measures.get(mname).ok_or_else(|| format!("measure `{mname}` is not in a mapped semantic model"))?;
            let expr = s(x, "expr").unwrap_or(mname).to_string();
            (*model, s(x, "agg").unwrap_or(""), expr, x.get("agg_params").cloned(), x.get("non_additive_dimension").cloned(), s(x, "agg_time_dimension").map(str::to_string), mname)
        }
        (None, Some(p)) => {
            let sm = s(p, "semantic_model").unwrap_or("?");
            let model = models.iter().find(|m| s(m.json, "name") == Some(sm)).ok_or_else(|| format!("semantic model `{sm}` was not mapped"))?;
            let expr = s(&tp, "expr").unwrap_or(name).to_string();
            (model, s(p, "agg").unwrap_or(""), expr, p.get("agg_params").cloned(), p.get("non_additive_dimension").cloned(), s(p, "agg_time_dimension").map(str::to_string), name)
        }
        (None, None) => return Err("neither a measure nor aggregation parameters".into()),
    };
    let agg = agg_of(agg).ok_or_else(|| format!("aggregation `{agg}` has no equivalent"))?;
    let mut measure = format!("{{agg: {agg}");
    let expr = expr.trim();
    if let Some(f) = aggregate_inside(expr) {
        return Err(format!(
            "its `expr` `{}` calls the aggregate {f}: a measure's expr is row-level SQL that MetricFlow aggregates ({agg}) again, which does not run (a converter that could not read the metric wrote it whole)",
            crate::model::echo(expr)
        ));
    }
    if is_identifier(expr) {
        measure.push_str(&format!(", column: {expr}"));
    } else if needs_computed(expr) && model.computed.get(name_of_measure).is_some_and(|(e, _)| e == expr) {
        // SQL outside the grammar: the computed column named after it.
        measure.push_str(&format!(", column: {name_of_measure}"));
    } else {
        MeasureExpr::parse(expr).map_err(|e| format!("the measure's SQL `expr` is outside the expression grammar ({e})"))?;
        measure.push_str(&format!(", expression: {}", q(expr)));
    }
    if agg == "percentile" {
        let p = params.as_ref().and_then(|p| p.get("percentile")).and_then(Json::as_f64).ok_or("a percentile without `percentile`")?;
        if params.as_ref().and_then(|p| p.get("use_approximate_percentile")) == Some(&Json::Bool(true)) {
            return Err("an approximate percentile: ours are exact, so the numbers would differ from MetricFlow's".into());
        }
        measure.push_str(&format!(", percentile: {p}"));
        if params.as_ref().and_then(|p| p.get("use_discrete_percentile")) == Some(&Json::Bool(true)) {
            measure.push_str(", discrete: true");
        }
    }
    measure.push('}');
    let time = agg_time.or_else(|| model.agg_time_dimension.clone());
    let time_column = match &time {
        Some(t) => Some(format!("{}.{}", model.entity, model.columns.get(t).ok_or_else(|| format!("agg time dimension `{t}` was not mapped"))?)),
        None => None,
    };
    let mut filters = filters_of(metric, names, time_column.as_deref())?;
    if let Some(input) = input {
        let more = filters_of(input, names, time_column.as_deref())?;
        filters.items.extend(more.items);
        filters.or |= more.or;
    }
    let mut text = header(name, metric);
    text.push_str(&format!("entity: {}\nmeasure: {measure}\n", model.entity));
    if let Some(t) = &time_column {
        // The calendar grains, then the time spine's custom ones.
        let grains = match spine.custom_grains {
            [] => GRAINS.to_string(),
            custom => format!("{}, {}]", GRAINS.trim_end_matches(']'), custom.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")),
        };
        text.push_str(&format!("time_dimension: {t}\ntime_grains: {grains}\n"));
    }
    if !filters.items.is_empty() {
        text.push_str("filter:\n");
        for f in &filters.items {
            text.push_str(&format!("  - {f}\n"));
        }
    }
    if let Some(na) = non_additive.filter(|n| !n.is_null()) {
        let dim = s(&na, "name").unwrap_or("?");
        let col = model.columns.get(dim).ok_or_else(|| format!("non-additive dimension `{dim}` was not mapped"))?;
        let window = match s(&na, "window_choice") {
            Some("max") => "last",
            Some("min") => "first",
            other => return Err(format!("non-additive window `{}` has no equivalent", other.unwrap_or("?"))),
        };
        // window_groupings name entities; ours are columns of the anchor.
        let mut per = Vec::new();
        for g in arr(&na, "window_groupings") {
            let g = g.as_str().unwrap_or("?");
            let key = arr(model.json, "entities").iter().find(|e| s(e, "name") == Some(g)).and_then(|e| s(e, "expr").or(s(e, "name")));
            let key = key.ok_or_else(|| format!("window grouping `{g}` is not an entity of the model"))?;
            per.push(format!("{}.{key}", model.entity));
        }
        text.push_str(&format!("non_additive:\n  dimension: {}.{col}\n  window: {window}\n  per: [{}]\n", model.entity, per.join(", ")));
    }
    if let Some(v) = fill_nulls_with {
        text.push_str(&format!("fill_nulls_with: {v}\n"));
    }
    if join_to_timespine {
        if time_column.is_none() {
            return Err("join_to_timespine on a metric without an agg time dimension".into());
        }
        text.push_str("join_to_timespine: true\n");
    }
    text.push_str(&provenance(&origin(metric, source_file, &format!("metrics[{name}]"))));
    Ok((text, filters.or))
}

/// What a ratio or derived metric's inputs may read: simple metrics, the
/// ratio and derived metrics mapped so far (flattened), and anything else
/// mapped (a cumulative or conversion metric, which no input may read).
struct Reads<'a> {
    simple: &'a BTreeSet<String>,
    composites: &'a BTreeMap<String, nested::Composite>,
    mapped: &'a BTreeSet<String>,
    names: &'a Names,
}

impl Reads<'_> {
    /// One input of `what` (`the numerator`, `its input`): the metric it
    /// reads with its own filter items (ANDed, so no OR).
    fn input<'r>(&'r self, what: &str, v: &Json, alias: String, offset: Option<String>) -> Result<nested::Input<'r>, Pending> {
        let m = s(v, "name").unwrap_or("?");
        // metric_time inside an input filter would need the input's time dimension.
        let filters = filters_of(v, self.names, None).map_err(Pending::Never)?;
        if filters.or {
            return Err(Pending::Never(format!("{what} `{m}` has a filter with OR, which an input's filters cannot say (they are ANDed)")));
        }
        let read = if self.simple.contains(m) {
            nested::Read::Simple(m.to_string())
        } else if let Some(c) = self.composites.get(m) {
            nested::Read::Composite(c)
        } else if self.mapped.contains(m) {
            return Err(Pending::Never(format!("{what} `{m}` is a cumulative or conversion metric; ours read simple, ratio and derived metrics")));
        } else {
            return Err(Pending::Waiting(format!("{what} `{m}` was not mapped")));
        };
        Ok(nested::Input { alias, read, filters: filters.items, offset })
    }
}

/// A ratio metric: `type: ratio` over two simple metrics (their filters
/// included), or, when a side is itself a ratio or derived metric, the
/// same division written as a derived metric over the flattened inputs.
fn ratio_metric(name: &str, metric: &Json, reads: &Reads<'_>, source_file: &str) -> Result<(String, nested::Composite), Pending> {
    if metric.get("filter").is_some_and(|f| !f.is_null()) {
        return Err(Pending::Never("a filter on a ratio metric itself is not imported yet".into()));
    }
    let tp = metric.get("type_params").cloned().unwrap_or(Json::Null);
    let side = |key: &str| -> Result<nested::Input<'_>, Pending> {
        let v = tp.get(key).filter(|v| !v.is_null()).ok_or_else(|| Pending::Never(format!("no {key}")))?;
        if v.get("offset_window").is_some_and(|x| !x.is_null()) || v.get("offset_to_grain").is_some_and(|x| !x.is_null()) {
            return Err(Pending::Never(format!("the {key} has an offset, not imported yet")));
        }
        reads.input(&format!("the {key}"), v, key.to_string(), None)
    };
    let (num, den) = (side("numerator")?, side("denominator")?);
    let plain = |i: &nested::Input<'_>| match &i.read {
        nested::Read::Simple(m) if i.filters.is_empty() => Some(m.clone()),
        nested::Read::Simple(m) => Some(format!("{{metric: {m}, filter: [{}]}}", i.filters.join(", "))),
        nested::Read::Composite(_) => None,
    };
    let sides = plain(&num).zip(plain(&den));
    let composite = nested::ratio(num, den).map_err(Pending::Never)?;
    let mut text = header(name, metric);
    match sides {
        Some((num, den)) => text.push_str(&format!("type: ratio\nnumerator: {num}\ndenominator: {den}\n")),
        None => text.push_str(&nested::derived_yaml(&composite, &nested::text(&composite.expr))),
    }
    text.push_str(&provenance(&origin(metric, source_file, &format!("metrics[{name}]"))));
    Ok((text, composite))
}

/// The semantic model a simple metric reads: its measure's, or the one its
/// aggregation parameters name (latest spec).
fn model_of<'a, 'm>(metric: &Json, measures: &BTreeMap<&str, (&'a Model<'m>, &Json)>, models: &'a [Model<'m>]) -> Option<&'a Model<'m>> {
    let tp = metric.get("type_params")?;
    if let Some(m) = tp.get("measure").filter(|m| !m.is_null()) {
        return measures.get(s(m, "name")?).map(|(model, _)| *model);
    }
    let sm = s(tp.get("metric_aggregation_params")?, "semantic_model")?;
    models.iter().find(|m| s(m.json, "name") == Some(sm))
}

/// A conversion metric, as MetricFlow computes it (`counts:
/// conversion_rows`): the base and conversion metrics (a legacy measure is
/// read through the simple metric of its name), the entity's column on
/// each side plus the constant properties as key pairs, window and
/// calculation.
#[allow(clippy::too_many_arguments)]
fn conversion_metric(
    name: &str,
    metric: &Json,
    mapped: &BTreeSet<String>,
    with_or: &BTreeSet<String>,
    by_name: &BTreeMap<&str, &Json>,
    measures: &BTreeMap<&str, (&Model<'_>, &Json)>,
    models: &[Model<'_>],
    source_file: &str,
) -> Result<String, String> {
    if metric.get("filter").is_some_and(|f| !f.is_null()) {
        return Err("a filter on a conversion metric itself is not imported yet".into());
    }
    let p = metric.get("type_params").and_then(|t| t.get("conversion_type_params")).filter(|p| !p.is_null()).ok_or("no conversion_type_params")?;
    let side = |metric_key: &str, measure_key: &str| -> Result<(String, &Model<'_>), String> {
        let input = p.get(metric_key).filter(|v| !v.is_null()).or_else(|| p.get(measure_key).filter(|v| !v.is_null()));
        let input = input.ok_or_else(|| format!("no {metric_key} or {measure_key}"))?;
        let m = s(input, "name").unwrap_or("?");
        if input.get("filter").is_some_and(|f| !f.is_null()) {
            return Err(format!("its input `{m}` has a filter, not imported yet"));
        }
        if !mapped.contains(m) {
            return Err(format!("its input `{m}` was not mapped (a measure is read through the simple metric of its name)"));
        }
        let model = by_name.get(m).and_then(|x| model_of(x, measures, models)).ok_or_else(|| format!("the semantic model of `{m}` was not mapped"))?;
        Ok((m.to_string(), model))
    };
    let ((base, base_model), (conversion, conv_model)) = (side("base_metric", "base_measure")?, side("conversion_metric", "conversion_measure")?);
    if with_or.contains(&conversion) {
        return Err(format!("its conversion metric `{conversion}` has OR in its filter; conversion events take plain filters only"));
    }
    let entity = s(p, "entity").ok_or("no entity")?;
    let entity_column = |model: &Model<'_>| -> Result<String, String> {
        let e = arr(model.json, "entities").iter().find(|e| s(e, "name") == Some(entity));
        let col = e.and_then(|e| s(e, "expr").or(s(e, "name"))).ok_or_else(|| format!("`{}` has no entity `{entity}`", model.entity))?;
        if is_identifier(col) { Ok(col.to_string()) } else { Err(format!("the `{entity}` key of `{}` is a SQL expression", model.entity)) }
    };
    let (mut base_key, mut conv_key) = (vec![entity_column(base_model)?], vec![entity_column(conv_model)?]);
    for c in arr(p, "constant_properties") {
        let column = |model: &Model<'_>, key: &str| -> Result<String, String> {
            let dim = s(c, key).unwrap_or("?");
            model.columns.get(dim).cloned().ok_or_else(|| format!("constant property `{dim}` is not a mapped dimension of `{}`", model.entity))
        };
        base_key.push(column(base_model, "base_property")?);
        conv_key.push(column(conv_model, "conversion_property")?);
    }
    let calculation = match s(p, "calculation").unwrap_or("conversion_rate") {
        c @ ("conversion_rate" | "conversions") => c,
        other => return Err(format!("calculation `{other}` has no equivalent")),
    };
    let mut text = header(name, metric);
    text.push_str(&format!(
        "type: conversion\nbase: {base}\nconversion: {conversion}\nentity: {{base: [{}], conversion: [{}]}}\n",
        base_key.join(", "),
        conv_key.join(", ")
    ));
    if let Some(w) = p.get("window").filter(|w| !w.is_null()) {
        text.push_str(&format!("window: {}\n", interval(w).ok_or("a window it cannot read")?));
    }
    text.push_str(&format!("calculation: {calculation}\ncounts: conversion_rows\n"));
    text.push_str(&provenance(&origin(metric, source_file, &format!("metrics[{name}]"))));
    Ok(text)
}

/// Why a metric over other metrics is not mapped: yet (an input may still
/// be mapped in a later round) or at all.
enum Pending {
    Waiting(String),
    Never(String),
}

/// `{count: 7, granularity: day}` (or `"7 days"`) as our `7 days`.
fn interval(v: &Json) -> Option<String> {
    if let Some(text) = v.as_str() {
        return Some(text.trim().to_string());
    }
    let n = v.get("count")?.as_i64()?;
    let g = s(v, "granularity")?;
    Some(format!("{n} {g}{}", if n == 1 { "" } else { "s" }))
}

/// A derived metric: its inputs (each with its own filter, alias and
/// offset) over simple metrics, ratio and derived ones flattened.
fn derived_metric(name: &str, metric: &Json, reads: &Reads<'_>, has_time_spine: bool, source_file: &str) -> Result<(String, nested::Composite), Pending> {
    // MetricFlow applies a derived metric's own filter to each input's query.
    let own = filters_of(metric, reads.names, None).map_err(Pending::Never)?;
    if own.or {
        return Err(Pending::Never("its own filter has OR, which its inputs' filters cannot say (they are ANDed)".into()));
    }
    let tp = metric.get("type_params").cloned().unwrap_or(Json::Null);
    let expr = s(&tp, "expr").ok_or_else(|| Pending::Never("a derived metric without `expr`".into()))?;
    let parsed = MeasureExpr::parse(expr).map_err(|e| Pending::Never(format!("its expr `{expr}` is outside the expression grammar ({e})")))?;
    let mut inputs = Vec::new();
    for i in arr(&tp, "metrics") {
        let m = s(i, "name").unwrap_or("?");
        let alias = s(i, "alias").unwrap_or(m).to_string();
        // MetricFlow answers for every bucket where an input has rows, the
        // moved buckets included, and for every spine bucket of a period
        // whose start an offset_to_grain input has: ours with `periods: any_input`.
        let mut offset = None;
        if let Some(g) = s(i, "offset_to_grain") {
            if !has_time_spine {
                return Err(Pending::Never(format!("its input `{m}` has offset_to_grain, answered on the time spine, and the manifest names none")));
            }
            let g = crate::model::Grain::parse(g).ok_or_else(|| Pending::Never(format!("its input `{m}` has offset_to_grain `{g}`, not a grain")))?;
            offset = Some(format!("offset_to_grain: {}", g.as_str()));
        }
        if let Some(w) = i.get("offset_window").filter(|w| !w.is_null()) {
            offset = Some(format!("offset_window: {}", interval(w).ok_or_else(|| Pending::Never("an offset_window it cannot read".into()))?));
        }
        inputs.push(reads.input("its input", i, alias, offset)?);
    }
    let nested = inputs.iter().any(|i| matches!(i.read, nested::Read::Composite(_)));
    let mut composite = nested::flatten(&parsed, inputs).map_err(Pending::Never)?;
    if !own.items.is_empty() {
        // Whether the filter reads the moved rows or the unmoved ones is not pinned down here.
        if composite.leaves.iter().any(|l| l.offset.is_some()) {
            return Err(Pending::Never("a filter on a derived metric itself with a moved input (offset) is not imported yet".into()));
        }
        for leaf in &mut composite.leaves {
            leaf.filters.extend(own.items.iter().cloned());
        }
    }
    let mut text = header(name, metric);
    // Over simple metrics only: dbt's own expression, as written.
    let expression = if nested { nested::text(&composite.expr) } else { expr.to_string() };
    text.push_str(&nested::derived_yaml(&composite, &expression));
    text.push_str(&provenance(&origin(metric, source_file, &format!("metrics[{name}]"))));
    Ok((text, composite))
}

/// The metrics a ratio, derived or cumulative metric reads.
fn inputs_of(metric: &Json) -> Vec<&str> {
    let Some(tp) = metric.get("type_params") else { return Vec::new() };
    let mut out: Vec<&str> = arr(tp, "metrics").iter().filter_map(|i| s(i, "name")).collect();
    for key in ["numerator", "denominator", "measure"] {
        out.extend(tp.get(key).and_then(|v| s(v, "name")));
    }
    out.extend(tp.get("cumulative_type_params").and_then(|c| c.get("metric")).and_then(|m| s(m, "name")));
    out
}

/// A path from `start` back to itself through the inputs of metrics that
/// are still `pending` (`a`, `b`, `a`), if there is one.
fn cycle_through<'a>(start: &'a str, pending: &[&'a str], by_name: &BTreeMap<&'a str, &'a Json>) -> Option<Vec<&'a str>> {
    let mut path = vec![start];
    let mut seen = BTreeSet::new();
    fn walk<'a>(at: &'a str, start: &str, pending: &[&'a str], by_name: &BTreeMap<&'a str, &'a Json>, path: &mut Vec<&'a str>, seen: &mut BTreeSet<&'a str>) -> bool {
        let Some(metric) = by_name.get(at) else { return false };
        for next in inputs_of(metric) {
            let Some(&next) = pending.iter().find(|p| **p == next) else { continue };
            path.push(next);
            if next == start || (seen.insert(next) && walk(next, start, pending, by_name, path, seen)) {
                return true;
            }
            path.pop();
        }
        false
    }
    walk(start, start, pending, by_name, &mut path, &mut seen).then_some(path)
}

fn cumulative_metric(name: &str, metric: &Json, mapped: &BTreeSet<String>, has_time_spine: bool, source_file: &str) -> Result<String, Pending> {
    if metric.get("filter").is_some_and(|f| !f.is_null()) {
        return Err(Pending::Never("a filter on a cumulative metric itself is not imported yet".into()));
    }
    let tp = metric.get("type_params").cloned().unwrap_or(Json::Null);
    let cum = tp.get("cumulative_type_params").cloned().unwrap_or(Json::Null);
    // MetricFlow computes a cumulative metric on every day of the time
    // spine, then takes one day's value per bucket (`first` unless said):
    // ours does the same with `period_agg`, which needs the spine.
    let period_agg = s(&cum, "period_agg").unwrap_or("first");
    if !["first", "last", "average"].contains(&period_agg) {
        return Err(Pending::Never(format!("period_agg `{period_agg}` has no equivalent")));
    }
    if !has_time_spine {
        return Err(Pending::Never(
            "MetricFlow computes cumulative metrics on the time spine, which the manifest does not name (project_configuration.time_spines)".into(),
        ));
    }
    // The input: a metric (v2) or a measure (legacy), which a simple metric of the same name reads.
    let input = cum
        .get("metric")
        .filter(|m| !m.is_null())
        .and_then(|m| s(m, "name"))
        .or_else(|| tp.get("measure").filter(|m| !m.is_null()).and_then(|m| s(m, "name")))
        .ok_or_else(|| Pending::Never("a cumulative metric without an input".into()))?;
    if !mapped.contains(input) {
        return Err(Pending::Waiting(format!("its input `{input}` was not mapped (a measure is read through the simple metric of its name)")));
    }
    let mut text = header(name, metric);
    text.push_str(&format!("type: cumulative\nmetric: {input}\nperiod_agg: {period_agg}\n"));
    let window = cum.get("window").filter(|w| !w.is_null()).or_else(|| tp.get("window").filter(|w| !w.is_null()));
    let grain_to_date = s(&cum, "grain_to_date").or_else(|| s(&tp, "grain_to_date"));
    match (window, grain_to_date) {
        (Some(w), None) => text.push_str(&format!("window: {}\n", interval(w).ok_or_else(|| Pending::Never("a window it cannot read".into()))?)),
        (None, Some(g)) => text.push_str(&format!("grain_to_date: {g}\n")),
        (None, None) => {}
        (Some(_), Some(_)) => return Err(Pending::Never("both a window and grain_to_date".into())),
    }
    text.push_str(&provenance(&origin(metric, source_file, &format!("metrics[{name}]"))));
    Ok(text)
}

/// The loader is the final judge: a metric file it refuses (a rule of our
/// grammar the mapping did not foresee) is taken out and listed with the
/// loader's own message, and so is anything that read it, until the
/// project loads.
fn drop_what_does_not_load(out: &mut Imported, mapped: &mut BTreeSet<String>) {
    use crate::model::{load_project_from_files, FileKind};
    for _ in 0..32 {
        let files: Vec<(FileKind, std::path::PathBuf, String)> = out
            .files
            .iter()
            .filter_map(|(rel, text)| Some((FileKind::of_project_path(rel)?, std::path::PathBuf::from(rel), text.clone())))
            .chain(out.time_spine_setting().map(|line| (FileKind::Settings, std::path::PathBuf::from("schemabrain.yaml"), format!("version: 1\n{line}"))))
            .collect();
        let (_, diags) = load_project_from_files(&files);
        let bad: BTreeMap<String, String> = diags
            .iter()
            .filter_map(|d| {
                let rel = d.file.to_string_lossy().to_string();
                (rel.starts_with("metrics/") || rel.starts_with("queries/")).then(|| (rel, d.message.clone()))
            })
            .collect();
        if bad.is_empty() {
            return;
        }
        for (rel, message) in bad {
            out.files.remove(&rel);
            let reason = format!("the grammar refuses it: {message}");
            if let Some(query) = rel.strip_prefix("queries/") {
                out.queries = out.queries.saturating_sub(1);
                out.unmapped.push(Unmapped { item: format!("saved_query {}", query.trim_end_matches(".yaml")), reason });
                continue;
            }
            let name = rel.trim_start_matches("metrics/").trim_end_matches(".yaml").to_string();
            mapped.remove(&name);
            out.unmapped.push(Unmapped { item: format!("metric {name}"), reason });
        }
    }
}
