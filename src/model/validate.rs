//! Cross-reference checks over a loaded model: every name a definition uses
//! must exist, and every column must be on the entity it is used with.
//!
//! Column checks run only for entities whose columns are known (declared in
//! the model or overlaid from a catalog); `catalog::overlay` re-runs them
//! after it replaces the columns.

use super::*;

/// Adds a diagnostic for every dangling reference in `model`.
pub fn check(model: &SemanticModel, diags: &mut Diagnostics) {
    for e in model.entities.values() {
        for id in &e.identity {
            check_column(model, &e.name, id, &e.defined_at, "identity", diags);
        }
    }
    for j in model.joins.values() {
        let ok_source = check_entity(model, &j.source_entity, &j.defined_at, "source_entity", diags);
        let ok_target = check_entity(model, &j.target_entity, &j.defined_at, "target_entity", diags);
        for (i, k) in j.on.iter().enumerate() {
            if ok_source {
                check_column(model, &j.source_entity, &k.source, &j.defined_at, &format!("on[{i}].source"), diags);
            }
            if ok_target {
                check_column(model, &j.target_entity, &k.target, &j.defined_at, &format!("on[{i}].target"), diags);
            }
        }
    }
    for m in model.metrics.values() {
        check_metric(model, m, diags);
    }
}

fn check_metric(model: &SemanticModel, m: &Metric, diags: &mut Diagnostics) {
    let at = &m.defined_at;
    if !check_entity(model, &m.entity, at, "entity", diags) {
        return;
    }
    let key = match m.measure.operand {
        MeasureOperand::Column(_) => "measure.column",
        MeasureOperand::Expression(_) => "measure.expression",
    };
    for col in m.measure.columns() {
        check_column(model, &m.entity, col, at, key, diags);
    }
    if let Some(td) = &m.time_dimension {
        if td.entity != m.entity {
            diags.push(
                Diagnostic::new(
                    &at.file,
                    at.line_of("time_dimension"),
                    "time_dimension",
                    format!("the time dimension `{td}` must be a column of the anchor entity `{}`", m.entity),
                )
                .suggest(vec![format!("{}.{}", m.entity, td.column)]),
            );
        } else if check_column(model, &td.entity, &td.column, at, "time_dimension", diags) {
            let class = model.entities[&td.entity].column(&td.column).map(Column::type_class);
            if let Some(class) = class.filter(|c| *c != TypeClass::Unknown && !c.is_temporal()) {
                diags.push(Diagnostic::new(
                    &at.file,
                    at.line_of("time_dimension"),
                    "time_dimension",
                    format!("`{td}` is not a date or timestamp column (its type is {class:?})"),
                ));
            }
        }
    }
    for (i, f) in m.filters.iter().enumerate() {
        let key = format!("filter[{i}].column");
        if check_entity(model, &f.column.entity, at, &key, diags) {
            check_column(model, &f.column.entity, &f.column.column, at, &key, diags);
        }
    }
}

fn check_entity(model: &SemanticModel, name: &str, at: &Origin, key: &str, diags: &mut Diagnostics) -> bool {
    if model.entities.contains_key(name) {
        return true;
    }
    let names: Vec<&str> = model.entities.keys().map(String::as_str).collect();
    diags.push(
        Diagnostic::new(&at.file, at.line_of(key), key, format!("unknown entity `{name}`"))
            .allowed(names.iter().copied().take(20))
            .suggest(close_matches(name, names.iter().copied())),
    );
    false
}

/// Reports `column` missing from `entity` when the entity's columns are known.
/// Returns whether the column is there (or cannot be checked).
fn check_column(model: &SemanticModel, entity: &str, column: &str, at: &Origin, key: &str, diags: &mut Diagnostics) -> bool {
    let Some(e) = model.entities.get(entity) else {
        return false;
    };
    if !e.knows_columns() || e.column(column).is_some() {
        return true;
    }
    let names = e.column_names();
    let source = if e.columns_from_catalog { format!("table {}", e.table) } else { "its declared columns".to_string() };
    diags.push(
        Diagnostic::new(&at.file, at.line_of(key), key, format!("entity `{entity}` has no column `{column}` ({source})"))
            .allowed(names.iter().map(String::as_str).take(30))
            .suggest(close_matches(column, names.iter().map(String::as_str))),
    );
    false
}
