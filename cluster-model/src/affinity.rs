//! Node selectors and node affinity as Kubernetes matches them (NA =
//! `k8s.io/component-helpers/scheduling/corev1/nodeaffinity`, as Harvester vendors it): what
//! Harvester's maintenance mode checks a VMI's scheduling with, and where a PersistentVolume can
//! be mounted (restart.rs, R10). A leaf of the crate but for [`crate::object`].

use crate::Object;
use crate::object::ObjectExt;
use serde_json::Value;

/// `labels.SelectorFromSet(nodeSelector).Matches(node labels)`: every key present with exactly
/// that value.
pub fn node_selector_matches(selector: &Object, node: &Value) -> bool {
    let labels = node.labels();
    selector
        .iter()
        .all(|(key, want)| labels.and_then(|l| l.get(key)) == Some(want))
}

/// One parsed requirement of a node selector term.
pub(crate) enum Requirement<'a> {
    In(&'a str, Vec<&'a str>),
    NotIn(&'a str, Vec<&'a str>),
    Exists(&'a str),
    DoesNotExist(&'a str),
    Gt(&'a str, i64),
    Lt(&'a str, i64),
    /// `matchFields` on `metadata.name`.
    NameIn(&'a str),
    NameNotIn(&'a str),
}

/// Kubernetes' required node affinity (`v1.NodeSelector`) on one node (NA:40-102): the terms
/// are ORed, the expressions and fields of a term ANDed; a term with neither matches nothing; no
/// terms match nothing. Operators `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`
/// (`matchExpressions`); `In`/`NotIn` with one value on `metadata.name` (`matchFields`). Any
/// term that cannot be parsed is an `Err`, whatever the other terms say.
pub fn node_affinity_matches(selector: &Value, node: &Value) -> Result<bool, String> {
    let terms = parse_node_selector(selector)?;
    let label = |key: &str| node.label(key);
    let name = node.name();
    Ok(terms.iter().any(|term| {
        term.iter().all(|requirement| match requirement {
            Requirement::In(key, values) => label(key).is_some_and(|v| values.contains(&v)),
            Requirement::NotIn(key, values) => !label(key).is_some_and(|v| values.contains(&v)),
            Requirement::Exists(key) => label(key).is_some(),
            Requirement::DoesNotExist(key) => label(key).is_none(),
            Requirement::Gt(key, bound) => label(key)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v > *bound),
            Requirement::Lt(key, bound) => label(key)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v < *bound),
            Requirement::NameIn(value) => name == *value,
            Requirement::NameNotIn(value) => name != *value,
        })
    }))
}

/// The non-empty terms of a `v1.NodeSelector`, each as its requirements; every parse error of
/// every term, joined.
pub(crate) fn parse_node_selector(selector: &Value) -> Result<Vec<Vec<Requirement<'_>>>, String> {
    let terms: &[Value] = match selector.get("nodeSelectorTerms") {
        None | Some(Value::Null) => &[],
        Some(Value::Array(terms)) => terms,
        Some(_) => return Err("nodeSelectorTerms: not a list".to_owned()),
    };
    let mut parsed = Vec::new();
    let mut errors = Vec::new();
    for (i, term) in terms.iter().enumerate() {
        let list = |field: &str| match term.get(field) {
            None | Some(Value::Null) => Ok(&[][..]),
            Some(Value::Array(items)) => Ok(items.as_slice()),
            Some(_) => Err(format!("nodeSelectorTerms[{i}].{field}: not a list")),
        };
        let (expressions, fields) = match (list("matchExpressions"), list("matchFields")) {
            (Ok(e), Ok(f)) => (e, f),
            (e, f) => {
                errors.extend(e.err());
                errors.extend(f.err());
                continue;
            }
        };
        // "nil or empty term selects no objects" (NA:60-64).
        if expressions.is_empty() && fields.is_empty() {
            continue;
        }
        let mut requirements = Vec::new();
        for (j, expression) in expressions.iter().enumerate() {
            match expression_requirement(expression) {
                Ok(r) => requirements.push(r),
                Err(e) => errors.push(format!("nodeSelectorTerms[{i}].matchExpressions[{j}]: {e}")),
            }
        }
        for (j, field) in fields.iter().enumerate() {
            match field_requirement(field) {
                Ok(r) => requirements.push(r),
                Err(e) => errors.push(format!("nodeSelectorTerms[{i}].matchFields[{j}]: {e}")),
            }
        }
        parsed.push(requirements);
    }
    if errors.is_empty() {
        Ok(parsed)
    } else {
        Err(errors.join("; "))
    }
}

pub(crate) fn key_operator_values(requirement: &Value) -> Result<(&str, &str, Vec<&str>), String> {
    let key = requirement
        .get("key")
        .and_then(Value::as_str)
        .filter(|k| !k.is_empty())
        .ok_or("key: missing")?;
    let operator = requirement
        .get("operator")
        .and_then(Value::as_str)
        .ok_or("operator: missing")?;
    let values = match requirement.get("values") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(values)) => values
            .iter()
            .map(|v| v.as_str().ok_or("values: not strings"))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("values: not a list".to_owned()),
    };
    Ok((key, operator, values))
}

/// `nodeSelectorRequirementsAsSelector` (NA:214-251) with `labels.NewRequirement`'s checks.
pub(crate) fn expression_requirement(expression: &Value) -> Result<Requirement<'_>, String> {
    let (key, operator, values) = key_operator_values(expression)?;
    let int = |values: &[&str]| match values {
        [one] => one
            .parse::<i64>()
            .map_err(|_| format!("{operator}: value {one:?} is not an integer")),
        _ => Err(format!(
            "{operator}: exactly one value needed, got {}",
            values.len()
        )),
    };
    match operator {
        "In" | "NotIn" if values.is_empty() => Err(format!("{operator}: values can't be empty")),
        "In" => Ok(Requirement::In(key, values)),
        "NotIn" => Ok(Requirement::NotIn(key, values)),
        "Exists" | "DoesNotExist" if !values.is_empty() => {
            Err(format!("{operator}: values must be empty"))
        }
        "Exists" => Ok(Requirement::Exists(key)),
        "DoesNotExist" => Ok(Requirement::DoesNotExist(key)),
        "Gt" => Ok(Requirement::Gt(key, int(&values)?)),
        "Lt" => Ok(Requirement::Lt(key, int(&values)?)),
        other => Err(format!("{other:?} is not a valid node selector operator")),
    }
}

/// `nodeSelectorRequirementsAsFieldSelector` (NA:260-292): `metadata.name` only, `In` or
/// `NotIn`, exactly one value.
pub(crate) fn field_requirement(field: &Value) -> Result<Requirement<'_>, String> {
    let (key, operator, values) = key_operator_values(field)?;
    if key != "metadata.name" {
        return Err(format!("{key:?} is not a supported field (metadata.name)"));
    }
    match (operator, values.as_slice()) {
        ("In", [one]) => Ok(Requirement::NameIn(one)),
        ("NotIn", [one]) => Ok(Requirement::NameNotIn(one)),
        ("In" | "NotIn", _) => Err(format!(
            "{operator}: exactly one value needed, got {}",
            values.len()
        )),
        (other, _) => Err(format!("{other:?} is not a valid field selector operator")),
    }
}
