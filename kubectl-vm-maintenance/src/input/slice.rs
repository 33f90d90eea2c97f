//! One slice of the input: the parsed objects of some VMs (their VMs, VMIs, launcher Pods, the
//! claims of their namespaces and the PersistentVolumes those are bound to, for a node's
//! maintenance Longhorn's volumes and replicas) with the cluster-wide ones (KubeVirt CRs,
//! instance types, Nodes), as `store::Store::slice` parses them; and what of them is missing.

use cluster_model::maintenance::LAST_HEALTHY_REPLICA;
use serde_json::Value;

/// The parsed objects of some VMs, and the cluster-wide ones.
#[derive(Debug, Default)]
pub struct Slice {
    /// VirtualMachines in reading order, one per namespace/name (the last one read wins).
    pub vms: Vec<Value>,
    /// Each of `vms`' place among the input's VMs (0 is the first read).
    pub numbers: Vec<usize>,
    /// `kubevirt.io` KubeVirt CRs.
    pub kubevirts: Vec<Value>,
    /// `v1` PersistentVolumeClaims.
    pub pvcs: Vec<Value>,
    /// `instancetype.kubevirt.io` instancetypes and preferences (cluster-wide and namespaced).
    pub instancetypes: Vec<Value>,
    pub nodes: Vec<Value>,
    pub vmis: Vec<Value>,
    pub pods: Vec<Value>,
    /// Longhorn's volumes and replicas (of a node's maintenance only).
    pub volumes: Vec<Value>,
    pub replicas: Vec<Value>,
    /// `v1` PersistentVolumes: a disk only one node can mount (R10).
    pub persistent_volumes: Vec<Value>,
}

/// Running VMIs (`running`) and bound claims (`bound`) without any PersistentVolume
/// (`volumes`): R10 is not checked.
pub fn missing_disks(running: bool, bound: bool, volumes: bool) -> Option<String> {
    (running && bound && !volumes).then(|| {
        "no PersistentVolumes in the input: a disk bound to one node (DownUntilNodeReturns) is not checked".to_owned()
    })
}

/// What the dump lacks, in words (never guessed): VMIs (`vmis`: some were read), launcher Pods
/// (`pods`), and of Longhorn's volumes and replicas (`longhorn`: whether each was read) one kind
/// without the other.
pub fn missing(vmis: bool, pods: bool, longhorn: (bool, bool)) -> Vec<String> {
    let mut notes = Vec::new();
    if !vmis {
        notes.push(
            "no VirtualMachineInstances in the dump: no VM is known to run on any node".to_owned(),
        );
    }
    if !pods {
        notes.push(
            "no Pods in the dump: the drain filter reads each VMI's labels instead of its launcher Pod's"
                .to_owned(),
        );
    }
    match longhorn {
        (true, false) => notes.push(format!(
            "volumes.longhorn.io in the dump but no replicas.longhorn.io: {LAST_HEALTHY_REPLICA} not checked"
        )),
        (false, true) => notes.push(format!(
            "replicas.longhorn.io in the dump but no volumes.longhorn.io: {LAST_HEALTHY_REPLICA} not checked"
        )),
        _ => {}
    }
    notes
}
