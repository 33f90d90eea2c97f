//! Data-driven cases (`e2e-tests/cases/*.yaml`): a request built from a fixture and RFC 6902
//! patches, settings, and what the API server must see. Adding a case needs no Rust code.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::admission::Evaluation;
use crate::host::{Error, PolicyHost};
use crate::workspace_dir;

#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Case {
    pub name: String,
    /// A manifest in `fixtures/` (without `.yaml`), or an inline `object`.
    #[serde(default)]
    pub fixture: Option<String>,
    #[serde(default)]
    pub object: Option<Value>,
    /// RFC 6902 operations applied to the fixture or object.
    #[serde(default)]
    pub patch: Vec<Value>,
    #[serde(default = "create")]
    pub operation: String,
    /// `same` (the new object), or a fixture/object/patch of its own (the patch applies to the
    /// case's fixture when it names none). Absent: no `oldObject`.
    #[serde(default)]
    pub old: Option<Old>,
    /// `request.kind`; by default taken from the object's `apiVersion` and `kind`.
    #[serde(default)]
    pub kind: Option<Value>,
    #[serde(default)]
    pub sub_resource: Option<String>,
    #[serde(default)]
    pub dry_run: bool,
    #[serde(default = "empty_object")]
    pub settings: Value,
    /// Fields set over the AdmissionRequest last; `null` removes the field.
    #[serde(default)]
    pub request: Map<String, Value>,
    pub expect: Expect,
}

#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
pub enum Old {
    Same(Same),
    Object(Source),
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Same {
    Same,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields, default)]
pub struct Source {
    pub fixture: Option<String>,
    pub object: Option<Value>,
    pub patch: Vec<Value>,
}

#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct Expect {
    /// `validate_settings` refuses the settings with exactly this message.
    pub settings_refused: Option<String>,
    pub allowed: Option<bool>,
    /// `status.message`, exactly.
    pub message: Option<String>,
    pub code: Option<u16>,
    /// The warnings, exactly and in order (none when omitted).
    pub warnings: Vec<String>,
    /// Values at JSON pointers of the patched object.
    pub patched: BTreeMap<String, Value>,
    /// JSON pointers that must not exist in the patched object.
    pub absent: Vec<String>,
    /// `true`: a patch is expected; `false`: none. Default: a patch exactly when `patched` or
    /// `onlyChanged` is given.
    pub patch: Option<bool>,
    /// Every patch operation's path is one of these pointers or a parent of one.
    pub only_changed: Option<Vec<String>>,
}

fn create() -> String {
    "CREATE".to_owned()
}

fn empty_object() -> Value {
    json!({})
}

pub fn cases_dir() -> PathBuf {
    workspace_dir().join("e2e-tests").join("cases")
}

/// Every case of every `*.yaml` file in `dir`, named `file: case`.
pub fn load_all(dir: &Path) -> Result<Vec<(String, Case)>, Error> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let mut all = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file)?;
        let cases: Vec<Case> =
            serde_yaml::from_str(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let stem = file
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        all.extend(
            cases
                .into_iter()
                .map(|case| (format!("{stem}: {}", case.name), case)),
        );
    }
    Ok(all)
}

