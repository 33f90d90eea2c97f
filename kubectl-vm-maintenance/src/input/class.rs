//! Which objects a command reads and how each is recognised: by its `apiVersion` and `kind`,
//! as kubectl prints every object; the rest of the input is dropped.

use serde_json::Value;

/// The kinds the store keeps.
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
}

/// Whether an object names its `kind` and `apiVersion` (strings), as every object kubectl prints
/// does.
pub(super) fn typed(object: &Value) -> bool {
    object.get("kind").is_some_and(Value::is_string)
        && object.get("apiVersion").is_some_and(Value::is_string)
}

/// `namespace/name`, `name` or `unnamed`, for a note.
pub(super) fn described(object: &Value) -> String {
    let text_at = |pointer| object.pointer(pointer).and_then(Value::as_str);
    let name = text_at("/metadata/name");
    let namespace = text_at("/metadata/namespace");
    match (namespace, name) {
        (Some(namespace), Some(name)) => format!("{namespace}/{name}"),
        (None, Some(name)) => name.to_owned(),
        _ => "unnamed".to_owned(),
    }
}

pub(super) fn classify(object: &Value) -> Option<Class> {
    let api_version = object.get("apiVersion")?.as_str()?;
    let kubevirt = api_version.starts_with("kubevirt.io/");
    let core = api_version == "v1";
    let longhorn = api_version.starts_with("longhorn.io/");
    Some(match object.get("kind")?.as_str()? {
        "VirtualMachine" if kubevirt => Class::Vm,
        "VirtualMachineInstance" if kubevirt => Class::Vmi,
        "KubeVirt" if kubevirt => Class::KubeVirt,
        "Pod" if core => Class::Pod,
        "PersistentVolumeClaim" if core => Class::Claim,
        "PersistentVolume" if core => Class::PersistentVolume,
        "Node" if core => Class::Node,
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
