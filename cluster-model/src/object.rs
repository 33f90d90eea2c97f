//! The accessors of a Kubernetes object held as JSON (as kube-rs's `ResourceExt`): its name,
//! namespace, labels, annotations and owners, and a text at a JSON pointer. A leaf of the crate.

use crate::Object;
use serde_json::Value;

/// An object's metadata and texts, read from a [`Value`]; what is missing or not of its JSON type
/// reads as absent.
pub trait ObjectExt {
    /// The string at the JSON pointer `pointer` (`/spec/nodeName`).
    fn text_at(&self, pointer: &str) -> Option<&str>;

    /// `metadata.name`, empty when missing (as Go reads `ObjectMeta.Name`).
    fn name(&self) -> &str {
        self.text_at("/metadata/name").unwrap_or_default()
    }

    /// `metadata.namespace`, `default` when missing, as Kubernetes reads an object without one.
    fn namespace(&self) -> &str {
        self.text_at("/metadata/namespace").unwrap_or("default")
    }

    /// `(namespace(), name())`: how a namespaced object is looked up.
    fn key(&self) -> (&str, &str) {
        (self.namespace(), self.name())
    }

    /// `metadata.namespace` as written, empty when missing: what a controller reads in
    /// `ObjectMeta.Namespace` (Harvester's and KubeVirt's keys of a listed object).
    fn namespace_field(&self) -> &str {
        self.text_at("/metadata/namespace").unwrap_or_default()
    }

    /// `metadata.labels`, when an object.
    fn labels(&self) -> Option<&Object>;

    /// The label `key`, when a string.
    fn label(&self, key: &str) -> Option<&str> {
        self.labels()?.get(key)?.as_str()
    }

    /// `metadata.annotations`, when an object.
    fn annotations(&self) -> Option<&Object>;

    /// The annotation `key`, when a string.
    fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations()?.get(key)?.as_str()
    }

    /// `metadata.ownerReferences`, in order (none when not a list).
    fn owners(&self) -> std::slice::Iter<'_, Value>;

    /// The name of the first owner of kind `kind` (a launcher Pod's `VirtualMachineInstance`),
    /// when a string.
    fn owner(&self, kind: &str) -> Option<&str> {
        self.owners()
            .find(|o| o.get("kind").and_then(Value::as_str) == Some(kind))?
            .get("name")?
            .as_str()
    }
}

impl ObjectExt for Value {
    fn text_at(&self, pointer: &str) -> Option<&str> {
        self.pointer(pointer)?.as_str()
    }

    fn labels(&self) -> Option<&Object> {
        self.pointer("/metadata/labels")?.as_object()
    }

    fn annotations(&self) -> Option<&Object> {
        self.pointer("/metadata/annotations")?.as_object()
    }

    fn owners(&self) -> std::slice::Iter<'_, Value> {
        let owners = self.pointer("/metadata/ownerReferences");
        owners
            .and_then(Value::as_array)
            .map_or([].iter(), |owners| owners.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::ObjectExt;
    use serde_json::json;

    #[test]
    fn missing_or_mistyped_reads_as_absent() {
        let pod = json!({"metadata": {"name": "virt-launcher-a", "labels": {"kubevirt.io": "virt-launcher", "n": 1},
            "ownerReferences": [{"kind": "ReplicaSet", "name": "r"}, {"kind": "VirtualMachineInstance", "name": "a"},
                {"kind": "VirtualMachineInstance", "name": "b"}]}});
        assert_eq!(pod.name(), "virt-launcher-a");
        assert_eq!((pod.namespace(), pod.namespace_field()), ("default", ""));
        assert_eq!(pod.label("kubevirt.io"), Some("virt-launcher"));
        assert_eq!(pod.label("n"), None);
        assert_eq!(pod.owner("VirtualMachineInstance"), Some("a"));
        assert_eq!(pod.owner("Node"), None);
        assert_eq!((pod.annotations(), pod.annotation("a")), (None, None));
        let odd = json!({"metadata": {"name": 1, "namespace": "team", "labels": [], "ownerReferences": {}}});
        assert_eq!((odd.name(), odd.namespace()), ("", "team"));
        assert_eq!((odd.labels(), odd.owners().count()), (None, 0));
        assert_eq!(json!("text").text_at(""), Some("text"));
    }
}
