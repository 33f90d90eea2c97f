//! The kinds a dump holds beyond the VMs, KubeVirt CRs, claims and instance types that
//! `input::Dump` keeps: Nodes, VirtualMachineInstances, launcher Pods, PersistentVolumes
//! and Longhorn's volumes and replicas, moved out of the same sources by `input::split`;
//! and what of them is missing.

use cluster_model::maintenance::LAST_HEALTHY_REPLICA;
use serde_json::Value;

/// The kinds of the dump beyond [`Dump`]'s: what runs where, and the disks.
#[derive(Debug, Default)]
pub struct Extra {
    pub nodes: Vec<Value>,
    pub vmis: Vec<Value>,
    pub pods: Vec<Value>,
    pub volumes: Vec<Value>,
    pub replicas: Vec<Value>,
    /// `v1` PersistentVolumes: a disk only one node can mount (R10).
    pub persistent_volumes: Vec<Value>,
}

impl Extra {
    /// Keeps an object of its kinds (`kubectl get nodes,vmi,pods,pv -A -o json` and Longhorn's
    /// `volumes.longhorn.io`, `replicas.longhorn.io`); drops any other.
    pub fn keep(&mut self, object: Value) {
        let api_version = object.get("apiVersion").and_then(Value::as_str);
        let kind = object.get("kind").and_then(Value::as_str);
        let list = match (api_version, kind) {
            (Some("v1"), Some("Node")) => &mut self.nodes,
            (Some("v1"), Some("Pod")) => &mut self.pods,
            (Some("v1"), Some("PersistentVolume")) => &mut self.persistent_volumes,
            (Some(v), Some("VirtualMachineInstance")) if v.starts_with("kubevirt.io/") => {
                &mut self.vmis
            }
            (Some(v), Some("Volume")) if v.starts_with("longhorn.io/") => &mut self.volumes,
            (Some(v), Some("Replica")) if v.starts_with("longhorn.io/") => &mut self.replicas,
            _ => return,
        };
        list.push(object);
    }

    /// Running VMIs and bound claims without the PersistentVolumes they are bound to: R10 is
    /// not checked.
    pub fn missing_disks(&self, claims: &[Value]) -> Option<String> {
        let bound = claims
            .iter()
            .any(|c| c.pointer("/spec/volumeName").is_some());
        let running = !self.vmis.is_empty();
        (running && bound && self.persistent_volumes.is_empty()).then(|| {
            "no PersistentVolumes in the input: a disk bound to one node (DownUntilNodeReturns) is not checked".to_owned()
        })
    }

    /// What the dump lacks, in words (never guessed).
    pub fn missing(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.vmis.is_empty() {
            notes.push(
                "no VirtualMachineInstances in the dump: no VM is known to run on any node"
                    .to_owned(),
            );
        }
        if self.pods.is_empty() {
            notes.push(
                "no Pods in the dump: the drain filter reads each VMI's labels instead of its launcher Pod's"
                    .to_owned(),
            );
        }
        match (self.volumes.is_empty(), self.replicas.is_empty()) {
            (false, true) => notes.push(format!(
                "volumes.longhorn.io in the dump but no replicas.longhorn.io: {LAST_HEALTHY_REPLICA} not checked"
            )),
            (true, false) => notes.push(format!(
                "replicas.longhorn.io in the dump but no volumes.longhorn.io: {LAST_HEALTHY_REPLICA} not checked"
            )),
            _ => {}
        }
        notes
    }
}
