//! What the store reads of an object before it keeps the object's text: its class (by its
//! `apiVersion` and `kind`, as kubectl prints every object; the rest of the input is dropped)
//! and the names that link it to the others.
//!
//! They are read into a few borrowed fields ([`Fields`]), without the object's tree (a
//! `serde_json::Value` of a VM is some 16 times its text, and a command parses the objects it
//! judges anyway, a slice at a time). An object whose fields do not read so (a name that is not
//! a plain string, a duplicate key, `labels` that is not a map) is parsed whole and read the
//! same way from its tree: the [`Head`] is the same either way.

use std::collections::BTreeMap;

use cluster_model::maintenance::{NODE_NAME_LABEL, owner_vm, vmi_node};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// The kinds the store keeps.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Class {
    Vm,
    Vmi,
    Pod,
    Claim,
    PersistentVolume,
    KubeVirt,
    Instancetype,
    Node,
    LonghornVolume,
    LonghornReplica,
    /// VirtualMachineInstanceMigrations and PodDisruptionBudgets: what `status` reads.
    Migration,
    Budget,
}

/// What the store keeps of an object besides its text.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Head {
    /// Names its `kind` and `apiVersion` (strings), as every object kubectl prints does.
    pub typed: bool,
    /// `None`: a kind no command reads.
    pub class: Option<Class>,
    pub namespace: Option<String>,
    pub name: Option<String>,
    /// A VMI's node (its `kubevirt.io/nodeName` label, as Harvester lists a node's VMIs); a
    /// Pod's `spec.nodeName`; a PersistentVolumeClaim's `spec.volumeName`; a Longhorn replica's
    /// node when it has started.
    pub link: Option<String>,
    /// A VMI's VM, a launcher Pod's VMI (their owner references); a Longhorn replica's volume;
    /// a migration's VMI (`spec.vmiName`).
    pub owner: Option<String>,
}

/// The head of the object `text`; `None` when it is not a JSON object, `Err` when it is not
/// JSON.
pub(super) fn read(text: &str) -> Result<Option<Head>, serde_json::Error> {
    if let Some(head) = object::<Fields>(text).and_then(|fields| fields?.head()) {
        return Ok(Some(head));
    }
    let object: Value = serde_json::from_str(text)?;
    Ok(object.is_object().then(|| Head::of(&object)))
}

/// A JSON object read into `T` (`Some(None)`: `null`); `None` when the text is another value
/// (a struct also reads from an array) or does not read into `T`.
fn object<'a, T: Deserialize<'a>>(text: &'a str) -> Option<Option<T>> {
    match text.trim_start().as_bytes().first() {
        Some(b'{') => serde_json::from_str(text).ok().map(Some),
        Some(b'n') if text.trim() == "null" => Some(None),
        _ => None,
    }
}

/// A member of an object read as [`object`] reads it (absent: `Some(None)`).
fn part<'a, T: Deserialize<'a>>(raw: Option<&'a RawValue>) -> Option<Option<T>> {
    raw.map_or(Some(None), |raw| object(raw.get()))
}

/// The fields of an object that its head is made of, borrowed from its text; `metadata`,
/// `spec` and `status` are read only as far as its class needs them.
#[derive(Deserialize)]
struct Fields<'a> {
    #[serde(rename = "apiVersion", borrow, default)]
    api_version: Option<&'a str>,
    #[serde(borrow, default)]
    kind: Option<&'a str>,
    #[serde(borrow, default)]
    metadata: Option<&'a RawValue>,
    #[serde(borrow, default)]
    spec: Option<&'a RawValue>,
    #[serde(borrow, default)]
    status: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Metadata<'a> {
    #[serde(borrow, default)]
    name: Option<&'a str>,
    #[serde(borrow, default)]
    namespace: Option<&'a str>,
    #[serde(borrow, default)]
    labels: Option<BTreeMap<&'a str, Option<&'a str>>>,
    #[serde(rename = "ownerReferences", borrow, default)]
    owner_references: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct Owner<'a> {
    #[serde(rename = "apiVersion", borrow, default)]
    api_version: Option<&'a str>,
    #[serde(borrow, default)]
    kind: Option<&'a str>,
    #[serde(borrow, default)]
    name: Option<&'a str>,
}

#[derive(Deserialize)]
struct Spec<'a> {
    #[serde(rename = "volumeName", borrow, default)]
    volume_name: Option<&'a str>,
    #[serde(rename = "nodeName", borrow, default)]
    node_name: Option<&'a str>,
    #[serde(rename = "vmiName", borrow, default)]
    vmi_name: Option<&'a str>,
    #[serde(rename = "nodeID", borrow, default)]
    node_id: Option<&'a str>,
}

