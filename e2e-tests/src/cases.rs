//! Data-driven cases (`e2e-tests/cases/*.yaml`): a request built from a fixture and RFC 6902
//! patches, settings, and what the API server must see. Adding a case needs no Rust code.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use policy_host::admission::{AdmissionResponse, Answer};
pub use policy_host::fixture;
use policy_host::{
    Call, Evaluation, FailRule, PolicyHost, RecordingCluster, host::Error, workspace_dir,
};

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
    /// What the policy's context-aware calls see. Absent: an empty cluster (lists are empty,
    /// gets are not found). Either way every call is recorded and checked against
    /// `expect.calls`.
    #[serde(default)]
    pub cluster: Option<ClusterSpec>,
    pub expect: Expect,
}

#[derive(Debug, Clone)]
pub enum Old {
    Same(Same),
    Object(Source),
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Same {
    Same,
}

/// `same`, or a source of its own; an error message that says which, unlike an untagged enum.
impl<'de> Deserialize<'de> for Old {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Old, D::Error> {
        struct OldVisitor;
        impl<'de> Visitor<'de> for OldVisitor {
            type Value = Old;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("`same`, or a source: {fixture, object, patch}")
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<Old, E> {
                match value {
                    "same" => Ok(Old::Same(Same::Same)),
                    other => Err(E::invalid_value(de::Unexpected::Str(other), &self)),
                }
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Old, A::Error> {
                Source::deserialize(de::value::MapAccessDeserializer::new(map)).map(Old::Object)
            }
        }
        deserializer.deserialize_any(OldVisitor)
    }
}

/// A manifest in `fixtures/` (`fixture: web-01-migratable`, `.yaml` optional) or an inline
/// `object`, then RFC 6902 `patch` operations. An empty source (`{}`) is an error; for `old:`
/// a patch alone applies to the case's fixture.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(try_from = "SourceFields")]
pub struct Source {
    pub fixture: Option<String>,
    pub object: Option<Value>,
    pub patch: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, default)]
#[derive(Default)]
struct SourceFields {
    fixture: Option<String>,
    object: Option<Value>,
    patch: Vec<Value>,
}

impl TryFrom<SourceFields> for Source {
    type Error = &'static str;

    fn try_from(fields: SourceFields) -> Result<Source, Self::Error> {
        match (&fields.fixture, &fields.object, fields.patch.is_empty()) {
            (None, None, true) => Err(
                "an empty source: give a fixture, an object or a patch (`old: same` is the new object)",
            ),
            (Some(_), Some(_), _) => Err("a source takes a fixture or an object, not both"),
            _ => Ok(Source {
                fixture: fields.fixture,
                object: fields.object,
                patch: fields.patch,
            }),
        }
    }
}

/// `cluster:` of a case.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct ClusterSpec {
    /// The cluster's objects (KubeVirt CRs, PVCs, any kind), each a source.
    pub objects: Vec<Source>,
    /// Calls that fail: `{operation, apiVersion?, kind?, name?, namespace?, message?}`.
    pub fail: Vec<FailRule>,
    /// The policy is granted no host capability (a policy-server without `hostCapabilities`).
    pub deny_all: bool,
    /// Lists come back as a plain `v1 List` (kube-rs' default), not `<Kind>List`.
    pub plain_lists: bool,
}

impl ClusterSpec {
    pub fn build(&self) -> Result<RecordingCluster, Error> {
        let objects = self
            .objects
            .iter()
            .enumerate()
            .map(|(i, source)| {
                source
                    .build(None)
                    .map_err(|e| format!("cluster.objects[{i}]: {e}").into())
            })
            .collect::<Result<Vec<Value>, Error>>()?;
        let mut cluster = self
            .fail
            .iter()
            .fold(RecordingCluster::new(objects), |cluster, rule| {
                cluster.fail(rule.clone())
            });
        if self.deny_all {
            cluster = cluster.deny_all();
        }
        if self.plain_lists {
            cluster = cluster.plain_lists();
        }
        Ok(cluster)
    }
}

