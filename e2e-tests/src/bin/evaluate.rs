//! `make run`: evaluates one request with the built module, like `kwctl run`.
//!
//! evaluate [REQUEST] [--settings SETTINGS]
//!                                 REQUEST: an AdmissionRequest or AdmissionReview, JSON or YAML
//!                                 (default: examples/legacy-vm-create.json); SETTINGS: JSON or YAML,
//!                                 the settings or a Kubewarden policy manifest whose
//!                                 `spec.settings` they are (default: `{}`).
//! evaluate --export-cases DIR [CASES]
//!                                 writes every e2e case as request/settings/expect JSON (for bats),
//!                                 and for every case the kwctl session replaying the calls it
//!                                 makes on the built module (`session.yml`; none for refused
//!                                 settings), or, when the cluster denies every call, an empty
//!                                 `deny-all` marker.
//!
//! Prints the AdmissionReview response on stdout (nothing else) and the decoded patch on stderr.
//! Exit: 0 answered (allowed or denied), 1 anything else: a file that cannot be read or parsed, a
//! request that is not an AdmissionRequest or AdmissionReview, settings the policy refuses, a bad
//! command line.

use std::path::Path;
use std::process::ExitCode;

use e2e_tests::cases;
use policy_host::{Evaluation, PolicyHost, default_module_path, workspace_dir};
use serde::Deserialize;
use serde_json::{Value, json};

type Error = Box<dyn std::error::Error + Send + Sync>;

const USAGE: &str =
    "usage: evaluate [REQUEST] [--settings SETTINGS] | evaluate --export-cases DIR [CASES]";

fn read_document(path: &Path) -> Result<Value, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(serde_yaml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?)
}