#[derive(Deserialize)]
struct Status {
    #[serde(default)]
    started: Option<bool>,
}

impl<'a> Fields<'a> {
    /// The head, `None` when a field the class needs does not read as expected.
    fn head(&self) -> Option<Head> {
        let metadata: Option<Metadata> = part(self.metadata)?;
        let class = classify(self.api_version, self.kind);
        let owner = |kind: &str, api_version: Option<&str>| -> Option<Option<&'a str>> {
            let owners = metadata.as_ref().and_then(|m| m.owner_references.as_ref());
            for raw in owners.into_iter().flatten() {
                let Some(owner) = object::<Owner>(raw.get())? else {
                    continue;
                };
                if owner.kind == Some(kind)
                    && api_version.is_none_or(|v| owner.api_version == Some(v))
                {
                    return Some(owner.name);
                }
            }
            Some(None)
        };
        let (link, owner) = match class {
            Some(Class::Vmi) => (
                metadata
                    .as_ref()
                    .and_then(|m| m.labels.as_ref())
                    .and_then(|l| *l.get(NODE_NAME_LABEL)?),
                owner("VirtualMachine", Some("kubevirt.io/v1"))?,
            ),
            Some(Class::Pod) => {
                let spec: Option<Spec> = part(self.spec)?;
                let owner = owner("VirtualMachineInstance", None)?;
                (spec.and_then(|s| s.node_name), owner)
            }
            Some(Class::Claim) => {
                let spec: Option<Spec> = part(self.spec)?;
                (spec.and_then(|s| s.volume_name), None)
            }
            Some(Class::Migration) => {
                let spec: Option<Spec> = part(self.spec)?;
                (None, spec.and_then(|s| s.vmi_name))
            }
            Some(Class::LonghornReplica) => {
                let spec: Option<Spec> = part(self.spec)?;
                let status: Option<Status> = part(self.status)?;
                let started = status.and_then(|s| s.started) == Some(true);
                let spec = spec.as_ref();
                (
                    spec.and_then(|s| s.node_id).filter(|_| started),
                    spec.and_then(|s| s.volume_name),
                )
            }
            _ => (None, None),
        };
        Some(Head {
            typed: self.api_version.is_some() && self.kind.is_some(),
            class,
            namespace: metadata
                .as_ref()
                .and_then(|m| m.namespace)
                .map(str::to_owned),
            name: metadata.as_ref().and_then(|m| m.name).map(str::to_owned),
            link: link.map(str::to_owned),
            owner: owner.map(str::to_owned),
        })
    }
}

impl Head {
    /// The head of a parsed object, read as [`Fields::head`] reads its text.
    fn of(object: &Value) -> Head {
        let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str);
        let class = classify(text("/apiVersion"), text("/kind"));
        let (link, owner) = match class {
            Some(Class::Vmi) => (vmi_node(object), owner_vm(object)),
            Some(Class::Pod) => (text("/spec/nodeName"), launcher_of(object)),
            Some(Class::Claim) => (text("/spec/volumeName"), None),
            Some(Class::Migration) => (None, text("/spec/vmiName")),
            Some(Class::LonghornReplica) => {
                let started = object.pointer("/status/started") == Some(&Value::Bool(true));
                (
                    text("/spec/nodeID").filter(|_| started),
                    text("/spec/volumeName"),
                )
            }
            _ => (None, None),
        };
        Head {
            typed: text("/kind").is_some() && text("/apiVersion").is_some(),
            class,
            namespace: text("/metadata/namespace").map(str::to_owned),
            name: text("/metadata/name").map(str::to_owned),
            link: link.map(str::to_owned),
            owner: owner.map(str::to_owned),
        }
    }

    /// `namespace/name`, `name` or `unnamed`, for a note.
    pub(super) fn described(&self) -> String {
        match (&self.namespace, &self.name) {
            (Some(namespace), Some(name)) => format!("{namespace}/{name}"),
            (None, Some(name)) => name.clone(),
            _ => "unnamed".to_owned(),
        }
    }
}

/// The VMI that owns a launcher Pod.
fn launcher_of(pod: &Value) -> Option<&str> {
    pod.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)?
        .iter()
        .find(|o| o.get("kind").and_then(Value::as_str) == Some("VirtualMachineInstance"))?
        .get("name")
        .and_then(Value::as_str)
}

