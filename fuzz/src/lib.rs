//! What the fuzz targets share: checks on the policy's answers, and a structured, VM-shaped input
//! (`arbitrary`) that always serialises to a well-formed `validate` payload, so the fuzzer spends
//! its time in the rules rather than in the JSON parser.

use arbitrary::Arbitrary;
use serde_json::{Map, Value, json};

pub const K: &str = "harvesterhci.io/maintain-mode-strategy";

/// The answer of `validate` must be a `ValidationResponse`: a JSON object with a boolean
/// `accepted`, a message and a code on rejection, and an object as `mutated_object`.
pub fn check_validation_answer(answer: &[u8]) -> Value {
    let answer: Value = match serde_json::from_slice(answer) {
        Ok(answer) => answer,
        // An object nested just under serde_json's limit of 128 comes back one level deeper
        // inside `mutated_object`; a host could not have parsed that request (two levels deeper
        // still) in the first place. Not a finding: the answer is only too deep for this parser.
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => return Value::Null,
        Err(e) => panic!(
            "validate answered no JSON ({e}): {}",
            String::from_utf8_lossy(answer)
        ),
    };
    let accepted = answer["accepted"]
        .as_bool()
        .unwrap_or_else(|| panic!("no boolean `accepted`: {answer}"));
    if !accepted {
        assert!(
            answer["message"].is_string(),
            "rejection without message: {answer}"
        );
        assert!(answer["code"].is_u64(), "rejection without code: {answer}");
        assert!(
            answer.get("mutated_object").is_none_or(Value::is_null),
            "rejection with a mutation: {answer}"
        );
    }
    if let Some(mutated) = answer.get("mutated_object").filter(|m| !m.is_null()) {
        assert!(
            mutated.is_object(),
            "mutated_object is not an object: {answer}"
        );
    }
    if let Some(warnings) = answer.get("warnings").filter(|w| !w.is_null()) {
        let ok = warnings
            .as_array()
            .is_some_and(|w| w.iter().all(Value::is_string));
        assert!(ok, "warnings are not a list of strings: {answer}");
    }
    answer
}

/// Every difference between `input` and `output` lies at one of `owned` (JSON paths as key
/// lists), or creates a parent of one where `input` had nothing or `null`.
pub fn differs_only_at(input: &Value, output: &Value, owned: &[Vec<&str>]) -> Result<(), String> {
    diff_at(Some(input), output, owned, &mut Vec::new())
}

fn diff_at(
    input: Option<&Value>,
    output: &Value,
    owned: &[Vec<&str>],
    path: &mut Vec<String>,
) -> Result<(), String> {
    if owned
        .iter()
        .any(|o| o.len() == path.len() && o.iter().zip(path.iter()).all(|(a, b)| a == b))
    {
        return Ok(());
    }
    let is_parent = owned
        .iter()
        .any(|o| o.len() > path.len() && o.iter().zip(path.iter()).all(|(a, b)| a == b));
    let empty = Map::new();
    let input_map = match input {
        Some(Value::Object(map)) => Some(map),
        None | Some(Value::Null) if is_parent => Some(&empty),
        _ => None,
    };
    match (input_map, output) {
        (Some(before), Value::Object(after)) if is_parent => {
            for key in before.keys() {
                if !after.contains_key(key) {
                    return Err(format!("/{}/{key}: removed", path.join("/")));
                }
            }
            for (key, value) in after {
                path.push(key.clone());
                let result = diff_at(before.get(key), value, owned, path);
                path.pop();
                result?;
            }
            Ok(())
        }
        // Exactly equal: the answer copies the request's text outside the owned paths.
        _ if input == Some(output) => Ok(()),
        _ => Err(format!(
            "/{}: changed from {} to {output}",
            path.join("/"),
            input.map_or("nothing".to_owned(), Value::to_string)
        )),
    }
}

/// The paths M1, M2 and M3 own for a label key.
pub fn owned_paths(key: &str) -> Vec<Vec<&str>> {
    vec![
        vec!["metadata", "labels", key],
        vec!["spec", "template", "metadata", "labels", key],
        vec!["spec", "template", "spec", "evictionStrategy"],
    ]
}

