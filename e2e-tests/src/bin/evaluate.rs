//! `make run`: evaluates one request with the built module, like `kwctl run`.
//!
//! evaluate [REQUEST [SETTINGS]]   REQUEST: an AdmissionRequest or AdmissionReview, JSON or YAML
//!                                 (default: examples/legacy-vm-create.json); SETTINGS: JSON or YAML.
//! evaluate --export-cases DIR [CASES]
//!                                 writes every e2e case as request/settings/expect JSON (for bats),
//!                                 and for every case the kwctl session replaying the calls it
//!                                 makes on the built module (`session.yml`; none for refused
//!                                 settings), or, when the cluster denies every call, an empty
//!                                 `deny-all` marker.
//!
//! Prints the AdmissionReview response on stdout and the decoded patch on stderr.

use std::path::Path;
use std::process::ExitCode;

use e2e_tests::cases;
use policy_host::{Evaluation, PolicyHost, default_module_path, workspace_dir};
use serde_json::{Value, json};

type Error = Box<dyn std::error::Error + Send + Sync>;

fn read_document(path: &Path) -> Result<Value, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(serde_yaml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?)
}

fn evaluate(request_path: &Path, settings_path: Option<&Path>) -> Result<ExitCode, Error> {
    let document = read_document(request_path)?;
    // An AdmissionReview carries the AdmissionRequest under `request`.
    let request = match document.get("request") {
        Some(request) if document.get("kind").is_some_and(|k| k == "AdmissionReview") => {
            request.clone()
        }
        _ => document,
    };
    let settings = match settings_path {
        Some(path) => read_document(path)?,
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

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.as_slice() {
        [flag, dir] if flag == "--export-cases" => {
            export_cases(Path::new(dir), &cases::cases_dir())
        }
        [flag, dir, cases] if flag == "--export-cases" => {
            export_cases(Path::new(dir), Path::new(cases))
        }
        [] => evaluate(
            &workspace_dir().join("examples/legacy-vm-create.json"),
            None,
        ),
        [request] => evaluate(Path::new(request), None),
        [request, settings] => evaluate(Path::new(request), Some(Path::new(settings))),
        _ => {
            Err("usage: evaluate [REQUEST [SETTINGS]] | evaluate --export-cases DIR [CASES]".into())
        }
    };
    result.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    })
}
