//! What a running VM's objects carry against what its VM says now. What a drain does is decided
//! by the running objects: Harvester's drain filter reads the launcher Pod's label, its
//! maintenance mode the VMI's label (and the VM's own `metadata.labels` for the restart), and
//! KubeVirt's eviction webhook the VMI's own `spec.evictionStrategy`, written when it started.
//! A VMI started before the VM's label or strategy changed keeps the old value until it
//! restarts, unless KubeVirt's label sync (K4, [`crate::running::label_sync`]) brings the label along.

use std::collections::HashMap;

use cluster_model::object::ObjectExt;
use serde::Serialize;
use serde_json::Value;

use crate::input::Slice;
use crate::running::label_sync::LabelSync;
use crate::running::{Running, Vmi};

/// The staleness of one running VM. Serialized as `staleness` in the previews' JSON.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Staleness {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<LabelState>,
    pub eviction_strategy: EvictionState,
}

/// The maintenance label on the VM, its template, its VMI and its launcher Pod.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelState {
    /// `metadata.labels[KEY]` of the VM (`null`: unset): what Harvester's restart after
    /// maintenance reads, and what `sync` brings the others to.
    pub vm: Option<Value>,
    /// `spec.template.metadata.labels[KEY]`: what a VMI started now gets.
    pub template: Option<Value>,
    /// The VMI's label: what Harvester's maintenance mode reads to stop the VM.
    pub vmi: Option<Value>,
    /// The launcher Pod's label: what the drain filter reads.
    pub pod: Option<Value>,
    /// The launcher Pod's name (`null`: none in the input; the drain then reads the VMI's labels).
    pub pod_name: Option<String>,
    /// What the drain filter reads: `pod`, or `vmi` when the input has no launcher Pod.
    pub drain_reads: &'static str,
    /// What Harvester's maintenance mode reads to stop the VM: `vmi`.
    pub maintenance_reads: &'static str,
    /// Whether the KubeVirt CR makes virt-controller sync the key from the template to the VMI and
    /// its Pod (K4; `null`: no CR read).
    pub synced_by_kube_virt: Option<bool>,
    /// Which of `template`, `vmi`, `pod` differ from the VM's value.
    pub differs: Vec<&'static str>,
}

/// The VMI's eviction strategy against the one a VMI started now would get.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvictionState {
    /// The VMI's own `spec.evictionStrategy` (`null`: none; KubeVirt then reads the CR's current
    /// one at every eviction, which cannot be stale).
    pub vmi: Option<String>,
    /// What a VMI started now gets: the VM's `spec.template.spec.evictionStrategy`, else the
    /// KubeVirt CR's `spec.configuration.evictionStrategy` (`null`: neither, KubeVirt's `None`).
    pub current: Option<String>,
    /// `vm`, `cluster` or `default`.
    pub current_source: &'static str,
    /// The VMI carries its own strategy and it is not the current one.
    pub stale: bool,
}

/// Where the labels are read.
pub struct Labels<'a> {
    /// The label key (Harvester reads `harvesterhci.io/maintain-mode-strategy`).
    pub key: &'a str,
    /// What the KubeVirt CR does with the key.
    pub sync: &'a LabelSync,
}

/// `labels[key]` of a labels map.
pub fn label_in(labels: Option<&Value>, key: &str) -> Option<Value> {
    labels.and_then(|l| l.get(key)).cloned()
}

/// The eviction strategy a VMI of `vm` started now gets (KubeVirt v1.9.0
/// `pkg/defaults/defaults.go` 208-212): the VM's own, else the CR's, else none; and its source.
pub fn current_strategy<'v>(
    vm: Option<&'v Value>,
    cluster: Option<&'v str>,
) -> (Option<&'v str>, &'static str) {
    let own = vm.and_then(|vm| vm.text_at("/spec/template/spec/evictionStrategy"));
    match (own, cluster) {
        (Some(own), _) => (Some(own), "vm"),
        (None, Some(cluster)) => (Some(cluster), "cluster"),
        (None, None) => (None, "default"),
    }
}

/// The eviction part: the VMI's own strategy against the current one.
pub fn eviction(vmi: &Value, vm: Option<&Value>, cluster: Option<&str>) -> EvictionState {
    let own = vmi.text_at("/spec/evictionStrategy");
    let (current, source) = current_strategy(vm, cluster);
    // An unset strategy is KubeVirt's `None`.
    let stale = own.is_some_and(|own| own != current.unwrap_or("None"));
    EvictionState {
        vmi: own.map(str::to_owned),
        current: current.map(str::to_owned),
        current_source: source,
        stale,
    }
}

