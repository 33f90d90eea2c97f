//! A VMI's VirtualMachineInstanceMigrations as KubeVirt v1.9.0's migration controller reads them
//! (`pkg/virt-controller/watch/migration/migration.go`): the unfinished one, its target Pod, the
//! back-off of evacuation and workload-update migrations, what counts as running.

use serde_json::Value;

use super::Objects;
use crate::object::ObjectExt;

/// The annotations that make a migration subject to the back-off (`handleMigrationBackoff`,
/// l.1047-1112): evacuation (`kubevirt.io/evacuationMigration`) and workload update.
const BACKOFF_ANNOTATIONS: [&str; 2] = [
    "kubevirt.io/evacuationMigration",
    "kubevirt.io/workloadUpdateMigration",
];

/// The first back-off, doubled by each earlier failure (l.1080-1095).
pub(super) const FIRST_BACKOFF_SECONDS: i64 = 20;

/// A target Pod left unschedulable this long after its creation is deleted (l.82-99,
/// `defaultUnschedulablePendingTimeoutSeconds`); any pending one after 900 s.
pub(super) const UNSCHEDULABLE_TIMEOUT_SECONDS: i64 = 300;
pub(super) const PENDING_TIMEOUT_SECONDS: i64 = 900;

/// The phase of a migration (`status.phase`; `""` when unset).
pub(super) fn phase(migration: &Value) -> &str {
    migration.text_at("/status/phase").unwrap_or_default()
}

fn finished(migration: &Value) -> bool {
    matches!(phase(migration), "Succeeded" | "Failed")
}

/// The VMI's migrations (same namespace, `spec.vmiName`), newest first.
pub(super) fn of<'a>(vmi: &Value, objects: &Objects<'a>) -> Vec<&'a Value> {
    let (namespace, name) = vmi.key();
    let mut found: Vec<&Value> = objects
        .migrations
        .iter()
        .filter(|m| m.namespace() == namespace && m.text_at("/spec/vmiName") == Some(name))
        .collect();
    found.sort_by(|a, b| created(b).cmp(created(a)));
    found
}

fn created(object: &Value) -> &str {
    object
        .text_at("/metadata/creationTimestamp")
        .unwrap_or_default()
}

/// The unfinished one of `migrations` (the newest).
pub(super) fn unfinished<'a>(migrations: &[&'a Value]) -> Option<&'a Value> {
    migrations.iter().copied().find(|m| !finished(m))
}

/// The target Pod of a migration: labelled `kubevirt.io/migrationJobUID` with its UID.
pub(super) fn target_pod<'a>(migration: &Value, objects: &Objects<'a>) -> Option<&'a Value> {
    let uid = migration.text_at("/metadata/uid")?;
    objects
        .pods
        .iter()
        .find(|pod| pod.label("kubevirt.io/migrationJobUID") == Some(uid))
}

/// A Pod the scheduler cannot place: `Pending` with `PodScheduled=False`, reason
/// `Unschedulable` (`isPodPendingUnschedulable`, l.1501-1516); the condition's message.
pub(super) fn unschedulable(pod: &Value) -> Option<&str> {
    if pod.text_at("/status/phase") != Some("Pending") {
        return None;
    }
    let conditions = pod.pointer("/status/conditions")?.as_array()?;
    conditions
        .iter()
        .find(|c| {
            c.text_at("/type") == Some("PodScheduled")
                && c.text_at("/status") == Some("False")
                && c.text_at("/reason") == Some("Unschedulable")
        })
        .map(|c| c.text_at("/message").unwrap_or_default())
}

/// The back-off-eligible migrations that failed since the last one that succeeded, newest
/// first (the unfinished ones skipped).
pub(super) fn failures<'a>(migrations: &[&'a Value]) -> Vec<&'a Value> {
    let eligible = |m: &&Value| {
        BACKOFF_ANNOTATIONS
            .iter()
            .any(|a| m.annotation(a).is_some())
    };
    migrations
        .iter()
        .copied()
        .filter(eligible)
        .skip_while(|m| !finished(m))
        .take_while(|m| phase(m) == "Failed")
        .collect()
}

/// The back-off before the next attempt after `failures` failed attempts: 20 s, doubled by
/// each earlier failure.
pub(super) fn backoff_seconds(failures: usize) -> i64 {
    let doublings = u32::try_from(failures.saturating_sub(1)).unwrap_or(u32::MAX);
    FIRST_BACKOFF_SECONDS.saturating_mul(2_i64.saturating_pow(doublings))
}

/// When a migration entered `phase` (`status.phaseTransitionTimestamps`).
pub(super) fn entered<'a>(migration: &'a Value, phase: &str) -> Option<&'a str> {
    let transitions = migration
        .pointer("/status/phaseTransitionTimestamps")?
        .as_array()?;
    transitions
        .iter()
        .find(|t| t.text_at("/phase") == Some(phase))
        .and_then(|t| t.text_at("/phaseTransitionTimestamp"))
}

/// The migrations that count against `parallelMigrationsPerCluster` (`findRunningMigrations`,
/// l.2440-2467): a phase past `Pending` and not final, or `Pending` with a target Pod.
pub(super) fn running(objects: &Objects) -> usize {
    objects
        .migrations
        .iter()
        .filter(|m| match phase(m) {
            "" | "Succeeded" | "Failed" | "WaitingForSync" | "Synchronizing" => false,
            "Pending" => target_pod(m, objects).is_some(),
            _ => true,
        })
        .count()
}

/// The KubeVirt CR's `spec.configuration.migrations` limit, else KubeVirt's default
/// (`pkg/virt-config/virt-config.go` l.44-45: 5 per cluster, 2 outbound per node).
pub(super) fn limit(objects: &Objects, field: &str, default: u64) -> u64 {
    objects
        .kubevirt
        .and_then(|cr| cr.pointer(&format!("/spec/configuration/migrations/{field}")))
        .and_then(Value::as_u64)
        .unwrap_or(default)
}