fn classify(api_version: Option<&str>, kind: Option<&str>) -> Option<Class> {
    let api_version = api_version?;
    let kubevirt = api_version.starts_with("kubevirt.io/");
    let core = api_version == "v1";
    let longhorn = api_version.starts_with("longhorn.io/");
    Some(match kind? {
        "VirtualMachine" if kubevirt => Class::Vm,
        "VirtualMachineInstance" if kubevirt => Class::Vmi,
        "KubeVirt" if kubevirt => Class::KubeVirt,
        "Pod" if core => Class::Pod,
        "PersistentVolumeClaim" if core => Class::Claim,
        "PersistentVolume" if core => Class::PersistentVolume,
        "Node" if core => Class::Node,
        "VirtualMachineInstanceMigration" if kubevirt => Class::Migration,
        "PodDisruptionBudget" if api_version == "policy/v1" => Class::Budget,
        "Volume" if longhorn => Class::LonghornVolume,
        "Replica" if longhorn => Class::LonghornReplica,
        "VirtualMachineInstancetype"
        | "VirtualMachineClusterInstancetype"
        | "VirtualMachinePreference"
        | "VirtualMachineClusterPreference"
            if api_version.starts_with("instancetype.kubevirt.io/") =>
        {
            Class::Instancetype
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every object of the examples, and odd ones: the short way and the tree give one head.
    #[test]
    fn the_fields_and_the_tree_give_the_same_head() {
        let examples = [
            "cluster-dump.json",
            "cluster-maintenance-dump.json",
            "stale/cluster-dump.json",
            "status-drain.json",
        ];
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let mut objects: Vec<String> = Vec::new();
        for name in examples {
            let text = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
            let list: Value = serde_json::from_str(&text).unwrap_or_default();
            let items = list["items"].as_array().cloned().unwrap_or_default();
            objects.extend(items.iter().map(Value::to_string));
        }
        assert!(objects.len() > 40, "{} objects", objects.len());
        objects.extend(
            [
                r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a\u0062","ownerReferences":[{"kind":"VirtualMachineInstance","name":"x"}]}}"#,
                r#"{"apiVersion":"v1","kind":"Pod","kind":"Node","metadata":{"name":"dup"}}"#,
                r#"{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"labels":"x"}}"#,
                r#"{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"labels":{"kubevirt.io/nodeName":null},"ownerReferences":[{"kind":"VirtualMachine","apiVersion":"kubevirt.io/v1alpha3","name":"old"},{"kind":"VirtualMachine","apiVersion":"kubevirt.io/v1","name":"vm"}]}}"#,
                r#"{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance","metadata":{"labels":{"kubevirt.io/nodeName":7}}}"#,
                r#"{"apiVersion":"longhorn.io/v1beta2","kind":"Replica","spec":{"nodeID":"n1","volumeName":"v"},"status":{"started":"yes"}}"#,
                r#"{"apiVersion":"longhorn.io/v1beta2","kind":"Replica","spec":{"nodeID":"n1","volumeName":"v"},"status":{"started":true}}"#,
                r#"{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":null,"spec":{"volumeName":"pv-1"}}"#,
                r#"{"apiVersion":1,"kind":"Pod"}"#,
                r#"{"kind":"Pod","metadata":{"namespace":"ns"}}"#,
                r#"{"apiVersion":"v1","kind":"Pod","spec":[1],"status":"x"}"#,
                r#"{"apiVersion":"v1","kind":"PersistentVolumeClaim","spec":["pv-1","n"]}"#,
                r#"{"apiVersion":"v1","kind":"Pod","metadata":{"ownerReferences":[["v1","VirtualMachineInstance","x"],{"kind":"VirtualMachineInstance","name":"y"}]}}"#,
                r#"{"apiVersion":"v1","kind":"Pod","metadata":["a","b"]}"#,
            ]
            .map(str::to_owned),
        );
        let mut short_way = 0;
        for text in &objects {
            let tree: Value = serde_json::from_str(text).unwrap_or_default();
            let short = object::<Fields>(text).flatten().and_then(|f| f.head());
            if let Some(short) = short {
                assert_eq!(short, Head::of(&tree), "{text}");
                short_way += 1;
            }
            assert_eq!(read(text).ok().flatten(), Some(Head::of(&tree)), "{text}");
        }
        // Every example object takes the short way; of the odd ones, those read as expected.
        assert_eq!(short_way, objects.len() - 10, "of {}", objects.len());
        assert_eq!(read("[1, 2]").ok(), Some(None));
        assert_eq!(read(r#"["v1", "Pod"]"#).ok(), Some(None));
    }
}
