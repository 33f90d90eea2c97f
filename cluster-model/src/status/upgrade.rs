//! `status --upgrade`: what KubeVirt v1.9.0's workload updater still has to do, VMI by VMI
//! (`pkg/virt-controller/watch/workload-updater/workload-updater.go`). A VMI is outdated when
//! it carries `kubevirt.io/outdatedLauncherImage` (the VMI controller's mirror of the updater's
//! `isOutdated`, `vmi/lifecycle.go` l.846-859) or waits for a live update (`HotVCPUChange`,
//! `HotMemoryChange`, `MigrationRequired`, `VolumesChange`: `doesRequireMigration`,
//! l.332-347). Each gets one cause: its migration under way or queued, or what the updater's
//! decision ([`crate::upgrade::decide`]) leaves it with.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::migration;
use super::{Objects, finished, named};
use crate::drain::DrainOutcome;
use crate::object::ObjectExt;
use crate::upgrade::{UpdateOutcome, Updater, decide};

/// The VMI label the VMI controller sets while its launcher image is not virt-controller's.
pub const OUTDATED_LABEL: &str = "kubevirt.io/outdatedLauncherImage";

/// Why an outdated VMI is not updated yet (docs/status.md, "During a KubeVirt upgrade").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum UpdateCause {
    UpdateMigrating,
    UpdateQueued,
    NeverUpdated,
    EvictionRefused,
    WillBeEvicted,
}

impl UpdateCause {
    /// The update never completes for this VMI on its own.
    pub fn holds_for_good(self) -> bool {
        matches!(
            self,
            UpdateCause::NeverUpdated | UpdateCause::EvictionRefused
        )
    }
}

/// One outdated VMI.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VmiUpdateStatus {
    pub namespace: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    pub cause: UpdateCause,
    /// Of `WillBeEvicted`: what its runStrategy does after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fate: Option<DrainOutcome>,
    pub why: String,
    pub evidence: Vec<String>,
    pub action: String,
}

/// The update in progress: the outdated VMIs, and what the KubeVirt CR counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpgradeStatus {
    pub vmis: Vec<VmiUpdateStatus>,
    /// The CR's `status.outdatedVirtualMachineInstanceWorkloads`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outdated_workloads: Option<u64>,
    /// The updater acts only when the CR is `Deployed` with `observedDeploymentID` equal to
    /// `targetDeploymentID` (l.450-455).
    pub updater_active: bool,
}

impl UpgradeStatus {
    pub fn holds_for_good(&self) -> bool {
        self.vmis.iter().any(|v| v.cause.holds_for_good())
    }
}

/// Every outdated running VMI of `objects` (its VMs, Pods and migrations read there too).
pub fn upgrade_status(objects: &Objects, updater: &Updater) -> UpgradeStatus {
    // Each VMI's VM by namespace and name: one index, not a scan of every VM per VMI.
    let vms: HashMap<(&str, &str), &Value> = objects.vms.iter().map(|vm| (vm.key(), vm)).collect();
    let mut vmis: Vec<VmiUpdateStatus> = objects
        .vmis
        .iter()
        .filter(|vmi| vmi.text_at("/status/phase") == Some("Running") && !finished(vmi))
        .filter_map(|vmi| outdated(vmi, vms.get(&vmi.key()).copied(), objects, updater))
        .collect();
    vmis.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    let cr = objects.kubevirt;
    let status = |field: &str| cr.and_then(|cr| cr.pointer(&format!("/status/{field}")));
    UpgradeStatus {
        vmis,
        outdated_workloads: status("outdatedVirtualMachineInstanceWorkloads")
            .and_then(Value::as_u64),
        updater_active: status("phase").and_then(Value::as_str) == Some("Deployed")
            && status("observedDeploymentID") == status("targetDeploymentID"),
    }
}

/// The VMI's cause when it is outdated.
fn outdated(
    vmi: &Value,
    vm: Option<&Value>,
    objects: &Objects,
    updater: &Updater,
) -> Option<VmiUpdateStatus> {
    let (namespace, name) = vmi.key();
    let update = decide(vmi, vm, updater);
    let image = vmi.label(OUTDATED_LABEL).is_some();
    if !image && update.pending_live_updates.is_empty() {
        return None;
    }
    let mut evidence = Vec::new();
    let vmi_name = named("VirtualMachineInstance", vmi);
    if image {
        evidence.push(format!("{vmi_name} labels.{OUTDATED_LABEL}"));
    }
    evidence.extend(
        update
            .pending_live_updates
            .iter()
            .map(|c| format!("{vmi_name} status.conditions[{c}]")),
    );
    let migrations = migration::of(vmi, objects);
    let (cause, fate, why, action) = match migration::unfinished(&migrations) {
        Some(unfinished) => {
            evidence.push(format!(
                "{} status.phase={}",
                named("VirtualMachineInstanceMigration", unfinished),
                migration::phase(unfinished)
            ));
            under_way(unfinished, objects)
        }
        None => decided(update.outcome, update.reasons.join("; ")),
    };
    Some(VmiUpdateStatus {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        node: update.node,
        cause,
        fate,
        why,
        evidence,
        action: action.to_owned(),
    })
}

type Found = (UpdateCause, Option<DrainOutcome>, String, &'static str);

/// A migration of the VMI not finished: queued (`Pending`, no target Pod) or under way.
fn under_way(unfinished: &Value, objects: &Objects) -> Found {
    let phase = migration::phase(unfinished);
    if matches!(phase, "Pending" | "") && migration::target_pod(unfinished, objects).is_none() {
        let why = format!(
            "its migration waits for a slot: at most {} migrations run in the cluster ({} now)",
            migration::limit(objects, "parallelMigrationsPerCluster", 5),
            migration::running(objects)
        );
        return (UpdateCause::UpdateQueued, None, why, "wait");
    }
    let why = format!("being live-migrated to a new launcher (migration phase {phase})");
    (UpdateCause::UpdateMigrating, None, why, "wait")
}

/// What the updater's decision leaves a VMI without a migration with.
fn decided(outcome: UpdateOutcome, reasons: String) -> Found {
    use UpdateCause::*;
    match outcome {
        UpdateOutcome::Migrate => (
            UpdateQueued,
            None,
            reasons,
            "wait: the updater creates its migration when a slot is free",
        ),
        UpdateOutcome::StaysOutdated => (
            NeverUpdated,
            None,
            reasons,
            "restart the VM once (`virtctl restart`) to move it to the new launcher, or add Evict to the KubeVirt CR's workloadUpdateMethods",
        ),
        UpdateOutcome::Blocks => (
            EvictionRefused,
            None,
            reasons,
            "make it migratable, or give the VM evictionStrategy LiveMigrateIfPossible and restart it once",
        ),
        UpdateOutcome::Evacuate => (
            EvictionRefused,
            None,
            reasons,
            "run the controller that evacuates External VMIs, or restart the VM once",
        ),
        UpdateOutcome::Restart => (
            WillBeEvicted,
            Some(DrainOutcome::Restart),
            reasons,
            "wait: it is evicted in a batch and started again",
        ),
        UpdateOutcome::MayStayOff => (
            WillBeEvicted,
            Some(DrainOutcome::MayStayOff),
            reasons,
            "start it after its eviction if it stays off (`virtctl start`)",
        ),
        UpdateOutcome::StaysOff => (
            WillBeEvicted,
            Some(DrainOutcome::StaysOff),
            reasons,
            "start it after its eviction (`virtctl start`), or restart it yourself first",
        ),
    }
}