/// One entry of `expect.calls`: the operation and the request fields that must be equal (the
/// YAML's camelCase names map to the SDK's snake_case request fields; unlisted fields are not
/// checked; `null` is a value: `namespace: null` wants no namespace).
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExpectedCall {
    /// `get_resource`, `list_resources_all`, `list_resources_by_namespace`, `can_i`.
    pub operation: String,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub api_version: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub kind: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub name: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub namespace: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub disable_cache: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub label_selector: Option<Value>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub field_selector: Option<Value>,
    /// Sorted, as the SDK sends a set.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub field_masks: Option<Value>,
    /// Any other request field, by its wire (snake_case) name.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub request: Map<String, Value>,
}

/// A field that is given, even as `null`.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

impl ExpectedCall {
    /// The request fields this entry checks, by wire name.
    pub fn fields(&self) -> Vec<(String, &Value)> {
        let named = [
            ("api_version", &self.api_version),
            ("kind", &self.kind),
            ("name", &self.name),
            ("namespace", &self.namespace),
            ("disable_cache", &self.disable_cache),
            ("label_selector", &self.label_selector),
            ("field_selector", &self.field_selector),
            ("field_masks", &self.field_masks),
        ];
        named
            .into_iter()
            .filter_map(|(field, want)| want.as_ref().map(|want| (field.to_owned(), want)))
            .chain(self.request.iter().map(|(k, v)| (k.clone(), v)))
            .collect()
    }

