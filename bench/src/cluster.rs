//! A generated cluster for the previews' benchmarks (issue 38, BENCHMARKS.md "Previews at cluster
//! scale"): `vms` VirtualMachines spread over `nodes` Nodes, each running VM with its VMI and its
//! virt-launcher Pod, claims bound to PersistentVolumes, the KubeVirt CR; as the `v1 List` that
//! `kubectl get ... -o json` prints. The objects agree with each other the way a live cluster's do
//! (names, owner references, node names, the labels KubeVirt and Harvester copy), and the VMs come
//! in the kinds the previews tell apart, in fixed shares of every twenty.

use serde_json::{Value, json};

/// The kinds of VM, by their position among every twenty.
#[derive(Clone, Copy)]
enum Shape {
    /// Twelve: `Migrate`, a ReadWriteMany claim, migratable.
    Web,
    /// Three: a GPU passed through, `ShutdownAndRestartAfterDisable`, not migratable.
    Gpu,
    /// Two: its own `LiveMigrate` with a ReadWriteOnce claim: it blocks a drain.
    Blocker,
    /// Two: no label, `RerunOnFailure` (Harvester's default).
    Legacy,
    /// One: `Manual`, `None`, a claim on a local PersistentVolume of its node.
    Local,
}

impl Shape {
    fn of(index: usize) -> Shape {
        match index % 20 {
            0..12 => Shape::Web,
            12..15 => Shape::Gpu,
            15..17 => Shape::Blocker,
            17..19 => Shape::Legacy,
            _ => Shape::Local,
        }
    }
}

/// The whole cluster as one `v1 List`.
pub fn dump(vms: usize, nodes: usize) -> Value {
    let nodes = nodes.max(1);
    let mut items = vec![kubevirt()];
    items.extend((1..=nodes).map(|n| node(&node_name(n))));
    for index in 0..vms {
        items.extend(vm_objects(index, &node_name(index % nodes + 1)));
    }
    json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items})
}

fn node_name(n: usize) -> String {
    format!("node-{n:02}")
}

fn kubevirt() -> Value {
    json!({
        "apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "harvester-system"},
        "spec": {
            "configuration": {"evictionStrategy": "LiveMigrateIfPossible"},
            "workloadUpdateStrategy": {"workloadUpdateMethods": ["LiveMigrate", "Evict"], "batchEvictionSize": 10, "batchEvictionInterval": "1m"},
            "customizeComponents": {"flags": {"controller": {"additional-launcher-labels-sync": "harvesterhci.io/maintain-mode-strategy"}}}
        },
        "status": {"observedKubeVirtVersion": "v1.9.0", "phase": "Deployed"}
    })
}

fn node(name: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "node-role.kubernetes.io/worker": "true"}},
        "spec": {},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]}
    })
}

/// One VM and what it runs: the VM, its claim and volume, its VMI and its launcher Pod.
fn vm_objects(index: usize, node: &str) -> Vec<Value> {
    let shape = Shape::of(index);
    let namespace = format!("team-{:02}", index % 20);
    let name = format!("vm-{index:05}");
    let claim = format!("{name}-disk");
    let volume = format!("pvc-{index:08x}-0000-4000-8000-000000000000");
    let label = match shape {
        Shape::Web | Shape::Blocker | Shape::Local => Some("Migrate"),
        Shape::Gpu => Some("ShutdownAndRestartAfterDisable"),
        Shape::Legacy => None,
    };
    let mut objects = vec![
        vm(shape, &namespace, &name, &claim, label),
        claim_object(shape, &namespace, &claim, &volume),
        persistent_volume(shape, &volume, node),
    ];
    objects.extend(running(shape, &namespace, &name, &claim, node, label));
    objects
}

fn labels(name: &str, label: Option<&str>) -> Value {
    let mut labels = json!({"harvesterhci.io/vmName": name});
    if let Some(label) = label {
        labels["harvesterhci.io/maintain-mode-strategy"] = json!(label);
    }
    labels
}

fn vm(shape: Shape, namespace: &str, name: &str, claim: &str, label: Option<&str>) -> Value {
    let mut vm_labels = json!({});
    if let Some(label) = label {
        vm_labels["harvesterhci.io/maintain-mode-strategy"] = json!(label);
    }
    let mut spec = json!({
        "domain": {
            "cpu": {"cores": 2},
            "memory": {"guest": "4Gi"},
            "devices": {"disks": [{"name": "disk-0", "disk": {"bus": "virtio"}}], "interfaces": [{"name": "default", "masquerade": {}}]}
        },
        "networks": [{"name": "default", "pod": {}}],
        "volumes": [{"name": "disk-0", "persistentVolumeClaim": {"claimName": claim}}]
    });
    match shape {
        Shape::Gpu => {
            spec["domain"]["devices"]["gpus"] =
                json!([{"name": "gpu0", "deviceName": "nvidia.com/TU104GL_Tesla_T4"}]);
        }
        Shape::Blocker => spec["evictionStrategy"] = json!("LiveMigrate"),
        Shape::Local => spec["evictionStrategy"] = json!("None"),
        Shape::Web | Shape::Legacy => {}
    }
    let run_strategy = match shape {
        Shape::Legacy => "RerunOnFailure",
        Shape::Local => "Manual",
        _ => "Always",
    };
    json!({
        "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
        "metadata": {"name": name, "namespace": namespace, "labels": vm_labels, "annotations": {"harvesterhci.io/vmRunStrategy": run_strategy}},
        "spec": {
            "runStrategy": run_strategy,
            "template": {"metadata": {"labels": labels(name, label)}, "spec": spec}
        }
    })
}