/// The staleness of the running VM `vm` (its VMI `running`); `labels`: `None` leaves the label
/// out (the upgrade reads no label).
pub fn of(
    vm: Option<&Value>,
    running: &Vmi,
    cluster: Option<&str>,
    labels: Option<&Labels>,
) -> Staleness {
    Staleness {
        label: labels.map(|labels| label(vm, running, labels)),
        eviction_strategy: eviction(running.vmi, vm, cluster),
    }
}

fn label(vm: Option<&Value>, running: &Vmi, labels: &Labels) -> LabelState {
    let key = labels.key;
    let pod = running.pods.last().copied();
    let state_vm = label_in(vm.and_then(|vm| vm.pointer("/metadata/labels")), key);
    let template = label_in(
        vm.and_then(|vm| vm.pointer("/spec/template/metadata/labels")),
        key,
    );
    let vmi = label_in(running.vmi.pointer("/metadata/labels"), key);
    let pod_label = pod.and_then(|p| label_in(p.pointer("/metadata/labels"), key));
    let mut differs = Vec::new();
    if vm.is_some() {
        for (name, value) in [("template", &template), ("vmi", &vmi)] {
            if *value != state_vm {
                differs.push(name);
            }
        }
        if pod.is_some() && pod_label != state_vm {
            differs.push("pod");
        }
    }
    LabelState {
        vm: state_vm,
        template,
        vmi,
        pod: pod_label,
        pod_name: pod
            .and_then(|p| p.text_at("/metadata/name"))
            .map(str::to_owned),
        drain_reads: if pod.is_some() { "pod" } else { "vmi" },
        maintenance_reads: "vmi",
        synced_by_kube_virt: labels.sync.synced,
        differs,
    }
}

/// The staleness of every running VM of an input, by namespace and name.
pub struct Index<'a> {
    vms: HashMap<(&'a str, &'a str), &'a Value>,
    running: Running<'a>,
    /// The KubeVirt CR's `spec.configuration.evictionStrategy`.
    cluster: Option<&'a str>,
    labels: Option<Labels<'a>>,
}

impl<'a> Index<'a> {
    /// `labels`: `None` leaves the label out.
    pub fn new(
        vms: &'a [Value],
        slice: &'a Slice,
        cr: Option<&'a Value>,
        labels: Option<Labels<'a>>,
    ) -> Index<'a> {
        let vms = vms.iter().map(|vm| (vm.key(), vm)).collect();
        Index {
            vms,
            running: Running::new(slice),
            cluster: cr.and_then(|cr| cr.text_at("/spec/configuration/evictionStrategy")),
            labels,
        }
    }

    /// The staleness of the VM `namespace/name`, `None` when it does not run.
    pub fn of(&self, namespace: &str, name: &str) -> Option<Staleness> {
        let running = self.running.vmi(namespace, name)?;
        let vm = self.vms.get(&(namespace, name)).copied();
        Some(of(vm, &running, self.cluster, self.labels.as_ref()))
    }

    /// The staleness of every VM that runs, kept beyond the objects it was read from.
    pub fn found(&self) -> Found {
        let mut found = Found {
            key: self.labels.as_ref().map_or("", |l| l.key).to_owned(),
            ..Found::default()
        };
        found.add(self);
        found
    }
}

/// The staleness of the running VMs a preview shows, by namespace and name: read slice by slice
/// of the input ([`Index::found`], [`Found::add`]).
#[derive(Debug, Default)]
pub struct Found {
    /// The label key shown (`""` when the label is left out).
    pub(crate) key: String,
    by_name: HashMap<(String, String), Staleness>,
}

impl Found {
    /// Adds the staleness of every VM of `index` that runs.
    pub fn add(&mut self, index: &Index) {
        for (namespace, name) in index.running.names() {
            if let Some(staleness) = index.of(namespace, name) {
                self.by_name
                    .insert((namespace.to_owned(), name.to_owned()), staleness);
            }
        }
    }

    /// The staleness of the VM `namespace/name`, `None` when it does not run.
    pub fn of(&self, namespace: &str, name: &str) -> Option<&Staleness> {
        self.by_name.get(&(namespace.to_owned(), name.to_owned()))
    }
}