    /// The differences from a recorded call.
    pub fn check(&self, call: &Call) -> Vec<String> {
        let mut problems = Vec::new();
        if call.operation != self.operation {
            problems.push(format!(
                "operation: want {}, got {}",
                self.operation, call.operation
            ));
        }
        for (field, want) in self.fields() {
            let got = call.request.get(&field).unwrap_or(&Value::Null);
            if got != want {
                problems.push(format!("{field}: want {want}, got {got}"));
            }
        }
        problems
    }
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
    /// The host calls the policy makes, exactly and in order (none when omitted).
    pub calls: Vec<ExpectedCall>,
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

fn apply(mut doc: Value, ops: &[Value]) -> Result<Value, Error> {
    let patch: json_patch::Patch = serde_json::from_value(Value::Array(ops.to_vec()))?;
    json_patch::patch(&mut doc, &patch)?;
    Ok(doc)
}

impl Source {
    fn build(&self, default_fixture: Option<&str>) -> Result<Value, Error> {
        let base = match (&self.object, self.fixture.as_deref().or(default_fixture)) {
            (Some(object), _) => object.clone(),
            (None, Some(name)) => fixture(name.strip_suffix(".yaml").unwrap_or(name))?,
            (None, None) => return Err("a fixture or an object is needed".into()),
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

    /// The cluster this case's calls see (empty without `cluster:`).
    pub fn cluster(&self) -> Result<RecordingCluster, Error> {
        self.cluster
            .as_ref()
            .map_or_else(|| Ok(RecordingCluster::new(Vec::new())), ClusterSpec::build)
    }

    /// Evaluates the case on a fresh instance with its cluster, which then holds the calls made.
    pub fn evaluate(
        &self,
        host: &PolicyHost,
    ) -> Result<(Value, Evaluation, Arc<RecordingCluster>), Error> {
        let request = self.request()?;
        let cluster = Arc::new(self.cluster()?);
        let evaluation = host.evaluate_with_cluster(&request, &self.settings, cluster.clone())?;
        Ok((request, evaluation, cluster))
    }

    /// Runs the case on a fresh instance; the differences from `expect`, or nothing.
    pub fn run(&self, host: &PolicyHost) -> Result<(), Error> {
        let (request, evaluation, cluster) = self.evaluate(host)?;
        self.judge(&request, &evaluation, &cluster.calls())
    }

    /// The differences from `expect` of an evaluation of `request` (this case's) and of the
    /// calls it made, or nothing: the one check of the wasm suite and the native runner.
    pub fn judge(
        &self,
        request: &Value,
        evaluation: &Evaluation,
        calls: &[Call],
    ) -> Result<(), Error> {
        let mut problems = self.expect.check(request, evaluation);
        problems.extend(self.expect.check_calls(calls));
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
    /// The recorded calls against `calls`: the same number, each with the listed fields.
    pub fn check_calls(&self, calls: &[Call]) -> Vec<String> {
        let mut problems = Vec::new();
        for (i, (want, got)) in self.calls.iter().zip(calls).enumerate() {
            problems.extend(
                want.check(got)
                    .into_iter()
                    .map(|p| format!("calls[{i}] {}: {p}", want.operation)),
            );
        }
        if calls.len() != self.calls.len() {
            let made: Vec<String> = calls
                .iter()
                .map(|c| format!("{} {}", c.operation, c.request))
                .collect();
            problems.push(format!(
                "calls: want {}, got {}{}",
                self.calls.len(),
                calls.len(),
                made.iter().map(|m| format!("\n  {m}")).collect::<String>()
            ));
        }
        problems
    }

    /// The differences between this expectation and what the module answered to `request`.
    pub fn check(&self, request: &Value, evaluation: &Evaluation) -> Vec<String> {
        let answer = match (evaluation, &self.settings_refused) {
            (Evaluation::SettingsRefused(got), Some(want)) if got != want => {
                return vec![format!("settings message: want {want:?}, got {got:?}")];
            }
            (Evaluation::SettingsRefused(_), Some(_)) => return Vec::new(),
            (Evaluation::SettingsRefused(got), None) => {
                return vec![format!("settings refused: {got}")];
            }
            (Evaluation::Answered(_), Some(want)) => {
                return vec![format!("settings accepted, want refused with {want:?}")];
            }
            (Evaluation::Answered(answer), None) => answer,
        };
        let mut problems = self.check_response(&answer.response);
        problems.extend(self.check_patch(request, answer));
        problems
    }

    /// `allowed`, the message, the code and the warnings.
    fn check_response(&self, response: &AdmissionResponse) -> Vec<String> {
        let mut problems = Vec::new();
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
        problems
    }

    /// The patch, its type, the patched object's values and what else it changes.
    fn check_patch(&self, request: &Value, answer: &Answer) -> Vec<String> {
        let mut problems = Vec::new();
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
        if answer.patch.is_some() != answer.response.patch_type.is_some() {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(yaml: &str) -> Result<Vec<Case>, String> {
        serde_yaml::from_str(yaml).map_err(|e| e.to_string())
    }

    const HEAD: &str = "- name: x\n  fixture: web-01-migratable\n";

    #[test]
    fn schema_errors_are_reported_clearly() {
        let table = [
            ("  old: {}\n  expect: {}\n", "an empty source"),
            ("  old: {patch: []}\n  expect: {}\n", "an empty source"),
            (
                "  old: other\n  expect: {}\n",
                "invalid value: string \"other\", expected `same`",
            ),
            (
                "  old: {fixture: a, object: {}}\n  expect: {}\n",
                "a fixture or an object, not both",
            ),
            (
                "  old: {fixtures: a}\n  expect: {}\n",
                "unknown field `fixtures`",
            ),
            (
                "  cluster: {objects: [{}]}\n  expect: {}\n",
                "an empty source",
            ),
            (
                "  cluster: {denyall: true}\n  expect: {}\n",
                "unknown field `denyall`",
            ),
            (
                "  cluster: {fail: [{kind: KubeVirt}]}\n  expect: {}\n",
                "missing field `operation`",
            ),
            (
                "  cluster: {fail: [{operation: get_resource, labelSelector: a}]}\n  expect: {}\n",
                "unknown field `labelSelector`",
            ),
            (
                "  expect:\n    calls:\n    - {operation: get_resource, api_version: v1}\n",
                "unknown field `api_version`",
            ),
            (
                "  expect:\n    calls:\n    - {kind: KubeVirt}\n",
                "missing field `operation`",
            ),
        ];
        for (tail, want) in table {
            let got = parse(&format!("{HEAD}{tail}"));
            match got {
                Ok(_) => panic!("accepted: {tail}"),
                Err(e) => {
                    assert!(e.contains(want), "{tail}: want {want:?} in {e:?}");
                    assert!(e.contains("line "), "{tail}: no position in {e:?}");
                }
            }
        }
        let ok = [
            "  old: same\n  expect: {}\n",
            "  old: {patch: [{op: remove, path: /metadata/labels}]}\n  expect: {}\n",
            "  old: {fixture: web-01-migratable}\n  expect: {}\n",
        ];
        for tail in ok {
            assert!(parse(&format!("{HEAD}{tail}")).is_ok(), "{tail}");
        }
    }

    const WITH_CLUSTER: &str = r#"
- name: cluster and calls
  fixture: web-01-migratable
  cluster:
    objects:
    - fixture: kubevirt-cr.yaml
      patch: [{op: replace, path: /spec/configuration/evictionStrategy, value: LiveMigrate}]
    - object: {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data, namespace: team-a}}
    fail:
    - {operation: get_resource, kind: PersistentVolumeClaim, name: broken, message: timeout}
  expect:
    calls:
    - {operation: list_resources_all, apiVersion: kubevirt.io/v1, kind: KubeVirt, labelSelector: null}
    - {operation: get_resource, apiVersion: v1, kind: PersistentVolumeClaim, name: data, namespace: team-a}
"#;

    fn recorded(operation: &str, request: Value) -> Call {
        Call {
            operation: operation.to_owned(),
            request,
        }
    }

    #[test]
    fn cluster_and_calls() {
        let cases = parse(WITH_CLUSTER).unwrap_or_else(|e| panic!("{e}"));
        let case = &cases[0];
        let cluster = case.cluster().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cluster.objects().len(), 2);
        assert_eq!(
            cluster.objects()[0].pointer("/spec/configuration/evictionStrategy"),
            Some(&json!("LiveMigrate"))
        );
        let list = recorded(
            "list_resources_all",
            json!({"api_version": "kubevirt.io/v1", "kind": "KubeVirt", "label_selector": null,
                   "field_selector": null, "field_masks": null}),
        );
        let get = |name: &str, namespace: Value| {
            recorded(
                "get_resource",
                json!({"api_version": "v1", "kind": "PersistentVolumeClaim", "name": name,
                       "namespace": namespace, "disable_cache": false, "field_masks": null}),
            )
        };
        let expect = &case.expect;
        assert_eq!(
            expect.check_calls(&[list.clone(), get("data", json!("team-a"))]),
            Vec::<String>::new()
        );
        let table: Vec<(Vec<Call>, Vec<&str>)> = vec![
            (
                vec![list.clone()],
                vec!["calls: want 2, got 1\n  list_resources_all {"],
            ),
            (
                vec![get("data", json!("team-a")), list.clone()],
                vec![
                    "calls[0] list_resources_all: operation: want list_resources_all, got get_resource",
                    "calls[0] list_resources_all: api_version: want \"kubevirt.io/v1\", got \"v1\"",
                    "calls[1] get_resource: operation: want get_resource, got list_resources_all",
                ],
            ),
            (
                vec![list.clone(), get("data", Value::Null)],
                vec!["calls[1] get_resource: namespace: want \"team-a\", got null"],
            ),
            (
                vec![list.clone(), get("data", json!("team-a")), list.clone()],
                vec!["calls: want 2, got 3"],
            ),
        ];
        for (calls, wants) in table {
            let problems = expect.check_calls(&calls);
            for want in &wants {
                assert!(
                    problems.iter().any(|p| p.starts_with(want)),
                    "want {want:?} in {problems:#?}"
                );
            }
        }
        // Omitted `calls`: none may be made. `null` is a value to compare.
        let none = Expect::default();
        assert_eq!(none.check_calls(&[]), Vec::<String>::new());
        assert_eq!(none.check_calls(std::slice::from_ref(&list)).len(), 1);
        let want_null: ExpectedCall =
            serde_yaml::from_str("{operation: get_resource, namespace: null, request: {extra: 1}}")
                .unwrap_or_else(|e| panic!("{e}"));
        let mut call = get("data", Value::Null);
        assert_eq!(want_null.check(&call), vec!["extra: want 1, got null"]);
        call.request["extra"] = json!(1);
        assert_eq!(want_null.check(&call), Vec::<String>::new());
        assert_eq!(
            want_null.check(&get("data", json!("team-a"))),
            vec![
                "namespace: want null, got \"team-a\"",
                "extra: want 1, got null"
            ]
        );
    }
}
