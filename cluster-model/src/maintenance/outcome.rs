//! The constants Harvester names and the shapes of a preview's answer.

use crate::drain::DrainOutcome;
use serde::Serialize;
use serde_json::Value;

/// The VMI (and launcher Pod) label naming the node it runs on (VMIU:143-153).
pub const NODE_NAME_LABEL: &str = "kubevirt.io/nodeName";
/// The node role labels of `DrainPossible` (DH:89-90); their existence counts, not their value.
pub const CONTROL_PLANE_LABEL: &str = "node-role.kubernetes.io/control-plane";
pub const ETCD_LABEL: &str = "node-role.kubernetes.io/etcd";
/// The node annotation of a node in (or entering) maintenance (C:234).
pub const MAINTAIN_STATUS: &str = "harvesterhci.io/maintain-status";
/// The VM annotation that marks a VM for a restart by the node's maintenance (C:239).
pub const NODE_NAME_ANNOTATION: &str = "harvesterhci.io/maintain-mode-strategy-node-name";
/// The VM annotation where Harvester keeps the last runStrategy other than `Halted`
/// (`pkg/util/constants.go:24`).
pub const RUN_STRATEGY_ANNOTATION: &str = "harvesterhci.io/vmRunStrategy";
/// Longhorn's namespace (C:139).
pub const LONGHORN_NAMESPACE: &str = "longhorn-system";

/// Refusal keys besides KubeVirt's `LiveMigratable` reasons (C:304-306).
pub const LAST_HEALTHY_REPLICA: &str = "LastHealthyReplica";
pub const NODE_SCHEDULING_REQUIREMENTS_NOT_MET: &str = "NodeSchedulingRequirementsNotMet";
/// The control-plane rule's two errors, keyed by Harvester's names (DH:40-42).
pub const SINGLE_CONTROL_PLANE_NODE: &str = "SingleControlPlaneNode";
pub const HA_CONTROL_PLANE_NODE: &str = "HAControlPlaneNode";

pub(crate) const AFTER_ENABLE: &str = "ShutdownAndRestartAfterEnable";
pub(crate) const AFTER_DISABLE: &str = "ShutdownAndRestartAfterDisable";

/// What the maintenance reads of the cluster: every object as `kubectl get -o json` writes it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Objects<'a> {
    pub nodes: &'a [Value],
    /// `kubevirt.io/v1` VirtualMachines.
    pub vms: &'a [Value],
    /// `kubevirt.io/v1` VirtualMachineInstances.
    pub vmis: &'a [Value],
    /// Pods (the virt-launcher Pods are the ones read).
    pub pods: &'a [Value],
    /// `volumes.longhorn.io` and `replicas.longhorn.io`; `None`: not known, `LastHealthyReplica`
    /// is not checked (a note says so).
    pub longhorn: Option<Longhorn<'a>>,
    /// A controller evacuates `External` VMIs (as in [`drain_outcome`]).
    pub external_controller: bool,
    /// PersistentVolumeClaims and PersistentVolumes: a VM evicted whose disk only this node can
    /// mount stays down until the node is back (R10). Empty: not known.
    pub claims: &'a [Value],
    pub persistent_volumes: &'a [Value],
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Longhorn<'a> {
    pub volumes: &'a [Value],
    pub replicas: &'a [Value],
}

/// What becomes of maintenance mode on the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Outcome {
    /// Harvester refuses it and removes the request: nothing changes.
    Refused,
    /// The node reaches `maintain-status=completed`.
    Completes,
    /// The node stays cordoned (or in `running`) forever, or the controller retries forever.
    NeverCompletes,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Refused => "Refused",
            Outcome::Completes => "Completes",
            Outcome::NeverCompletes => "NeverCompletes",
        }
    }
}

/// When a VM that Harvester stops starts again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Restart {
    /// When the node's maintenance completes (MC:73-107).
    AfterEnable,
    /// When maintenance mode is disabled (FM:247-276).
    AfterDisable,
    /// Never: it stays off.
    Never,
}

impl Restart {
    pub fn as_str(self) -> &'static str {
        match self {
            Restart::AfterEnable => "afterEnable",
            Restart::AfterDisable => "afterDisable",
            Restart::Never => "never",
        }
    }
}

/// One reason Harvester refuses, keyed as Harvester keys it, with the VMs it names
/// (`namespace/name`, in Harvester's order) and Harvester's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    pub reason: String,
    pub vms: Vec<String>,
    pub message: String,
}

/// What the maintenance does with one VM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmOutcome {
    pub namespace: String,
    pub name: String,
    /// The node its VMI runs on.
    pub node: Option<String>,
    pub outcome: DrainOutcome,
    /// For `ShutDown`: when it starts again.
    pub restart: Option<Restart>,
    /// Why, in words.
    pub reasons: Vec<String>,
    /// What the outcome does not rest on but an operator should know: the policy's predicted
    /// reasons for a VMI without a `LiveMigratable` condition, a missing launcher Pod.
    pub warnings: Vec<String>,
}

/// The preview of maintenance mode on one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Preview {
    pub node: String,
    pub force: bool,
    pub outcome: Outcome,
    /// For `Refused`: every reason, sorted by key (Harvester's own order is random).
    pub refusal: Vec<Refusal>,
    /// The VMs the maintenance acts on: those on the node, and the ones a forced
    /// `LastHealthyReplica` stops elsewhere; sorted by namespace and name.
    pub vms: Vec<VmOutcome>,
    /// For `NeverCompletes`: why, beyond the VMs that stay or block.
    pub stuck: Vec<String>,
    /// What the objects do not tell and was therefore not checked.
    pub notes: Vec<String>,
}
