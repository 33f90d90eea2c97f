//! A running VM as KubeVirt's eviction webhook judges it: by its VMI, not its VM (KubeVirt
//! v1.9.0 `pkg/util/migrations/migrations.go` `VMIEvictionStrategy`: the VMI's own
//! `spec.evictionStrategy`, written at its creation, else the KubeVirt CR's;
//! `pod-eviction-admitter.go` `admitLauncherPod` with `types.go` `IsMigratable`: only a
//! `LiveMigratable` condition of status `True` counts as migratable).

use std::collections::HashMap;

use cluster_model::object::ObjectExt;
use serde_json::Value;
use vm_maintenance_strategy::strategy::EvictionStrategy;

use crate::input::Slice;

type Object = serde_json::Map<String, Value>;

/// The VMIs that run, by namespace and name, and the launcher Pods by their VMI.
pub struct Running<'a> {
    vmis: HashMap<(&'a str, &'a str), &'a Value>,
    /// Every launcher Pod that has not ended, in reading order (two during a migration).
    pods: HashMap<(&'a str, &'a str), Vec<&'a Value>>,
}

/// One running VMI: where it runs and the labels the drain filter reads.
pub struct Vmi<'a> {
    pub vmi: &'a Value,
    pub node: Option<&'a str>,
    /// The launcher Pod's labels, else the VMI's (a VMI's labels reach its Pod).
    pub pod_labels: Option<&'a Object>,
    /// The launcher Pods of the VMI that have not ended (the last one read is the one whose
    /// labels `pod_labels` holds); empty when the input has none.
    pub pods: Vec<&'a Value>,
}

impl<'a> Running<'a> {
    pub fn new(slice: &'a Slice) -> Running<'a> {
        let vmis = slice
            .vmis
            .iter()
            .filter(|vmi| !matches!(vmi.text_at("/status/phase"), Some("Succeeded" | "Failed")))
            .map(|vmi| (vmi.key(), vmi))
            .collect();
        let mut pods = HashMap::new();
        for pod in &slice.pods {
            if matches!(pod.text_at("/status/phase"), Some("Succeeded" | "Failed")) {
                continue;
            }
            if let Some(name) = pod.owner("VirtualMachineInstance") {
                pods.entry((pod.namespace(), name))
                    .or_insert_with(Vec::new)
                    .push(pod);
            }
        }
        Running { vmis, pods }
    }

    /// The namespace and name of every running VMI.
    pub fn names(&self) -> impl Iterator<Item = (&'a str, &'a str)> + '_ {
        self.vmis.keys().copied()
    }

    /// The running VMI of the VM `namespace/name`.
    pub fn vmi(&self, namespace: &str, name: &str) -> Option<Vmi<'a>> {
        let vmi = *self.vmis.get(&(namespace, name))?;
        let pods = self
            .pods
            .get(&(namespace, name))
            .cloned()
            .unwrap_or_default();
        let pod = pods.last().copied();
        let labels = |object: &'a Value| {
            object
                .pointer("/metadata/labels")
                .and_then(Value::as_object)
        };
        Some(Vmi {
            vmi,
            node: vmi
                .text_at("/status/nodeName")
                .or_else(|| vmi.text_at("/metadata/labels/kubevirt.io~1nodeName"))
                .or_else(|| pod.and_then(|p| p.text_at("/spec/nodeName"))),
            pod_labels: pod.and_then(labels).or_else(|| labels(vmi)),
            pods,
        })
    }
}

impl Vmi<'_> {
    /// `VMIEvictionStrategy`: the VMI's own, else the cluster's (`cluster`), else none (`None`);
    /// and where it came from (`vmi`, `cluster`, `default`).
    pub fn eviction_strategy(&self, cluster: Option<&str>) -> (EvictionStrategy, &'static str) {
        match (self.vmi.text_at("/spec/evictionStrategy"), cluster) {
            (Some(own), _) => (EvictionStrategy::parse(own), "vmi"),
            (None, Some(cluster)) => (EvictionStrategy::parse(cluster), "cluster"),
            (None, None) => (EvictionStrategy::None, "default"),
        }
    }

    /// Why the eviction webhook does not count the VMI migratable: nothing when its
    /// `LiveMigratable` condition is `True`.
    pub fn not_migratable(&self) -> Vec<String> {
        let conditions = self
            .vmi
            .pointer("/status/conditions")
            .and_then(Value::as_array);
        let condition = conditions
            .into_iter()
            .flatten()
            .find(|c| c.get("type").and_then(Value::as_str) == Some("LiveMigratable"));
        let Some(condition) = condition else {
            return vec!["no LiveMigratable condition on the VMI: not migratable".to_owned()];
        };
        let status = condition
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if status == "True" {
            return Vec::new();
        }
        let reason = condition
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let message = condition
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let mut why = format!("LiveMigratable={status} ({reason})");
        if !message.is_empty() {
            why.push_str(": ");
            why.push_str(message);
        }
        vec![why]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vmi(spec: Value, conditions: Value) -> Value {
        json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
               "metadata": {"name": "vm", "namespace": "team", "labels": {"kubevirt.io/nodeName": "n1"}},
               "spec": spec, "status": {"phase": "Running", "conditions": conditions}})
    }

    #[test]
    fn strategy_and_migratability_as_the_webhook_reads_them() {
        let migratable = json!([{"type": "LiveMigratable", "status": "True"}]);
        let gpu = json!([{"type": "LiveMigratable", "status": "False",
                          "reason": "HostDeviceNotLiveMigratable", "message": "GPU gpu1"}]);
        let cases = [
            (
                json!({"evictionStrategy": "LiveMigrate"}),
                migratable.clone(),
                Some("None"),
                ("LiveMigrate", "vmi"),
                vec![],
            ),
            (
                json!({}),
                gpu,
                Some("LiveMigrateIfPossible"),
                ("LiveMigrateIfPossible", "cluster"),
                vec!["LiveMigratable=False (HostDeviceNotLiveMigratable): GPU gpu1"],
            ),
            (
                json!({}),
                json!([]),
                None,
                ("None", "default"),
                vec!["no LiveMigratable condition on the VMI: not migratable"],
            ),
            (
                json!({}),
                json!([{"type": "LiveMigratable", "status": "Unknown"}]),
                None,
                ("None", "default"),
                vec!["LiveMigratable=Unknown ()"],
            ),
        ];
        for (spec, conditions, cluster, (strategy, source), reasons) in cases {
            let object = vmi(spec, conditions);
            let slice = Slice {
                vmis: vec![object],
                ..Slice::default()
            };
            let running = Running::new(&slice);
            let found = running.vmi("team", "vm").expect("running");
            assert_eq!(found.node, Some("n1"));
            let (got, got_source) = found.eviction_strategy(cluster);
            assert_eq!((got.as_str(), got_source), (strategy, source));
            assert_eq!(found.not_migratable(), reasons);
        }
    }
}
