//! questions-ui.yml against the settings the module accepts: the module itself is asked (its
//! settings refuse unknown fields and name the known ones), so a renamed or new setting fails here.

use std::collections::BTreeSet;

use policy_host::PolicyHost;
use policy_tools::project::{self, validate_settings};
use serde_json::{Value, json};

use crate::Error;

const PROBE: &str = "zzProbe";

#[derive(serde::Deserialize, Debug)]
struct Questions {
    questions: Vec<Question>,
}

#[derive(serde::Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Question {
    variable: String,
    label: String,
    #[serde(rename = "type")]
    kind: String,
    default: Value,
    group: Option<String>,
    description: Option<String>,
    tooltip: Option<String>,
    #[serde(default)]
    options: Vec<String>,
    required: Option<bool>,
    hide_input: Option<bool>,
    show_if: Option<String>,
    value_multiline: Option<bool>,
    #[serde(default)]
    subquestions: Vec<Question>,
}

/// `{"a": {"b": value}}` for the path `a.b`.
fn at(path: &str, value: Value) -> Value {
    path.rsplit('.')
        .fold(value, |inner, key| json!({ key: inner }))
}

/// The field names listed by serde's "unknown field `zzProbe`, expected one of ..." message for
/// the object at `path` ("" = top level); None when `path` is not an object of settings.
fn fields_at(host: &PolicyHost, path: &str) -> Result<Option<BTreeSet<String>>, Error> {
    let probe = if path.is_empty() {
        json!({ PROBE: 1 })
    } else {
        at(path, json!({ PROBE: 1 }))
    };
    let Err(message) = validate_settings(host, &probe)? else {
        // An open map (`kubevirt.configuration`, a copy of the CR's, ignores what it does not
        // read): one setting, not an object of settings.
        return Ok(None);
    };
    let Some((_, list)) = message.split_once(&format!("unknown field `{PROBE}`, expected ")) else {
        return Ok(None);
    };
    let list = list.split(" at line").next().unwrap_or(list);
    Ok(Some(
        list.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect(),
    ))
}

/// Every leaf setting the module accepts, as dotted paths.
fn module_settings(host: &PolicyHost) -> Result<BTreeSet<String>, Error> {
    let mut leaves = BTreeSet::new();
    let mut todo = vec![String::new()];
    while let Some(path) = todo.pop() {
        let fields = fields_at(host, &path)?.ok_or(format!("{path}: not an object"))?;
        for field in fields {
            let child = if path.is_empty() {
                field
            } else {
                format!("{path}.{field}")
            };
            if fields_at(host, &child)?.is_some() {
                todo.push(child);
            } else {
                leaves.insert(child);
            }
        }
    }
    Ok(leaves)
}

fn load() -> Result<Vec<Question>, Error> {
    let questions: Questions = serde_yaml::from_str(&project::read_text("questions-ui.yml")?)?;
    Ok(questions.questions)
}

fn leaves(questions: &[Question]) -> Vec<&Question> {
    let mut out = Vec::new();
    for q in questions {
        if q.subquestions.is_empty() {
            out.push(q);
        } else {
            assert_eq!(
                q.kind, "map[",
                "{}: a question with subquestions is a map[",
                q.variable
            );
            for sub in &q.subquestions {
                let parent = sub.variable.rsplit_once('.').map(|(p, _)| p);
                assert_eq!(
                    parent,
                    Some(q.variable.as_str()),
                    "{} under {}",
                    sub.variable,
                    q.variable
                );
            }
            out.extend(leaves(&q.subquestions));
        }
    }
    out
}

#[test]
fn every_setting_has_a_question_and_every_question_a_setting() -> Result<(), Error> {
    let host = PolicyHost::load(&policy_tools::project::module_path())?;
    let accepted = module_settings(&host)?;
    assert!(
        accepted.contains("labelKey") && accepted.contains("evictionStrategy.nonMigratable"),
        "{accepted:?}"
    );
    let questions = load()?;
    let asked: BTreeSet<String> = leaves(&questions)
        .iter()
        .map(|q| q.variable.clone())
        .filter(|v| v != "description")
        .collect();
    let missing: Vec<_> = accepted.difference(&asked).collect();
    assert!(
        missing.is_empty(),
        "settings without a question: {missing:?}"
    );
    let unknown: Vec<_> = asked.difference(&accepted).collect();
    assert!(
        unknown.is_empty(),
        "questions for settings the module refuses: {unknown:?}"
    );
    Ok(())
}

