//! `access_policy.yaml`: what each role may use (issue 37, item 2, in
//! part). A project without the file grants every caller everything, as
//! before; with it, an authenticated caller may use what one of its roles
//! grants, and nothing else.
//!
//! ```yaml
//! version: 1
//! roles:
//!   analyst:
//!     tools: [list_metrics, describe_entity, get_metric]   # absent: every tool
//!     metrics: [order_count, revenue]                      # absent: every metric
//!   eu_sales:
//!     row_filters: [{entity: store, where: "region_id = 3"}]  # auth::row_filter
//!   finance: {}                                            # everything
//! ```
//!
//! A role's grants are unions: a caller with two roles may use what either
//! grants. A caller none of whose roles is listed may use nothing. The
//! local user (stdio, the CLI) is the operator and is not restricted.
//! Metrics may be simple or derived metrics or saved queries; a derived
//! metric granted brings the metrics it is computed from into the model
//! the caller's calls plan against (they cannot be called by name).
//!
//! Read strictly like every project file: unknown keys, unknown tools and
//! unknown metrics are errors with file:line:key and close matches.
//!
//! Architecture invariant: decisions over names only; knows no tool's
//! behaviour, builds no envelope.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::row_filter::{RowFilterDecl, RowRestriction};
use crate::model::yaml::{parse_documents, Reader};
use crate::model::{close_matches, Diagnostic, Diagnostics};

pub const POLICY_FILE: &str = "access_policy.yaml";

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RoleGrant {
    /// `None`: every tool.
    pub tools: Option<BTreeSet<String>>,
    /// `None`: every metric.
    pub metrics: Option<BTreeSet<String>>,
    /// `None`: every entity.
    pub entities: Option<BTreeSet<String>>,
    /// PII categories seen beyond the project's policy (never a catastrophic one).
    pub pii_allowed: BTreeSet<String>,
}

/// The names a policy file is checked against when it loads.
#[derive(Clone, Copy, Debug)]
pub struct Known<'a> {
    pub tools: &'a [&'a str],
    pub metrics: &'a BTreeSet<String>,
    pub entities: &'a BTreeSet<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessPolicy {
    roles: BTreeMap<String, RoleGrant>,
    /// Each role's `row_filters` (`auth::row_filter`), in file order.
    row_filters: Vec<RowFilterDecl>,
}

/// Why a call is outside the caller's grants, and which role would allow it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denied {
    /// `tool `x`` or `metric `y``.
    pub what: String,
    /// The roles that grant it (empty: none does).
    pub granted_by: Vec<String>,
}

impl AccessPolicy {
    /// The project's policy, `None` when it has no policy file.
    pub fn load(dir: &Path, known: Known<'_>) -> Result<Option<AccessPolicy>, Diagnostics> {
        let file = dir.join(POLICY_FILE);
        match std::fs::read_to_string(&file) {
            Ok(text) => AccessPolicy::parse(&file, &text, known).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => {
                let mut d = Diagnostics::default();
                d.push(Diagnostic::new(&file, 0, "", format!("cannot read the access policy: {e}")));
                Err(d)
            }
        }
    }