pub fn fixture(name: &str) -> Result<Value, Error> {
    let path = workspace_dir()
        .join("fixtures")
        .join(format!("{name}.yaml"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(serde_yaml::from_str(&text)?)
}

fn apply(mut doc: Value, ops: &[Value]) -> Result<Value, Error> {
    let patch: json_patch::Patch = serde_json::from_value(Value::Array(ops.to_vec()))?;
    json_patch::patch(&mut doc, &patch)?;
    Ok(doc)
}

impl Source {
    fn build(&self, default_fixture: Option<&str>) -> Result<Value, Error> {
        let base = match (&self.object, self.fixture.as_deref().or(default_fixture)) {
            (Some(object), _) => object.clone(),
            (None, Some(name)) => fixture(name)?,
            (None, None) => return Err("a case needs a fixture or an object".into()),
        };
        apply(base, &self.patch)
    }
}

impl Case {
    /// The AdmissionRequest this case sends.
    pub fn request(&self) -> Result<Value, Error> {
        let source = Source {
            fixture: self.fixture.clone(),
            object: self.object.clone(),
            patch: self.patch.clone(),
        };
        let object = source.build(None)?;
        let old = match &self.old {
            None => Value::Null,
            Some(Old::Same(Same::Same)) => object.clone(),
            Some(Old::Object(old)) => old.build(self.fixture.as_deref())?,
        };
        let kind = self.kind.clone().unwrap_or_else(|| kind_of(&object));
        let mut request = json!({
            "uid": "1299d386-525b-4032-98ae-1949f69f9cfc",
            "kind": kind,
            "resource": {"group": kind["group"], "version": kind["version"], "resource": "virtualmachines"},
            "name": object.pointer("/metadata/name").cloned().unwrap_or(Value::Null),
            "namespace": object.pointer("/metadata/namespace").cloned().unwrap_or(Value::Null),
            "operation": self.operation,
            "userInfo": {"username": "system:serviceaccount:harvester-system:harvester", "groups": ["system:authenticated"]},
            "object": object,
            "oldObject": old,
            "dryRun": self.dry_run,
        });
        if let Some(sub) = &self.sub_resource {
            request["subResource"] = json!(sub);
        }
        if let Some(fields) = request.as_object_mut() {
            for (key, value) in &self.request {
                match value {
                    Value::Null => fields.remove(key),
                    other => fields.insert(key.clone(), other.clone()),
                };
            }
        }
        Ok(request)
    }

    /// Runs the case on a fresh instance; the differences from `expect`, or nothing.
    pub fn run(&self, host: &PolicyHost) -> Result<(), Error> {
        let request = self.request()?;
        let problems = self
            .expect
            .check(&request, &host.evaluate(&request, &self.settings)?);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n").into())
        }
    }
}

/// `{group, version, kind}` from the object's `apiVersion` and `kind` (a VirtualMachine by default).
fn kind_of(object: &Value) -> Value {
    let api_version = object["apiVersion"].as_str().unwrap_or("kubevirt.io/v1");
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let kind = object["kind"].as_str().unwrap_or("VirtualMachine");
    json!({"group": group, "version": version, "kind": kind})
}

impl Expect {
    pub fn check(&self, request: &Value, evaluation: &Evaluation) -> Vec<String> {
        let mut problems = Vec::new();
        let answer = match (evaluation, &self.settings_refused) {
            (Evaluation::SettingsRefused(got), Some(want)) => {
                if got != want {
                    problems.push(format!("settings message: want {want:?}, got {got:?}"));
                }
                return problems;
            }
            (Evaluation::SettingsRefused(got), None) => {
                return vec![format!("settings refused: {got}")];
            }
            (Evaluation::Answered(_), Some(want)) => {
                return vec![format!("settings accepted, want refused with {want:?}")];
            }
            (Evaluation::Answered(answer), None) => answer,
        };
        let response = &answer.response;
        let status = response.status.clone().unwrap_or_default();
        if let Some(allowed) = self.allowed
            && response.allowed != allowed
        {
            problems.push(format!(
                "allowed: want {allowed}, got {} ({:?})",
                response.allowed, status.message
            ));
        }
        if (self.message.is_some() || !response.allowed) && status.message != self.message {
            problems.push(format!(
                "message: want {:?}, got {:?}",
                self.message, status.message
            ));
        }
        let want_code = self.code.or((!response.allowed).then_some(422));
        if status.code != want_code && !response.allowed {
            problems.push(format!("code: want {want_code:?}, got {:?}", status.code));
        }
        let warnings = response.warnings.clone().unwrap_or_default();
        if warnings != self.warnings {
            problems.push(format!(
                "warnings: want {:?}, got {warnings:?}",
                self.warnings
            ));
        }
        let want_patch = self
            .patch
            .unwrap_or(!self.patched.is_empty() || self.only_changed.is_some());
        if answer.patch.is_some() != want_patch {
            problems.push(format!(
                "patch: want {}, got {}",
                if want_patch { "one" } else { "none" },
                answer
                    .patch
                    .as_ref()
                    .map_or("none".to_owned(), |p| json!(p).to_string())
            ));
        }
        if answer.patch.is_some() != response.patch_type.is_some() {
            problems.push("patchType must accompany patch".to_owned());
        }
        for (pointer, want) in &self.patched {
            let got = answer.object.pointer(pointer);
            if got != Some(want) {
                problems.push(format!(
                    "{pointer}: want {want}, got {}",
                    got.map_or("nothing".into(), Value::to_string)
                ));
            }
        }
        for pointer in &self.absent {
            if let Some(got) = answer.object.pointer(pointer) {
                problems.push(format!("{pointer}: want absent, got {got}"));
            }
        }
        if let (Some(allowed_paths), Some(patch)) = (&self.only_changed, &answer.patch) {
            for op in &patch.0 {
                let path = op_path(op);
                let owned = allowed_paths
                    .iter()
                    .any(|p| p == &path || p.starts_with(&format!("{path}/")));
                if !owned {
                    problems.push(format!("patch changes {path}, outside {allowed_paths:?}"));
                }
            }
        }
        if answer.patch.is_none() && answer.object != request["object"] {
            problems.push("the object changed without a patch".to_owned());
        }
        problems
    }
}

fn op_path(op: &json_patch::PatchOperation) -> String {
    json!(op)["path"].as_str().unwrap_or_default().to_owned()
}
