//! `status`: why a node being drained still holds VMs, read off the running objects as KubeVirt
//! v1.9.0 and Harvester v1.8.2 act on them (docs/status.md has every cause with its source).
//!
//! Each VM whose VMI still runs on the node gets one [`Cause`] (the first that applies, in the
//! order of [`vm::cause`]), its evidence (the objects and fields read), since when it has been
//! so, and what the operator can do; the node gets its findings: PodDisruptionBudgets that allow
//! no disruption over a Pod on it ([`node::findings`]), Longhorn's instance-manager budget kept
//! for a last healthy replica among them.

mod migration;
mod node;
mod reading;
pub mod upgrade;
mod vm;

use serde::Serialize;
use serde_json::Value;

use crate::drain::DrainOutcome;
use crate::object::ObjectExt;

pub use node::selector_matches;
pub use upgrade::{UpdateCause, UpgradeStatus, VmiUpdateStatus, upgrade_status};

/// What a diagnosis reads: the cluster's objects (any namespace), the KubeVirt CR, and `now`
/// (seconds since the Unix epoch) to say how long a cause has lasted.
#[derive(Debug, Clone, Copy)]
pub struct Objects<'a> {
    pub vms: &'a [Value],
    pub vmis: &'a [Value],
    pub pods: &'a [Value],
    /// VirtualMachineInstanceMigrations.
    pub migrations: &'a [Value],
    /// `policy/v1` PodDisruptionBudgets.
    pub pdbs: &'a [Value],
    /// Longhorn's `replicas.longhorn.io`.
    pub replicas: &'a [Value],
    pub kubevirt: Option<&'a Value>,
    pub now: i64,
}

/// Why a VM is still on the node (docs/status.md, "Causes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Cause {
    NotMigratable,
    WaitingForExternal,
    MigrationQueued,
    Migrating,
    TargetUnschedulable,
    MigrationFailing,
    ExtraLauncherPods,
    Evicting,
    ShutdownByMaintenance,
    LabelOnlyOnVM,
    EvacuationMarkStale,
    /// Not yet asked to leave: migratable, no evacuation mark, no migration.
    AwaitingEviction,
}

impl Cause {
    /// Whether the VM holds the node for good: nothing moves until someone acts.
    pub fn holds_for_good(self) -> bool {
        matches!(
            self,
            Cause::NotMigratable | Cause::WaitingForExternal | Cause::EvacuationMarkStale
        )
    }
}

/// What holds a node as a whole (docs/status.md, "Node findings").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum NodeCause {
    LastHealthyReplica,
    PodDisruptionBudget,
}

/// One VM still on the node.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VmStatus {
    pub namespace: String,
    pub name: String,
    pub cause: Cause,
    /// Of `Evicting`: what its runStrategy does after (`Restart`, `MayStayOff`, `StaysOff`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fate: Option<DrainOutcome>,
    pub why: String,
    /// The objects and fields read, `Kind namespace/name field=value`.
    pub evidence: Vec<String>,
    /// Since when it has been so (the timestamp read), and for how many seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<i64>,
    /// What the operator can do.
    pub action: String,
}

/// One node finding: a PodDisruptionBudget that lets no Pod of the node go.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodeFinding {
    pub cause: NodeCause,
    /// `NAMESPACE/NAME` of the budget.
    pub object: String,
    pub why: String,
    pub evidence: Vec<String>,
    pub action: String,
}

/// A node's diagnosis.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnosis {
    pub node: String,
    pub vms: Vec<VmStatus>,
    pub node_findings: Vec<NodeFinding>,
}

impl Diagnosis {
    /// Something holds the node for good: a VM refused forever or waiting for an outside actor,
    /// a budget that allows no disruption.
    pub fn holds_for_good(&self) -> bool {
        !self.node_findings.is_empty() || self.vms.iter().any(|vm| vm.cause.holds_for_good())
    }
}

/// Every VM whose VMI runs on `node` (`status.nodeName`), by namespace and name, with its cause;
/// and the node's findings.
pub fn diagnose(node: &str, objects: &Objects) -> Diagnosis {
    let mut vms: Vec<VmStatus> = objects
        .vmis
        .iter()
        .filter(|vmi| vmi.text_at("/status/nodeName") == Some(node))
        .filter(|vmi| !finished(vmi))
        .map(|vmi| vm::status(vmi, objects))
        .collect();
    vms.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    Diagnosis {
        node: node.to_owned(),
        vms,
        node_findings: node::findings(node, objects),
    }
}

/// A VMI or Pod whose `status.phase` is final (`Succeeded`, `Failed`).
fn finished(object: &Value) -> bool {
    matches!(
        object.text_at("/status/phase"),
        Some("Succeeded" | "Failed")
    )
}

/// Seconds from an RFC 3339 `timestamp` to `now`, when it reads.
fn seconds_since(timestamp: &str, now: i64) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(timestamp)
        .ok()
        .map(|t| now.saturating_sub(t.timestamp()))
}

/// `Kind namespace/name`, as evidence names an object.
fn named(kind: &str, object: &Value) -> String {
    let (namespace, name) = object.key();
    format!("{kind} {namespace}/{name}")
}
