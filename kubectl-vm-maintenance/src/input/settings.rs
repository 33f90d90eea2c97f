//! The policy settings the commands are given: read from a file (a settings document or a policy
//! manifest's `spec.settings`), with an error at the file's own line and column; checked by the
//! module's `validate_settings` as policy-server does at start-up; and refused in words.

use std::path::Path;

use policy_host::{PolicyHost, Session};
use serde::Deserialize;
use serde_json::{Value, json};
use vm_maintenance_strategy::settings::Settings;

use crate::input::files::{documents, read_text};

/// Settings the policy refuses, named by their file (`{}` for the default).
pub fn refused(path: Option<&Path>, message: &str) -> String {
    let shown = path.map_or_else(|| "{}".to_owned(), |p| p.display().to_string());
    format!("{shown}: the policy refuses these settings: {message}")
}

/// Settings from a file: the document itself, or a policy manifest's `spec.settings`. A value
/// of the wrong type is reported at the file's own line and column (the policy's settings read
/// from the file's text, YAML or JSON), not at a position in the JSON the module is given.
pub fn read_settings(path: &Path) -> Result<Value, String> {
    let text = read_text(path)?;
    let mut documents = documents(&text, path)?;
    if documents.len() != 1 {
        return Err(format!(
            "{}: expected one settings document, found {}",
            path.display(),
            documents.len()
        ));
    }
    let document = documents.remove(0);
    let kind = document.get("kind").and_then(Value::as_str);
    let api_version = document.get("apiVersion").and_then(Value::as_str);
    let policy = api_version.is_some_and(|v| v.starts_with("policies.kubewarden.io/"))
        && matches!(kind, Some("ClusterAdmissionPolicy" | "AdmissionPolicy"));
    let settings = if policy {
        document
            .pointer("/spec/settings")
            .cloned()
            .unwrap_or_else(|| json!({}))
    } else {
        document
    };
    if !settings.is_object() {
        return Err(format!(
            "{}: settings must be an object (or a policy manifest with spec.settings)",
            path.display()
        ));
    }
    typed_settings(&text, policy).map_err(|e| refused(Some(path), &e))?;
    Ok(settings)
}

/// A policy manifest, read only for the errors of its settings.
#[derive(Deserialize)]
#[expect(dead_code, reason = "read for its errors only")]
struct Manifest {
    spec: Option<ManifestSpec>,
}

#[derive(Deserialize)]
#[expect(dead_code, reason = "read for its errors only")]
struct ManifestSpec {
    settings: Option<Settings>,
}

/// The settings read from the file's text into the policy's own type, so that an error carries
/// the file's line and column: `evictionStrategy.nonMigratable: unknown variant ... at line 4
/// column 18`. The consistency checks follow in [`check_settings`].
fn typed_settings(text: &str, manifest: bool) -> Result<(), String> {
    let json = text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with(['{', '[']);
    // The path is written relative to the settings, as the policy names fields.
    let relative = |message: String| match message.strip_prefix("spec.settings.") {
        Some(rest) => rest.to_owned(),
        None => message,
    };
    if json {
        // serde_json's errors name no field: serde_path_to_error adds it, as the policy does.
        let deserializer = &mut serde_json::Deserializer::from_str(text);
        let named = |path: String, error: String| match path.as_str() {
            "." | "?" | "spec" | "spec.settings" => error,
            _ => relative(format!("{path}: {error}")),
        };
        if manifest {
            serde_path_to_error::deserialize::<_, Manifest>(deserializer)
                .map(drop)
                .map_err(|e| named(e.path().to_string(), e.inner().to_string()))
        } else {
            serde_path_to_error::deserialize::<_, Option<Settings>>(deserializer)
                .map(drop)
                .map_err(|e| named(e.path().to_string(), e.inner().to_string()))
        }
    } else {
        // serde_yaml's errors name the field themselves.
        let read = if manifest {
            serde_yaml::from_str::<Manifest>(text).map(drop)
        } else {
            serde_yaml::from_str::<Option<Settings>>(text).map(drop)
        };
        read.map_err(|e| relative(e.to_string()))
    }
}

/// `validate_settings` once, as policy-server does at start-up: the session that judges every VM
/// with these settings.
pub fn check_settings<'h>(
    host: &'h PolicyHost,
    settings: &Value,
    path: Option<&Path>,
) -> Result<Session<'h>, String> {
    let session = host
        .session(settings)
        .map_err(|e| format!("validate_settings: {e}"))?;
    match session.settings_refused() {
        None => Ok(session),
        Some("") => Err(refused(path, "(no message)")),
        Some(message) => Err(refused(path, message)),
    }
}