impl Staleness {
    /// Something differs from what the VM says now.
    pub fn is_stale(&self) -> bool {
        self.eviction_strategy.stale || self.label.as_ref().is_some_and(|l| !l.differs.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Slice;
    use crate::running::Running;
    use serde_json::json;

    const KEY: &str = "harvesterhci.io/maintain-mode-strategy";

    fn objects(vm_label: &str, vmi_label: &str, pod_label: &str, own: Option<&str>) -> Slice {
        let mut vmi = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
            "metadata": {"name": "vm", "namespace": "team", "labels": {KEY: vmi_label}},
            "spec": {}, "status": {"phase": "Running", "nodeName": "n1"}});
        if let Some(own) = own {
            vmi["spec"]["evictionStrategy"] = json!(own);
        }
        let _ = vm_label;
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "virt-launcher-vm-abcde", "namespace": "team", "labels": {KEY: pod_label},
                         "ownerReferences": [{"kind": "VirtualMachineInstance", "name": "vm"}]},
            "status": {"phase": "Running"}});
        Slice {
            vmis: vec![vmi],
            pods: vec![pod],
            ..Slice::default()
        }
    }

    fn vm(label: &str, strategy: Option<&str>) -> Value {
        let mut vm = json!({"metadata": {"name": "vm", "namespace": "team", "labels": {KEY: label}},
            "spec": {"template": {"metadata": {"labels": {KEY: label}}, "spec": {}}}});
        if let Some(strategy) = strategy {
            vm["spec"]["template"]["spec"]["evictionStrategy"] = json!(strategy);
        }
        vm
    }

    #[test]
    fn labels_and_strategies_against_the_vm() {
        let not_synced = LabelSync {
            key: KEY.to_owned(),
            synced: Some(false),
            message: String::new(),
        };
        let labels = Labels {
            key: KEY,
            sync: &not_synced,
        };
        let cases = [
            (
                "Migrate",
                "Migrate",
                "Migrate",
                Some("LiveMigrate"),
                Some("LiveMigrate"),
                None,
                "no",
            ),
            (
                "Migrate",
                "Migrate",
                "Shutdown",
                None,
                None,
                None,
                "label(pod)",
            ),
            (
                "Migrate",
                "Shutdown",
                "Shutdown",
                Some("LiveMigrate"),
                Some("LiveMigrateIfPossible"),
                None,
                "label(vmi,pod),eviction",
            ),
            // No VM strategy: the CR's current one.
            (
                "Migrate",
                "Migrate",
                "Migrate",
                Some("LiveMigrate"),
                None,
                Some("LiveMigrateIfPossible"),
                "eviction",
            ),
            (
                "Migrate",
                "Migrate",
                "Migrate",
                Some("LiveMigrate"),
                None,
                Some("LiveMigrate"),
                "no",
            ),
            // Neither: KubeVirt's None.
            (
                "Migrate",
                "Migrate",
                "Migrate",
                Some("None"),
                None,
                None,
                "no",
            ),
            (
                "Migrate",
                "Migrate",
                "Migrate",
                Some("LiveMigrate"),
                None,
                None,
                "eviction",
            ),
        ];
        for (vm_label, vmi_label, pod_label, own, strategy, cluster, want) in cases {
            let slice = objects(vm_label, vmi_label, pod_label, own);
            let running = Running::new(&slice);
            let vmi = running.vmi("team", "vm").expect("running");
            let vm = vm(vm_label, strategy);
            let got = of(Some(&vm), &vmi, cluster, Some(&labels));
            assert_eq!(
                got.cell(),
                want,
                "{vmi_label} {pod_label} {own:?} {strategy:?} {cluster:?}"
            );
            assert_eq!(got.is_stale(), want != "no");
        }
        let slice = objects("Migrate", "Shutdown", "Shutdown", Some("LiveMigrate"));
        let running = Running::new(&slice);
        let vmi = running.vmi("team", "vm").expect("running");
        let got = of(
            Some(&vm("Migrate", Some("LiveMigrateIfPossible"))),
            &vmi,
            None,
            Some(&labels),
        );
        assert_eq!(
            got.words(KEY),
            [
                "label VM Migrate, template Migrate, VMI Shutdown, launcher Pod Shutdown (the drain reads the Pod's, Harvester's maintenance the VMI's): KubeVirt does not sync harvesterhci.io/maintain-mode-strategy: restart the VM or run kubectl vm-maintenance sync --apply",
                "evictionStrategy LiveMigrate on the VMI, LiveMigrateIfPossible now (the VM's): stale: restart once to get LiveMigrateIfPossible",
            ]
        );
        assert_eq!(got.labels_cell(), "Migrate/Shutdown/Shutdown");
        assert_eq!(got.eviction_cell(), "LiveMigrate->LiveMigrateIfPossible");
    }
}