/// Types, defaults and enum options agree with what the module accepts and refuses.
#[test]
fn types_defaults_and_options_match_the_module() -> Result<(), Error> {
    let host = PolicyHost::load(&policy_tools::project::module_path())?;
    let accepted = module_settings(&host)?;
    let questions = load()?;
    let failures = std::cell::RefCell::new(Vec::new());
    let check = |what: String, settings: Value, want_ok: bool| -> Result<(), Error> {
        let got = validate_settings(&host, &settings)?;
        if got.is_ok() != want_ok {
            failures
                .borrow_mut()
                .push(format!("{what}: {settings} -> {got:?}"));
        }
        Ok(())
    };
    for q in leaves(&questions) {
        if q.variable == "description" {
            assert_eq!(q.hide_input, Some(true));
            continue;
        }
        assert!(
            q.tooltip.is_some() || q.description.is_some(),
            "{}: help text",
            q.variable
        );
        assert!(q.group.is_some(), "{}: group", q.variable);
        assert!(!q.label.is_empty());
        match q.kind.as_str() {
            "boolean" => {
                assert!(q.default.is_boolean(), "{}: boolean default", q.variable);
                check(
                    format!("{} true", q.variable),
                    at(&q.variable, json!(true)),
                    true,
                )?;
                check(
                    format!("{} false", q.variable),
                    at(&q.variable, json!(false)),
                    true,
                )?;
                check(
                    format!("{} as a string", q.variable),
                    at(&q.variable, json!("yes")),
                    false,
                )?;
            }
            "enum" => {
                assert!(!q.options.is_empty(), "{}: options", q.variable);
                assert!(
                    q.default.is_null() || q.options.iter().any(|o| q.default == *o),
                    "{}: default among the options",
                    q.variable
                );
                for option in &q.options {
                    check(
                        format!("{} option", q.variable),
                        at(&q.variable, json!(option)),
                        true,
                    )?;
                }
                check(
                    format!("{} outside the options", q.variable),
                    at(&q.variable, json!("Bogus")),
                    false,
                )?;
            }
            "array[" => {
                let list = q
                    .default
                    .as_array()
                    .ok_or(format!("{}: list default", q.variable))?;
                check(
                    format!("{} default", q.variable),
                    at(&q.variable, q.default.clone()),
                    true,
                )?;
                check(
                    format!("{} empty", q.variable),
                    at(&q.variable, json!([])),
                    false,
                )?;
                check(
                    format!("{} bogus entry", q.variable),
                    at(&q.variable, json!(["Bogus"])),
                    false,
                )?;
                assert!(!list.is_empty());
            }
            "string" => {
                check(
                    format!("{} default", q.variable),
                    at(&q.variable, q.default.clone()),
                    true,
                )?;
            }
            // An open map (a copy of the KubeVirt CR's configuration): its default is accepted.
            "map[" => check(
                format!("{} default", q.variable),
                at(&q.variable, q.default.clone()),
                true,
            )?,
            other => failures
                .borrow_mut()
                .push(format!("{}: unexpected type {other}", q.variable)),
        }
        if let Some(condition) = &q.show_if {
            let (variable, _) = condition.split_once('=').ok_or("show_if: VAR=VALUE")?;
            assert!(
                accepted.contains(variable),
                "{}: show_if on {variable}",
                q.variable
            );
        }
        let _ = (q.required, q.value_multiline);
    }
    // The defaults of the form, all at once, are the module's defaults: they must be accepted.
    let mut all = json!({});
    for q in leaves(&questions) {
        if q.variable == "description" || q.default.is_null() {
            continue;
        }
        json_patch::merge(&mut all, &at(&q.variable, q.default.clone()));
    }
    check("all defaults".to_owned(), all, true)?;
    let failures = failures.into_inner();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}
