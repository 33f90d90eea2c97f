//! One VM still on the node: its cause, first match in this order (docs/status.md, "Causes"):
//! an unfinished migration ([`migrating`]: `TargetUnschedulable`, `MigrationFailing`,
//! `ExtraLauncherPods`, `MigrationQueued`, `Migrating`); more than one running launcher Pod;
//! Harvester's drain filter (`ShutdownByMaintenance`, `LabelOnlyOnVM`); then the eviction as
//! virt-api's webhook answers it ([`evicted`]).

use serde_json::Value;

use super::migration::{self, PENDING_TIMEOUT_SECONDS, UNSCHEDULABLE_TIMEOUT_SECONDS};
use super::reading::{Reading, condition_since};
use super::{Cause, Objects, VmStatus, finished, named, seconds_since};
use crate::drain::{DEFAULT_LABEL_KEY as STRATEGY_LABEL, DrainAction, drain_action};
use crate::object::ObjectExt;
use crate::restart::{RunStrategy, after_eviction};
use vm_maintenance_strategy::strategy::is_shutdown_family;

/// What is found of a VM: the cause, the words, the evidence, since when.
struct Found {
    cause: Cause,
    why: String,
    evidence: Vec<String>,
    since: Option<String>,
    action: String,
}

impl Found {
    fn new(cause: Cause, why: String, action: &str) -> Found {
        Found {
            cause,
            why,
            evidence: Vec::new(),
            since: None,
            action: action.to_owned(),
        }
    }

    fn read(mut self, evidence: String) -> Found {
        self.evidence.push(evidence);
        self
    }

    fn since(mut self, since: Option<&str>) -> Found {
        self.since = since.map(str::to_owned);
        self
    }
}

/// The VM of `vmi`, with its cause.
pub(super) fn status(vmi: &Value, objects: &Objects) -> VmStatus {
    let (namespace, name) = vmi.key();
    let vm = objects.vms.iter().find(|vm| vm.key() == (namespace, name));
    let pods = launcher_pods(vmi, objects);
    let migrations = migration::of(vmi, objects);
    let found = match migration::unfinished(&migrations) {
        Some(unfinished) => migrating(vmi, unfinished, &migrations, &pods, objects),
        None => settled(vmi, vm, &pods, &migrations, objects),
    };
    let fate = (found.cause == Cause::Evicting)
        .then(|| after_eviction(&RunStrategy::of(vm), None).outcome);
    VmStatus {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        cause: found.cause,
        fate,
        seconds: found
            .since
            .as_deref()
            .and_then(|t| seconds_since(t, objects.now)),
        why: found.why,
        evidence: found.evidence,
        since: found.since,
        action: found.action,
    }
}

/// The VMI's launcher Pods that still run (owned by it, phase not final).
fn launcher_pods<'a>(vmi: &Value, objects: &Objects<'a>) -> Vec<&'a Value> {
    let (namespace, name) = vmi.key();
    objects
        .pods
        .iter()
        .filter(|pod| pod.namespace() == namespace)
        .filter(|pod| pod.label("kubevirt.io") == Some("virt-launcher"))
        .filter(|pod| pod.owner("VirtualMachineInstance") == Some(name))
        .filter(|pod| !finished(pod))
        .collect()
}

/// A VMI with an unfinished migration.
fn migrating(
    vmi: &Value,
    unfinished: &Value,
    migrations: &[&Value],
    pods: &[&Value],
    objects: &Objects,
) -> Found {
    let phase = migration::phase(unfinished);
    let shown = format!(
        "{} status.phase={phase}",
        named("VirtualMachineInstanceMigration", unfinished)
    );
    let target = migration::target_pod(unfinished, objects);
    if let Some((pod, message)) = target.and_then(|p| Some((p, migration::unschedulable(p)?))) {
        let why = format!(
            "the migration's target Pod cannot be scheduled ({message}); KubeVirt deletes it {UNSCHEDULABLE_TIMEOUT_SECONDS} s after its creation ({PENDING_TIMEOUT_SECONDS} s for any pending target) and the migration fails"
        );
        return Found::new(Cause::TargetUnschedulable, why, "free capacity on another node or relax the VM's node affinity, tolerations or resources; `virtctl migrate-cancel` stops the attempt")
            .read(shown)
            .read(format!("{} status.conditions[PodScheduled]=False/Unschedulable", named("Pod", pod)))
            .since(pod.text_at("/metadata/creationTimestamp"));
    }
    if matches!(phase, "Pending" | "") && target.is_none() {
        if let Some(failing) = failing(migrations) {
            return failing.read(shown);
        }
        if pods.len() > 1 {
            return extra_pods(vmi, pods).read(shown);
        }
        let running = migration::running(objects);
        let cluster = migration::limit(objects, "parallelMigrationsPerCluster", 5);
        let node = migration::limit(objects, "parallelOutboundMigrationsPerNode", 2);
        let why = format!(
            "its migration waits for a free slot: KubeVirt runs at most {cluster} migrations in the cluster (parallelMigrationsPerCluster) and {node} out of one node (parallelOutboundMigrationsPerNode); {running} run now"
        );
        return Found::new(Cause::MigrationQueued, why, "wait; raise spec.configuration.migrations.parallelMigrationsPerCluster / parallelOutboundMigrationsPerNode in the KubeVirt CR to move more VMs at once")
            .read(shown)
            .since(unfinished.text_at("/metadata/creationTimestamp"));
    }
    let to = vmi
        .text_at("/status/migrationState/targetNode")
        .map(|n| format!(" to node {n}"))
        .unwrap_or_default();
    let since = vmi
        .text_at("/status/migrationState/startTimestamp")
        .or_else(|| unfinished.text_at("/metadata/creationTimestamp"));
    Found::new(
        Cause::Migrating,
        format!("being live-migrated{to} (migration phase {phase})"),
        "wait; `virtctl migrate-cancel` stops it",
    )
    .read(shown)
    .since(since)
}