/// Any JSON value, bounded by the fuzzer's input length.
#[derive(Arbitrary, Debug, Clone)]
pub enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    pub fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => json!(b),
            Json::Int(i) => json!(i),
            Json::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Json::Str(s) => json!(s),
            Json::Array(items) => Value::Array(items.iter().map(Json::to_value).collect()),
            Json::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
        }
    }
}

/// A field that is absent, `null`, of the expected shape, or of any other JSON type.
#[derive(Arbitrary, Debug, Clone)]
pub enum Slot<T> {
    Absent,
    Null,
    Value(T),
    Wrong(Json),
}

impl<T> Slot<T> {
    fn put(&self, map: &mut Map<String, Value>, key: &str, f: impl FnOnce(&T) -> Value) {
        match self {
            Slot::Absent => {}
            Slot::Null => {
                map.insert(key.to_owned(), Value::Null);
            }
            Slot::Value(t) => {
                map.insert(key.to_owned(), f(t));
            }
            Slot::Wrong(j) => {
                map.insert(key.to_owned(), j.to_value());
            }
        }
    }
}

const STRATEGIES: [&str; 7] = [
    "Migrate",
    "ShutdownAndRestartAfterEnable",
    "ShutdownAndRestartAfterDisable",
    "Shutdown",
    "migrate",
    "",
    "Shutdown ",
];
const EVICTIONS: [&str; 5] = [
    "None",
    "LiveMigrate",
    "LiveMigrateIfPossible",
    "External",
    "Evict",
];

#[derive(Arbitrary, Debug, Clone)]
pub enum Key {
    TheKey,
    CaseVariant,
    Other(String),
}

#[derive(Arbitrary, Debug, Clone)]
pub enum Leaf {
    Strategy(u8),
    Str(String),
    Any(Json),
}