/// What every AdmissionRequest has and the policy's answer needs (kwctl refuses a request
/// without them too).
#[derive(Deserialize)]
#[allow(dead_code)]
struct RequiredFields {
    uid: String,
    kind: GroupVersionKind,
    operation: String,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct GroupVersionKind {
    group: String,
    version: String,
    kind: String,
}

/// The settings of a Kubewarden policy manifest (`policies.kubewarden.io`: `spec.settings`, absent =
/// `{}`); any other document is the settings themselves.
fn policy_settings(document: Value) -> Value {
    let is_manifest = document
        .get("apiVersion")
        .and_then(Value::as_str)
        .is_some_and(|v| v.starts_with("policies.kubewarden.io/"));
    match document {
        Value::Object(mut map) if is_manifest => map
            .get_mut("spec")
            .and_then(|spec| spec.get_mut("settings"))
            .map_or_else(|| json!({}), Value::take),
        other => other,
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "nothing (null)",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The AdmissionRequest of `document`: the document itself, or an AdmissionReview's `request`.
fn admission_request(document: Value) -> Result<Value, String> {
    const NOT: &str = "not an AdmissionRequest or AdmissionReview";
    let Value::Object(mut map) = document else {
        return Err(format!("{NOT}: the file holds {}", type_name(&document)));
    };
    let request = if map.get("kind").is_some_and(|k| k == "AdmissionReview") {
        match map.remove("request") {
            Some(request @ Value::Object(_)) => request,
            Some(other) => {
                return Err(format!(
                    "an AdmissionReview whose request is {}",
                    type_name(&other)
                ));
            }
            None => return Err("an AdmissionReview without request".to_owned()),
        }
    } else {
        Value::Object(map)
    };
    RequiredFields::deserialize(&request).map_err(|e| format!("{NOT}: {e}"))?;
    Ok(request)
}

fn evaluate(request_path: &Path, settings_path: Option<&Path>) -> Result<ExitCode, Error> {
    let request = admission_request(read_document(request_path)?)
        .map_err(|e| format!("{}: {e}", request_path.display()))?;
    let settings = match settings_path {
        Some(path) => policy_settings(read_document(path)?),
        None => json!({}),
    };
    let host = PolicyHost::load(&default_module_path())?;
    match host.evaluate(&request, &settings)? {
        Evaluation::SettingsRefused(message) => {
            eprintln!("Provided settings are not valid: {message}");
            Ok(ExitCode::FAILURE)
        }
        Evaluation::Answered(answer) => {
            let review = json!({
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "response": answer.response,
            });
            println!("{}", serde_json::to_string_pretty(&review)?);
            if let Some(patch) = &answer.patch {
                eprintln!(
                    "decoded patch (RFC 6902):\n{}",
                    serde_json::to_string_pretty(patch)?
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn export_cases(dir: &Path, cases_dir: &Path) -> Result<ExitCode, Error> {
    let all = cases::load_all(cases_dir)?;
    // The sessions are what the cases' calls were on the built module: every case gets one (a
    // case without `cluster:` runs on the e2e host's empty cluster, and may still ask it).
    let host = PolicyHost::load(&default_module_path())?;
    for (i, (name, case)) in all.into_iter().enumerate() {
        let case_dir = dir.join(format!("{i:03}"));
        std::fs::create_dir_all(&case_dir)?;
        if case.cluster.as_ref().is_some_and(|spec| spec.deny_all) {
            std::fs::write(case_dir.join("deny-all"), "")?;
        } else if case.expect.settings_refused.is_none() {
            let (_, _, cluster) = case.evaluate(&host).map_err(|e| format!("{name}: {e}"))?;
            std::fs::write(case_dir.join("session.yml"), cluster.session_yaml()?)?;
        }
        let expect = &case.expect;
        let files = [
            ("name.txt", Value::String(name)),
            ("request.json", case.request()?),
            ("settings.json", case.settings.clone()),
            (
                "expect.json",
                json!({
                    "settingsRefused": expect.settings_refused,
                    "allowed": expect.allowed,
                    "message": expect.message,
                    "warnings": expect.warnings,
                }),
            ),
        ];
        for (file, value) in files {
            // The name as it is; every other file JSON (settings may be a string too).
            let text = match value {
                Value::String(s) if file == "name.txt" => s,
                other => serde_json::to_string_pretty(&other)?,
            };
            std::fs::write(case_dir.join(file), text)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The command line of `evaluate` (the export, or one request).
enum Command {
    Export {
        dir: String,
        cases: Option<String>,
    },
    Evaluate {
        request: Option<String>,
        settings: Option<String>,
    },
}

fn parse(args: &[String]) -> Result<Command, Error> {
    if let [flag, rest @ ..] = args
        && flag == "--export-cases"
    {
        return match rest {
            [dir] => Ok(Command::Export {
                dir: dir.clone(),
                cases: None,
            }),
            [dir, cases] => Ok(Command::Export {
                dir: dir.clone(),
                cases: Some(cases.clone()),
            }),
            _ => Err(USAGE.into()),
        };
    }
    let (mut request, mut settings) = (None, None);
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--settings" => {
                let file = args.next().ok_or("--settings needs a file")?;
                if settings.replace(file.clone()).is_some() {
                    return Err("--settings given twice".into());
                }
            }
            flag if flag.starts_with('-') => {
                return Err(format!("unknown flag {flag}; {USAGE}").into());
            }
            file => {
                if request.replace(file.to_owned()).is_some() {
                    return Err(format!("one REQUEST only; {USAGE}").into());
                }
            }
        }
    }
    Ok(Command::Evaluate { request, settings })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = parse(&args).and_then(|command| match command {
        Command::Export { dir, cases } => {
            let cases = cases.map_or_else(cases::cases_dir, Into::into);
            export_cases(Path::new(&dir), &cases)
        }
        Command::Evaluate { request, settings } => {
            let request = request.map_or_else(
                || workspace_dir().join("examples/legacy-vm-create.json"),
                Into::into,
            );
            evaluate(&request, settings.as_deref().map(Path::new))
        }
    });
    result.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        ExitCode::FAILURE
    })
}