    pub fn parse(file: &Path, text: &str, known: Known<'_>) -> Result<AccessPolicy, Diagnostics> {
        let (tools, metrics) = (known.tools, known.metrics);
        let mut diags = Diagnostics::default();
        let docs = parse_documents(file, text, &mut diags);
        let mut roles = BTreeMap::new();
        let mut row_filters = Vec::new();
        {
            let mut r = Reader { file: file.to_path_buf(), diags: &mut diags, key_lines: BTreeMap::new() };
            match docs.as_slice() {
                [doc] => {
                    if let Some(top) = r.mapping(doc, "", &["version", "roles"], &["roles"]) {
                        r.version(&top);
                        if let Some(f) = top.get("roles") {
                            let role_names = role_keys(f.node);
                            let names: Vec<&str> = role_names.iter().map(String::as_str).collect();
                            if let Some(m) = r.mapping(f.node, "roles", &names, &[]) {
                                for name in &role_names {
                                    let Some(g) = m.get(name) else { continue };
                                    let path = m.key_path(name);
                                    if !crate::model::is_identifier(name) {
                                        r.error(g.line, &path, "a role name is an identifier (letters, digits, _)");
                                        continue;
                                    }
                                    let Some(gm) = r.mapping(g.node, &path, &["tools", "metrics", "entities", "pii_allowed", "row_filters"], &[]) else { continue };
                                    let mut grant = RoleGrant::default();
                                    if let Some(lf) = gm.get("entities") {
                                        grant.entities = Some(read_entities(&mut r, lf, &gm.key_path("entities"), known.entities));
                                    }
                                    if let Some(lf) = gm.get("pii_allowed") {
                                        grant.pii_allowed = read_pii_allowed(&mut r, lf, &gm.key_path("pii_allowed"));
                                    }
                                    for (key, known) in [("tools", tools.iter().map(|t| t.to_string()).collect::<BTreeSet<_>>()), ("metrics", metrics.clone())] {
                                        let Some(lf) = gm.get(key) else { continue };
                                        let mut set = BTreeSet::new();
                                        for (ip, item) in r.list(lf, &gm.key_path(key)).unwrap_or_default() {
                                            let Some(v) = r.string(item, &ip) else { continue };
                                            if known.contains(&v) {
                                                set.insert(v);
                                            } else {
                                                let what = if key == "tools" { "tool" } else { "metric" };
                                                let d = r.diag(item.line, &ip, format!("unknown {what} `{}`", crate::model::echo(&v))).suggest(close_matches(&v, known.iter().map(String::as_str)));
                                                r.push(d);
                                            }
                                        }
                                        if key == "tools" {
                                            grant.tools = Some(set);
                                        } else {
                                            grant.metrics = Some(set);
                                        }
                                    }
                                    if let Some(lf) = gm.get("row_filters") {
                                        row_filters.extend(read_row_filters(&mut r, name, lf, &gm.key_path("row_filters")));
                                    }
                                    roles.insert(name.clone(), grant);
                                }
                            }
                        }
                    }
                }
                [] if r.diags.is_empty() => r.error(1, "roles", "the file is empty; it needs a `roles:` mapping"),
                [] => {}
                [_, second, ..] => r.error(crate::model::yaml::line_of(second), "", "one YAML document is expected"),
            }
        }
        if diags.is_empty() {
            Ok(AccessPolicy { roles, row_filters })
        } else {
            Err(diags)
        }
    }

    fn grants<'p>(&'p self, roles: &'p [String]) -> impl Iterator<Item = &'p RoleGrant> + 'p {
        roles.iter().filter_map(|r| self.roles.get(r))
    }

    fn granted_by(&self, allows: impl Fn(&RoleGrant) -> bool) -> Vec<String> {
        self.roles.iter().filter(|(_, g)| allows(g)).map(|(n, _)| n.clone()).collect()
    }

    pub fn check_tool(&self, roles: &[String], tool: &str) -> Result<(), Denied> {
        let allows = |g: &RoleGrant| g.tools.as_ref().is_none_or(|t| t.contains(tool));
        if self.grants(roles).any(allows) {
            return Ok(());
        }
        Err(Denied { what: format!("tool `{tool}`"), granted_by: self.granted_by(allows) })
    }

    pub fn check_metric(&self, roles: &[String], metric: &str) -> Result<(), Denied> {
        let allows = |g: &RoleGrant| g.metrics.as_ref().is_none_or(|m| m.contains(metric));
        if self.grants(roles).any(allows) {
            return Ok(());
        }
        Err(Denied { what: format!("metric `{metric}`"), granted_by: self.granted_by(allows) })
    }

    pub fn check_entity(&self, roles: &[String], entity: &str) -> Result<(), Denied> {
        let allows = |g: &RoleGrant| g.entities.as_ref().is_none_or(|e| e.contains(entity));
        if self.grants(roles).any(allows) {
            return Ok(());
        }
        Err(Denied { what: format!("entity `{entity}`"), granted_by: self.granted_by(allows) })
    }

    /// The entities the roles may use; `None`: all of them.
    pub fn visible_entities(&self, roles: &[String]) -> Option<BTreeSet<String>> {
        let mut out = BTreeSet::new();
        for g in self.grants(roles) {
            match &g.entities {
                None => return None,
                Some(e) => out.extend(e.iter().cloned()),
            }
        }
        Some(out)
    }

    /// The PII categories the roles see beyond the project's policy (never
    /// a catastrophic one: the file would not have loaded).
    pub fn pii_allowed(&self, roles: &[String]) -> BTreeSet<String> {
        self.grants(roles).flat_map(|g| g.pii_allowed.iter().cloned()).collect()
    }

    /// The metrics the roles may see; `None`: all of them.
    pub fn visible_metrics(&self, roles: &[String]) -> Option<BTreeSet<String>> {
        // No role of the policy: nothing is visible (the empty set).
        let mut out = BTreeSet::new();
        for g in self.grants(roles) {
            match &g.metrics {
                None => return None,
                Some(m) => out.extend(m.iter().cloned()),
            }
        }
        Some(out)
    }
}

impl AccessPolicy {
    /// Every role's row filters, in file order (checked against the model
    /// by `row_filter::check`).
    pub fn row_filters(&self) -> &[RowFilterDecl] {
        &self.row_filters
    }