impl Leaf {
    fn to_value(&self, list: &[&str]) -> Value {
        match self {
            Leaf::Strategy(i) => json!(list[usize::from(*i) % list.len()]),
            Leaf::Str(s) => json!(s),
            Leaf::Any(j) => j.to_value(),
        }
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Labels(pub Vec<(Key, Leaf)>);

impl Labels {
    fn to_value(&self) -> Value {
        Value::Object(
            self.0
                .iter()
                .map(|(k, v)| {
                    let key = match k {
                        Key::TheKey => K.to_owned(),
                        Key::CaseVariant => "harvesterhci.io/Maintain-Mode-Strategy".to_owned(),
                        Key::Other(s) => s.clone(),
                    };
                    (key, v.to_value(&STRATEGIES))
                })
                .collect(),
        )
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Metadata {
    pub labels: Slot<Labels>,
    pub annotations: Slot<Vec<(AnnotationKey, Json)>>,
    pub extra: Vec<(String, Json)>,
}

#[derive(Arbitrary, Debug, Clone)]
pub enum AnnotationKey {
    VolumeClaimTemplates,
    AllowPodBridge,
    Other(String),
}

impl Metadata {
    fn to_value(&self) -> Value {
        let mut map: Map<String, Value> = self
            .extra
            .iter()
            .map(|(k, v)| (k.clone(), v.to_value()))
            .collect();
        self.labels.put(&mut map, "labels", Labels::to_value);
        self.annotations.put(&mut map, "annotations", |a| {
            Value::Object(
                a.iter()
                    .map(|(k, v)| {
                        let key = match k {
                            AnnotationKey::VolumeClaimTemplates => {
                                "harvesterhci.io/volumeClaimTemplates".to_owned()
                            }
                            AnnotationKey::AllowPodBridge => {
                                "kubevirt.io/allow-pod-bridge-network-live-migration".to_owned()
                            }
                            AnnotationKey::Other(s) => s.clone(),
                        };
                        let value = match v {
                            // The Harvester annotation is JSON text inside a string.
                            Json::Array(_) | Json::Object(_) => json!(v.to_value().to_string()),
                            other => other.to_value(),
                        };
                        (key, value)
                    })
                    .collect(),
            )
        });
        Value::Object(map)
    }
}

/// `spec.template.spec`: the fields the eviction and migratability rules read.
#[derive(Arbitrary, Debug, Clone)]
pub struct TemplateSpec {
    pub eviction_strategy: Slot<Leaf>,
    pub gpus: Slot<Vec<Json>>,
    pub host_devices: Slot<Vec<Json>>,
    pub launch_security: Slot<Json>,
    pub hyperv_passthrough: Option<Json>,
    pub interfaces: Slot<Vec<(u8, Json)>>,
    pub networks: Slot<Vec<(u8, bool)>>,
    pub volumes: Slot<Vec<(u8, Json)>>,
    pub extra: Vec<(String, Json)>,
}

impl TemplateSpec {
    fn to_value(&self) -> Value {
        let mut spec: Map<String, Value> = self
            .extra
            .iter()
            .map(|(k, v)| (k.clone(), v.to_value()))
            .collect();
        self.eviction_strategy
            .put(&mut spec, "evictionStrategy", |l| l.to_value(&EVICTIONS));
        let mut devices = Map::new();
        self.gpus.put(&mut devices, "gpus", |g| {
            json!(g.iter().map(Json::to_value).collect::<Vec<_>>())
        });
        self.host_devices.put(&mut devices, "hostDevices", |g| {
            json!(g.iter().map(Json::to_value).collect::<Vec<_>>())
        });
        self.interfaces.put(&mut devices, "interfaces", |items| {
            json!(
                items
                    .iter()
                    .map(|(n, v)| {
                        let mut i = json!({"name": format!("n{}", n % 4)});
                        i[["bridge", "masquerade", "sriov", "x"][usize::from(*n / 4) % 4]] =
                            v.to_value();
                        i
                    })
                    .collect::<Vec<_>>()
            )
        });
        let mut domain = json!({"devices": devices});
        self.launch_security.put(
            domain.as_object_mut().expect("object"),
            "launchSecurity",
            Json::to_value,
        );
        if let Some(enabled) = &self.hyperv_passthrough {
            domain["features"] = json!({"hypervPassthrough": {"enabled": enabled.to_value()}});
        }
        spec.insert("domain".to_owned(), domain);
        self.networks.put(&mut spec, "networks", |items| {
            json!(
                items
                    .iter()
                    .map(|(n, pod)| if *pod {
                        json!({"name": format!("n{}", n % 4), "pod": {}})
                    } else {
                        json!({"name": format!("n{}", n % 4), "multus": {"networkName": "x"}})
                    })
                    .collect::<Vec<_>>()
            )
        });
        self.volumes.put(&mut spec, "volumes", |items| {
            json!(
                items
                    .iter()
                    .map(|(n, v)| {
                        let kind = [
                            "hostDisk",
                            "persistentVolumeClaim",
                            "dataVolume",
                            "containerDisk",
                        ][usize::from(*n) % 4];
                        json!({"name": format!("v{n}"), kind: v.to_value()})
                    })
                    .collect::<Vec<_>>()
            )
        });
        Value::Object(spec)
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Template {
    pub metadata: Slot<Metadata>,
    pub spec: Slot<TemplateSpec>,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct VmObject {
    pub metadata: Slot<Metadata>,
    pub template: Slot<Template>,
    pub data_volume_templates: Slot<Vec<(Json, Option<Vec<u8>>)>>,
    pub extra: Vec<(String, Json)>,
}

impl VmObject {
    pub fn to_value(&self) -> Value {
        let mut map: Map<String, Value> = self
            .extra
            .iter()
            .map(|(k, v)| (k.clone(), v.to_value()))
            .collect();
        map.insert("apiVersion".to_owned(), json!("kubevirt.io/v1"));
        map.insert("kind".to_owned(), json!("VirtualMachine"));
        self.metadata.put(&mut map, "metadata", Metadata::to_value);
        let mut spec = Map::new();
        self.template.put(&mut spec, "template", |t| {
            let mut template = Map::new();
            t.metadata
                .put(&mut template, "metadata", Metadata::to_value);
            t.spec.put(&mut template, "spec", TemplateSpec::to_value);
            Value::Object(template)
        });
        self.data_volume_templates.put(&mut spec, "dataVolumeTemplates", |items| {
            json!(items
                .iter()
                .map(|(name, modes)| {
                    let modes: Option<Vec<&str>> = modes.as_ref().map(|m| {
                        m.iter().map(|i| ["ReadWriteOnce", "ReadWriteMany", "ReadOnlyMany"][usize::from(*i) % 3]).collect()
                    });
                    json!({"metadata": {"name": name.to_value()}, "spec": {"pvc": {"accessModes": modes}}})
                })
                .collect::<Vec<_>>())
        });
        map.insert("spec".to_owned(), Value::Object(spec));
        Value::Object(map)
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Other(String),
}

#[derive(Arbitrary, Debug, Clone)]
pub enum Old {
    None,
    Same,
    Other(VmObject),
    Any(Json),
}

#[derive(Arbitrary, Debug, Clone)]
pub enum Settings {
    Preset(u8),
    Any(Json),
}

const PRESETS: [&str; 9] = [
    "{}",
    r#"{"mutate": false}"#,
    r#"{"mutate": false, "requireLabel": false, "templateMismatch": "warn"}"#,
    r#"{"labelKey": "example.com/drain"}"#,
    r#"{"allowedStrategies": ["Shutdown", "Migrate"], "defaultStrategy": "Shutdown"}"#,
    r#"{"evictionStrategy": {"default": "LiveMigrateIfPossible"}}"#,
    r#"{"evictionStrategy": {"nonMigratable": "fix", "clusterDefault": "LiveMigrate"}}"#,
    r#"{"evictionStrategy": {"nonMigratable": "reject", "clusterDefault": "LiveMigrate", "allowed": ["LiveMigrate"]}}"#,
    r#"{"mutate": false, "templateMismatch": "ignore", "evictionStrategy": {"clusterDefault": "LiveMigrate"}}"#,
];

/// One structured `validate` request.
#[derive(Arbitrary, Debug, Clone)]
pub struct Request {
    pub operation: Operation,
    pub sub_resource: Option<String>,
    pub kubevirt_cr: bool,
    pub object: VmObject,
    pub old: Old,
    pub settings: Settings,
    pub dry_run: bool,
}

impl Request {
    /// The payload, the object, and whether the settings are one of the valid presets.
    pub fn payload(&self) -> (Vec<u8>, Value, bool) {
        let object = self.object.to_value();
        let operation = match &self.operation {
            Operation::Create => "CREATE".to_owned(),
            Operation::Update => "UPDATE".to_owned(),
            Operation::Delete => "DELETE".to_owned(),
            Operation::Other(s) => s.clone(),
        };
        let old = match &self.old {
            Old::None => Value::Null,
            Old::Same => object.clone(),
            Old::Other(o) => o.to_value(),
            Old::Any(j) => j.to_value(),
        };
        let (settings, preset) = match &self.settings {
            Settings::Preset(i) => (
                serde_json::from_str(PRESETS[usize::from(*i) % PRESETS.len()]).unwrap_or_default(),
                true,
            ),
            Settings::Any(j) => (j.to_value(), false),
        };
        let kind = if self.kubevirt_cr {
            "KubeVirt"
        } else {
            "VirtualMachine"
        };
        let mut request = json!({
            "uid": "fuzz",
            "kind": {"group": "kubevirt.io", "version": "v1", "kind": kind},
            "operation": operation,
            "object": object,
            "oldObject": old,
            "dryRun": self.dry_run,
        });
        if let Some(sub) = &self.sub_resource {
            request["subResource"] = json!(sub);
        }
        let payload = serde_json::to_vec(&json!({"request": request, "settings": settings}))
            .unwrap_or_default();
        (payload, object, preset)
    }

    pub fn label_key(&self) -> &'static str {
        match &self.settings {
            Settings::Preset(i) if usize::from(*i) % PRESETS.len() == 3 => "example.com/drain",
            _ => K,
        }
    }
}
