//! The cluster's objects indexed by name, and the accessors the steps read them with.

use super::outcome::*;
use crate::Object;
use crate::object::ObjectExt;
use crate::restart::Disks;
use serde_json::Value;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt;

/// A VM (or a VMI) by namespace and name. `Display` writes `namespace/name`, the way Harvester
/// keys and lists VMs, and the order is that string's order (Harvester sorts the strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VmRef<'a> {
    pub namespace: &'a str,
    pub name: &'a str,
}

impl<'a> VmRef<'a> {
    /// The object's own namespace and name.
    pub fn of(object: &'a Value) -> VmRef<'a> {
        VmRef {
            namespace: object.namespace_field(),
            name: object.name(),
        }
    }

    /// A VMI's owner VM (`findVM`), or the VMI itself when it has none.
    pub fn owner_of(vmi: &'a Value) -> VmRef<'a> {
        VmRef {
            namespace: vmi.namespace_field(),
            name: owner_vm(vmi).unwrap_or(vmi.name()),
        }
    }

    fn bytes(&self) -> impl Iterator<Item = u8> + '_ {
        let slash = std::iter::once(b'/');
        self.namespace.bytes().chain(slash).chain(self.name.bytes())
    }
}

impl Ord for VmRef<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.bytes().cmp(other.bytes())
    }
}

impl PartialOrd for VmRef<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for VmRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

// ---------------------------------------------------------------------------------------------
// Lookups.

/// The objects by name, and the VMIs by node.
pub struct Index<'a> {
    vms: HashMap<(&'a str, &'a str), &'a Value>,
    vmis: HashMap<(&'a str, &'a str), &'a Value>,
    by_node: HashMap<&'a str, Vec<&'a Value>>,
    /// Launcher Pods by namespace and owning VMI name.
    pods: HashMap<(&'a str, &'a str), Vec<&'a Value>>,
    /// Claims and PersistentVolumes by name (R10).
    pub(crate) disks: Disks<'a>,
}

impl<'a> Index<'a> {
    pub fn new(objects: &Objects<'a>) -> Index<'a> {
        let mut index = Index {
            vms: HashMap::new(),
            vmis: HashMap::new(),
            by_node: HashMap::new(),
            pods: HashMap::new(),
            disks: Disks::new(objects.claims, objects.persistent_volumes, objects.nodes),
        };
        for vm in objects.vms {
            index.vms.insert((vm.namespace_field(), vm.name()), vm);
        }
        for vmi in objects.vmis {
            index.vmis.insert((vmi.namespace_field(), vmi.name()), vmi);
            if let Some(node) = vmi_node(vmi) {
                index.by_node.entry(node).or_default().push(vmi);
            }
        }
        for pod in objects.pods {
            if let Some(owner) = pod.owner("VirtualMachineInstance") {
                index
                    .pods
                    .entry((pod.namespace_field(), owner))
                    .or_default()
                    .push(pod);
            }
        }
        for list in index.by_node.values_mut() {
            list.sort_by_key(|v| (v.namespace_field(), v.name()));
        }
        index
    }

    pub fn vm(&self, namespace: &str, name: &str) -> Option<&'a Value> {
        self.vms.get(&(namespace, name)).copied()
    }

    pub fn vmi(&self, namespace: &str, name: &str) -> Option<&'a Value> {
        self.vmis.get(&(namespace, name)).copied()
    }

    /// VMIs labelled `kubevirt.io/nodeName=node`, any phase (VMIU:143-153), sorted.
    pub fn vmis_on(&self, node: &str) -> Vec<&'a Value> {
        self.by_node.get(node).cloned().unwrap_or_default()
    }

    /// The VMI's launcher Pod on `node` (`spec.nodeName`), by its owner reference.
    pub(crate) fn launcher_pod(&self, vmi: &Value, node: &str) -> Option<&'a Value> {
        let pods = self.pods.get(&(vmi.namespace_field(), vmi.name()))?;
        pods.iter()
            .find(|p| p.text_at("/spec/nodeName") == Some(node))
            .copied()
    }
}

pub(crate) fn has_key(map: Option<&Object>, key: &str) -> bool {
    map.is_some_and(|m| m.contains_key(key))
}

pub(crate) fn conditions(object: &Value) -> &[Value] {
    object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The node of a VMI as Harvester lists a node's VMIs: its `kubevirt.io/nodeName` label.
pub fn vmi_node(vmi: &Value) -> Option<&str> {
    vmi.label(NODE_NAME_LABEL)
}

/// `findVM` (ND:264-272): the owner of Kind `VirtualMachine` and APIVersion `kubevirt.io/v1`.
pub fn owner_vm(vmi: &Value) -> Option<&str> {
    vmi.owners()
        .find(|o| {
            o.get("kind").and_then(Value::as_str) == Some("VirtualMachine")
                && o.get("apiVersion").and_then(Value::as_str) == Some("kubevirt.io/v1")
        })
        .and_then(|o| o.get("name"))
        .and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::VmRef;

    #[test]
    fn vm_refs_sort_as_harvester_sorts_their_strings() {
        let refs = [
            ("a", "x"),
            ("a-b", "x"),
            ("a", "x-1"),
            ("ab", "a"),
            ("a", ""),
        ];
        let mut typed: Vec<VmRef> = refs
            .iter()
            .map(|(namespace, name)| VmRef { namespace, name })
            .collect();
        let mut strings: Vec<String> = typed.iter().map(ToString::to_string).collect();
        typed.sort();
        strings.sort();
        let shown: Vec<String> = typed.iter().map(ToString::to_string).collect();
        assert_eq!(shown, strings);
        assert_eq!(strings, ["a-b/x", "a/", "a/x", "a/x-1", "ab/a"]);
    }
}