/// Evacuation or workload-update migrations that failed since the last success: the next
/// attempt waits out the back-off (`handleMigrationBackoff`, l.1047-1112).
fn failing(migrations: &[&Value]) -> Option<Found> {
    let failures = migration::failures(migrations);
    let last = failures.first()?;
    let wait = migration::backoff_seconds(failures.len());
    let reason = last
        .text_at("/status/migrationState/failureReason")
        .map(|r| format!(": {r}"))
        .unwrap_or_default();
    let why = format!(
        "{} migration(s) failed since the last success (the last{reason}); KubeVirt waits {wait} s after the last failure before it tries again",
        failures.len()
    );
    let found = Found::new(Cause::MigrationFailing, why, "read the failed migrations' status.migrationState.failureReason and the VMI's events (`kubectl describe vmi`) and fix the cause; KubeVirt retries on its own")
        .read(format!("{} status.phase=Failed", named("VirtualMachineInstanceMigration", last)))
        .since(migration::entered(last, "Failed"));
    Some(found)
}

/// More than one running launcher Pod: KubeVirt neither evacuates nor migrates the VMI until
/// one is left (`evacuation.go` l.466-469, `migration.go` l.1354-1358).
fn extra_pods(vmi: &Value, pods: &[&Value]) -> Found {
    let names: Vec<String> = pods.iter().map(|p| p.name().to_owned()).collect();
    let why = format!(
        "{} launcher Pods run for the VMI ({}): KubeVirt starts no migration until only one is left",
        pods.len(),
        names.join(", ")
    );
    let mut found = Found::new(
        Cause::ExtraLauncherPods,
        why,
        "find why the extra Pod lingers (a terminating or stuck target of an earlier migration) and delete the one not on the VMI's node",
    );
    for pod in pods {
        let node = pod.text_at("/spec/nodeName").unwrap_or_default();
        found = found.read(format!("{} spec.nodeName={node}", named("Pod", pod)));
    }
    found.read(format!(
        "{} status.nodeName={}",
        named("VirtualMachineInstance", vmi),
        vmi.text_at("/status/nodeName").unwrap_or_default()
    ))
}

/// A VMI without an unfinished migration.
fn settled(
    vmi: &Value,
    vm: Option<&Value>,
    pods: &[&Value],
    migrations: &[&Value],
    objects: &Objects,
) -> Found {
    if pods.len() > 1 {
        return extra_pods(vmi, pods);
    }
    let node = vmi.text_at("/status/nodeName").unwrap_or_default();
    let pod = pods.first().copied();
    let pod_label = pod.and_then(|p| p.label(STRATEGY_LABEL));
    let vm_label = vm.and_then(|v| v.label(STRATEGY_LABEL));
    let skipped = |pod: &&Value| {
        pod.labels()
            .is_some_and(|l| drain_action(l) == DrainAction::Skip)
    };
    if let Some(pod) = pod.filter(skipped) {
        let label = pod_label.unwrap_or_default();
        let why = format!(
            "its Pod's {STRATEGY_LABEL}={label}: Harvester's drain filter skips the Pod and the maintenance stops the VM (runStrategy Halted)"
        );
        return Found::new(Cause::ShutdownByMaintenance, why, "wait for the VM to stop; start it again as its label says (Harvester restarts ShutdownAndRestartAfter* VMs itself)")
            .read(format!("{} labels.{STRATEGY_LABEL}={label}", named("Pod", pod)));
    }
    let found = evicted(vmi, vm, node, migrations, objects);
    if vm_label.is_some_and(is_shutdown_family) && !pod_label.is_some_and(is_shutdown_family) {
        let label = vm_label.unwrap_or_default();
        let why = format!(
            "the VM's {STRATEGY_LABEL}={label} never reached its launcher Pod, which Harvester's drain filter reads: the VM is drained as Migrate ({})",
            found.why
        );
        let mut only = Found::new(Cause::LabelOnlyOnVM, why, "restart the VM once so its Pod carries the label (`virtctl restart`), or `kubectl vm-maintenance sync --apply`")
            .read(format!("VirtualMachine {}/{} labels.{STRATEGY_LABEL}={label}", vmi.namespace(), vmi.name()));
        only.evidence.extend(found.evidence);
        return only.since(found.since.as_deref());
    }
    found
}