    /// Whether `roles` read through row filters: each of them the policy
    /// lists has some (a role without any reads every row, and so does its
    /// holder). Cheap: the restriction itself is `row_restriction`.
    pub fn row_filtered(&self, roles: &[String]) -> bool {
        let mut held = roles.iter().filter(|r| self.roles.contains_key(*r)).peekable();
        held.peek().is_some() && held.all(|r| self.row_filters.iter().any(|d| d.role == *r))
    }

    /// The rows `roles` may read (`None`: every row).
    pub fn row_restriction(&self, roles: &[String], model: &crate::model::SemanticModel) -> Option<RowRestriction> {
        let names: BTreeSet<String> = self.roles.keys().cloned().collect();
        RowRestriction::of(&self.row_filters, &names, roles, model)
    }
}

/// `row_filters: [{entity: store, where: "region_id = 1"}, ...]` of one role.
fn read_row_filters(r: &mut Reader<'_>, role: &str, field: crate::model::yaml::Field<'_>, path: &str) -> Vec<RowFilterDecl> {
    let mut out = Vec::new();
    for (ip, item) in r.list(field, path).unwrap_or_default() {
        let Some(m) = r.mapping(item.node, &ip, &["entity", "where"], &["entity", "where"]) else { continue };
        let (Some(ef), Some(wf)) = (m.get("entity"), m.get("where")) else { continue };
        let entity = r.string(ef, &m.key_path("entity"));
        let condition = r.string(wf, &m.key_path("where"));
        if let (Some(entity), Some(condition)) = (entity, condition) {
            out.push(RowFilterDecl { role: role.to_string(), entity, condition, line: ef.line, where_line: wf.line, key: ip });
        }
    }
    out
}

impl Denied {
    /// The widening hint: the role that would allow it, or who to ask.
    pub fn widening_hint(&self) -> String {
        match self.granted_by.as_slice() {
            [] => format!("no role of {POLICY_FILE} grants {}; an operator can add it to a role there", self.what),
            roles => format!("role `{}` grants {}: ask an operator to give the caller that role ({POLICY_FILE})", roles.join("` or `"), self.what),
        }
    }
}

/// `entities:`: names of the model's entities.
fn read_entities(r: &mut Reader<'_>, lf: crate::model::yaml::Field<'_>, path: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    for (ip, item) in r.list(lf, path).unwrap_or_default() {
        let Some(v) = r.string(item, &ip) else { continue };
        if known.contains(&v) {
            set.insert(v);
        } else {
            let d = r.diag(item.line, &ip, format!("unknown entity `{}`", crate::model::echo(&v))).suggest(close_matches(&v, known.iter().map(String::as_str)));
            r.push(d);
        }
    }
    set
}

/// `pii_allowed:`: PII categories of the taxonomy, none on the catastrophic
/// floor (no role may see a credential, a card number or a government id).
fn read_pii_allowed(r: &mut Reader<'_>, lf: crate::model::yaml::Field<'_>, path: &str) -> BTreeSet<String> {
    use crate::model::{CATASTROPHIC_CATEGORIES, PII_CATEGORIES};
    let mut set = BTreeSet::new();
    for (ip, item) in r.list(lf, path).unwrap_or_default() {
        let Some(v) = r.string(item, &ip) else { continue };
        if CATASTROPHIC_CATEGORIES.contains(&v.as_str()) {
            r.error(
                item.line,
                &ip,
                format!("`{v}` is on the catastrophic floor ({}), which is blocked for every caller and cannot be widened for a role", CATASTROPHIC_CATEGORIES.join(", ")),
            );
        } else if PII_CATEGORIES.contains(&v.as_str()) {
            set.insert(v);
        } else {
            let d = r.diag(item.line, &ip, format!("unknown PII category `{}` (categories: {})", crate::model::echo(&v), PII_CATEGORIES.join(", "))).suggest(close_matches(&v, PII_CATEGORIES));
            r.push(d);
        }
    }
    set
}