fn claim_object(shape: Shape, namespace: &str, claim: &str, volume: &str) -> Value {
    let (mode, class) = match shape {
        Shape::Blocker => ("ReadWriteOnce", "longhorn"),
        Shape::Local => ("ReadWriteOnce", "local-path"),
        _ => ("ReadWriteMany", "longhorn"),
    };
    json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": claim, "namespace": namespace},
        "spec": {"accessModes": [mode], "storageClassName": class, "volumeName": volume, "resources": {"requests": {"storage": "20Gi"}}},
        "status": {"phase": "Bound"}
    })
}

fn persistent_volume(shape: Shape, volume: &str, node: &str) -> Value {
    let mut spec = json!({"capacity": {"storage": "20Gi"}, "csi": {"driver": "driver.longhorn.io", "volumeHandle": volume}});
    if let Shape::Local = shape {
        spec = json!({
            "capacity": {"storage": "20Gi"},
            "local": {"path": format!("/var/lib/local-path/{volume}")},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}}
        });
    }
    json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": volume}, "spec": spec})
}

/// The VMI and the launcher Pod of a running VM: the labels KubeVirt gives them (the template's,
/// the node's name) and their owners.
fn running(
    shape: Shape,
    namespace: &str,
    name: &str,
    claim: &str,
    node: &str,
    label: Option<&str>,
) -> [Value; 2] {
    let migratable = match shape {
        Shape::Gpu => {
            json!({"type": "LiveMigratable", "status": "False", "reason": "HostDeviceNotLiveMigratable"})
        }
        Shape::Blocker | Shape::Local => {
            json!({"type": "LiveMigratable", "status": "False", "reason": "DisksNotLiveMigratable"})
        }
        Shape::Web | Shape::Legacy => json!({"type": "LiveMigratable", "status": "True"}),
    };
    let eviction = match shape {
        Shape::Blocker => "LiveMigrate",
        Shape::Local => "None",
        _ => "LiveMigrateIfPossible",
    };
    let mut vmi_labels = labels(name, label);
    vmi_labels["kubevirt.io/nodeName"] = json!(node);
    let vmi = json!({
        "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
        "metadata": {"name": name, "namespace": namespace, "labels": vmi_labels,
            "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": name, "controller": true}]},
        "spec": {"evictionStrategy": eviction, "volumes": [{"name": "disk-0", "persistentVolumeClaim": {"claimName": claim}}]},
        "status": {"phase": "Running", "nodeName": node, "conditions": [{"type": "Ready", "status": "True"}, migratable]}
    });
    let mut pod_labels = labels(name, label);
    pod_labels["kubevirt.io"] = json!("virt-launcher");
    pod_labels["vm.kubevirt.io/name"] = json!(name);
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("virt-launcher-{name}-abcde"), "namespace": namespace, "labels": pod_labels,
            "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "name": name, "controller": true}]},
        "spec": {"nodeName": node},
        "status": {"phase": "Running"}
    });
    [vmi, pod]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_running_vm_has_its_vmi_and_pod_on_one_node() {
        let dump = dump(40, 3);
        let items = dump["items"].as_array().map_or(&[][..], Vec::as_slice);
        let count = |kind: &str| items.iter().filter(|i| i["kind"] == kind).count();
        assert_eq!(
            [count("KubeVirt"), count("Node"), count("VirtualMachine")],
            [1, 3, 40]
        );
        assert_eq!(count("VirtualMachineInstance"), 40);
        assert_eq!(count("Pod"), 40);
        assert_eq!(count("PersistentVolumeClaim"), 40);
        for vmi in items
            .iter()
            .filter(|i| i["kind"] == "VirtualMachineInstance")
        {
            let pod = items.iter().find(|p| {
                p["kind"] == "Pod"
                    && p["metadata"]["ownerReferences"][0]["name"] == vmi["metadata"]["name"]
            });
            assert_eq!(
                pod.map(|p| &p["spec"]["nodeName"]),
                Some(&vmi["status"]["nodeName"])
            );
        }
    }
}