/// The eviction as virt-api's webhook answers it (`pod-eviction-admitter.go` l.127-183) and what
/// the evacuation controller does with the mark (`evacuation.go` l.416-477).
fn evicted(
    vmi: &Value,
    vm: Option<&Value>,
    node: &str,
    migrations: &[&Value],
    objects: &Objects,
) -> Found {
    let r = Reading::of(vmi, objects);
    let marks = matches!(r.strategy, "LiveMigrate" | "External")
        || (r.strategy == "LiveMigrateIfPossible" && r.migratable);
    if let Some(mark) = r.mark.filter(|m| *m != node && marks) {
        let why = format!(
            "marked for evacuation from node {mark}, where it no longer runs: every eviction is refused (429, \"Evacuation in progress\") and nothing migrates it"
        );
        let action = "`virtctl evacuate-cancel` clears the mark";
        return Found::new(Cause::EvacuationMarkStale, why, action)
            .read(format!("{} status.evacuationNodeName={mark}", r.vmi_name))
            .read(format!("{} status.nodeName={node}", r.vmi_name));
    }
    by_strategy(&r, vmi, vm, migrations, objects)
}

/// What virt-api's webhook does with the eviction of a VMI by its strategy.
fn by_strategy(
    r: &Reading,
    vmi: &Value,
    vm: Option<&Value>,
    migrations: &[&Value],
    objects: &Objects,
) -> Found {
    let strategy_read = r.strategy_read.clone();
    match r.strategy {
        "LiveMigrate" if !r.migratable => {
            let why = "LiveMigrate and not live-migratable: virt-api refuses every eviction of its Pod (429), forever".to_owned();
            Found::new(Cause::NotMigratable, why, "make it migratable, or give the VM evictionStrategy LiveMigrateIfPossible (or None) and restart it once: a VMI keeps the strategy it started with")
                .read(strategy_read)
                .read(r.condition_read.clone())
                .since(condition_since(vmi))
        }
        "External" => {
            let marked = r
                .mark
                .map(|m| format!("marked for evacuation (status.evacuationNodeName={m}); "))
                .unwrap_or_default();
            let why = format!(
                "{marked}External: virt-api refuses the eviction (429) and waits for an outside controller to move the VMI"
            );
            Found::new(Cause::WaitingForExternal, why, "run the controller that evacuates External VMIs, or migrate it yourself (`virtctl migrate`)")
                .read(strategy_read)
        }
        "LiveMigrate" | "LiveMigrateIfPossible" if r.migratable => match r.mark {
            Some(mark) => marked(r, mark, migrations, objects),
            None => {
                let why = "live-migratable, not yet marked for evacuation: the drain has not asked to evict its Pod yet".to_owned();
                let action = "wait for the drain to reach it, or `virtctl migrate` it now";
                Found::new(Cause::AwaitingEviction, why, action)
                    .read(strategy_read)
                    .read(r.condition_read.clone())
            }
        },
        _ => evicting(r, vmi, vm),
    }
}

/// A migratable VMI marked for evacuation, no migration unfinished: its last ones failed, or
/// its migration is not created yet.
fn marked(r: &Reading, mark: &str, migrations: &[&Value], objects: &Objects) -> Found {
    if let Some(failing) = failing(migrations) {
        return failing.read(r.strategy_read.clone());
    }
    let why = format!(
        "marked for evacuation; no migration yet: KubeVirt creates it when a slot is free ({} run now)",
        migration::running(objects)
    );
    let action = "wait; raise the KubeVirt CR's parallel migration limits to move more VMs at once";
    Found::new(Cause::MigrationQueued, why, action)
        .read(r.strategy_read.clone())
        .read(format!("{} status.evacuationNodeName={mark}", r.vmi_name))
}

/// `None`, or a non-migratable `LiveMigrateIfPossible`: the eviction is let through.
fn evicting(r: &Reading, vmi: &Value, vm: Option<&Value>) -> Found {
    let not = if r.strategy == "LiveMigrateIfPossible" {
        " and not live-migratable"
    } else {
        ""
    };
    let why = format!(
        "{}{not}: virt-api lets the eviction through, the VM is shut down",
        r.strategy
    );
    let run = RunStrategy::of(vm).value.unwrap_or_default();
    Found::new(
        Cause::Evicting,
        why,
        "wait; what follows is the VM's runStrategy (fate)",
    )
    .read(r.strategy_read.clone())
    .read(r.condition_read.clone())
    .read(format!(
        "VirtualMachine {}/{} runStrategy {run}",
        vmi.namespace(),
        vmi.name()
    ))
}