/// The keys of a mapping node, as strings, for the reader's allowed list.
fn role_keys(node: &crate::model::yaml::Node) -> Vec<String> {
    use saphyr::{ScalarOwned, YamlDataOwned};
    match &node.data {
        YamlDataOwned::Mapping(map) => map
            .iter()
            .filter_map(|(k, _)| match &k.data {
                YamlDataOwned::Value(ScalarOwned::String(s)) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<AccessPolicy, Diagnostics> {
        let metrics: BTreeSet<String> = ["order_count", "revenue", "aov"].iter().map(|s| s.to_string()).collect();
        let entities: BTreeSet<String> = ["order", "customer", "store"].iter().map(|s| s.to_string()).collect();
        AccessPolicy::parse(Path::new("access_policy.yaml"), text, Known { tools: &["list_metrics", "get_metric", "query_sql"], metrics: &metrics, entities: &entities })
    }

    #[test]
    fn grants_are_unions_and_a_denial_names_the_role_that_grants() {
        let p = parse("version: 1\nroles:\n  analyst:\n    tools: [list_metrics, get_metric]\n    metrics: [order_count]\n  finance: {}\n").unwrap();
        let analyst = vec!["analyst".to_string()];
        assert!(p.check_tool(&analyst, "get_metric").is_ok());
        let d = p.check_tool(&analyst, "query_sql").unwrap_err();
        assert_eq!(d.granted_by, vec!["finance"]);
        assert!(d.widening_hint().contains("role `finance` grants tool `query_sql`"), "{}", d.widening_hint());
        assert!(p.check_metric(&analyst, "revenue").is_err());
        assert_eq!(p.visible_metrics(&analyst), Some(["order_count".to_string()].into_iter().collect()));
        let both = vec!["analyst".to_string(), "finance".to_string()];
        assert!(p.check_metric(&both, "revenue").is_ok() && p.visible_metrics(&both).is_none());
        // No listed role: nothing.
        let nobody = vec!["intern".to_string()];
        assert!(p.check_tool(&nobody, "list_metrics").is_err());
        assert_eq!(p.visible_metrics(&nobody), Some(BTreeSet::new()));
    }

    #[test]
    fn unknown_keys_tools_and_metrics_name_their_line() {
        let d = parse("version: 1\nroles:\n  analyst:\n    tool: [get_metric]\n    metrics: [revenu]\n  finance:\n    tools: [query_sqll]\n").unwrap_err().to_string();
        assert!(d.contains("access_policy.yaml:4: key `roles.analyst.tool`: unknown key"), "{d}");
        assert!(d.contains("access_policy.yaml:5: key `roles.analyst.metrics[0]`: unknown metric `revenu`") && d.contains("revenue"), "{d}");
        assert!(d.contains("access_policy.yaml:7") && d.contains("unknown tool `query_sqll`"), "{d}");
    }

    #[test]
    fn row_filters_are_read_strictly() {
        let p = parse("version: 1\nroles:\n  eu:\n    row_filters:\n      - {entity: store, where: \"region_id = 3\"}\n").unwrap();
        assert_eq!(p.row_filters().len(), 1);
        assert_eq!((p.row_filters()[0].entity.as_str(), p.row_filters()[0].condition.as_str(), p.row_filters()[0].where_line), ("store", "region_id = 3", 5));
        let d = parse("version: 1\nroles:\n  eu:\n    row_filters:\n      - {entity: store, when: x}\n    row_filter: []\n").unwrap_err().to_string();
        assert!(d.contains("access_policy.yaml:5") && d.contains("roles.eu.row_filters[0].when") && d.contains("unknown key"), "{d}");
        assert!(d.contains("roles.eu.row_filters[0].where"), "the missing key is named: {d}");
        assert!(d.contains("access_policy.yaml:6") && d.contains("roles.eu.row_filter"), "{d}");
    }

    #[test]
    fn entity_grants_are_unions_and_name_the_granting_role() {
        let p = parse("version: 1\nroles:\n  sales:\n    entities: [order]\n  people:\n    entities: [customer]\n  all: {}\n").unwrap();
        let sales = vec!["sales".to_string()];
        assert!(p.check_entity(&sales, "order").is_ok());
        let d = p.check_entity(&sales, "customer").unwrap_err();
        assert_eq!(d.granted_by, vec!["all", "people"]);
        assert!(d.widening_hint().contains("entity `customer`"), "{}", d.widening_hint());
        let both = vec!["sales".to_string(), "people".to_string()];
        assert_eq!(p.visible_entities(&both), Some(["order".to_string(), "customer".to_string()].into_iter().collect()));
        assert!(p.check_entity(&both, "store").is_err());
        assert_eq!(p.visible_entities(&["all".to_string()]), None);
    }

    #[test]
    fn pii_widening_names_categories_and_never_the_floor() {
        let p = parse("version: 1\nroles:\n  support:\n    pii_allowed: [contact, location]\n  sales: {}\n").unwrap();
        assert_eq!(p.pii_allowed(&["support".to_string(), "sales".to_string()]), ["contact".to_string(), "location".to_string()].into_iter().collect());
        assert!(p.pii_allowed(&["sales".to_string()]).is_empty());
        let d = parse("version: 1\nroles:\n  support:\n    pii_allowed: [contact, payment_card]\n    entities: [ordr]\n  x:\n    pii_allowed: [contcat]\n").unwrap_err().to_string();
        assert!(d.contains("access_policy.yaml:4: key `roles.support.pii_allowed[1]`") && d.contains("catastrophic floor"), "{d}");
        assert!(d.contains("access_policy.yaml:5: key `roles.support.entities[0]`: unknown entity `ordr`") && d.contains("order"), "{d}");
        assert!(d.contains("access_policy.yaml:7") && d.contains("unknown PII category `contcat`") && d.contains("contact"), "{d}");
    }
}
