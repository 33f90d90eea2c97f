//! What KubeVirt's workload updater does with every running VMI after an upgrade, and whether the
//! update ever completes (docs/rules.md, "KubeVirt upgrade"). Every running VMI is outdated after
//! an upgrade (its launcher image is the old one).
//!
//! KubeVirt v1.9.0 `pkg/virt-controller/watch/workload-updater/workload-updater.go`:
//! `getUpdateData` (366-428) puts a VMI in the migration list when `workloadUpdateMethods` holds
//! `LiveMigrate` and the VMI is migratable, else in the eviction list when it holds `Evict`, else
//! in neither; `sync` (460-560) starts at most `parallelMigrationsPerCluster` migrations at a time
//! and evicts `batchEvictionSize` VMIs (default 10) every `batchEvictionInterval` (default 1m).
//! The eviction goes through the same webhook as a drain (`pod-eviction-admitter.go` 138-160):
//! `LiveMigrate` and not migratable is refused, at every batch; `LiveMigrate(IfPossible)` and
//! migratable is marked for evacuation and migrated; `External` is marked for evacuation and left
//! to its controller; anything else is evicted: the guest is shut down, and the VM's
//! `runStrategy` decides whether it starts again (`crate::restart`, R1-R9; the update does not
//! drain a node, so a disk bound to the node does not keep it down).

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;
use vm_maintenance_strategy::strategy::EvictionStrategy;

use crate::drain::DrainOutcome;
use crate::object::ObjectExt;
use crate::restart::{RunStrategy, by_run_strategy};

mod updater;
pub use updater::{
    DEFAULT_BATCH_SIZE, DEFAULT_INTERVAL_SECONDS, DEFAULT_PARALLEL_MIGRATIONS, Updater,
};

/// What the updater does with one running VMI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum UpdateOutcome {
    /// Live-migrated to a new launcher.
    Migrate,
    /// Evicted: the VM starts again on a new launcher (`runStrategy: Always`, R1).
    Restart,
    /// Evicted, `runStrategy: RerunOnFailure`: off after a clean guest shutdown, started again
    /// only after a failure (R2).
    MayStayOff,
    /// Evicted, and nothing starts it again (`Manual`, `Once`, `Halted`, no VM: R3-R9).
    StaysOff,
    /// Its eviction is refused (429) at every batch, forever: it stays outdated.
    Blocks,
    /// Marked for evacuation; only an external controller moves it.
    Evacuate,
    /// No update method applies: it stays on the old launcher for good.
    StaysOutdated,
}

/// One VMI's fate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VmiUpdate {
    pub namespace: String,
    pub name: String,
    pub node: Option<String>,
    pub outcome: UpdateOutcome,
    /// The VMI's own strategy, else the cluster's (`None`: none).
    pub eviction_strategy: Option<EvictionStrategy>,
    /// Why, in words.
    pub reasons: Vec<String>,
    /// For a VMI evicted without migration: the VM's runStrategy and the field it was read
    /// from, which decide whether it starts again (R1-R9).
    pub run_strategy: Option<RunStrategy>,
    /// For `Restart` and `MayStayOff`: the strategy of the VMI started again (the VM's, else the
    /// cluster's).
    pub after_restart: Option<EvictionStrategy>,
    /// The live updates it waits for (U10: `HotVCPUChange`, `HotMemoryChange`,
    /// `MigrationRequired`, `VolumesChange`), applied by the same migration or eviction as the
    /// new launcher. Left out of the JSON when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pending_live_updates: Vec<String>,
    /// Whether it goes through the eviction batches.
    #[serde(skip)]
    pub evicted: bool,
}

/// U10: the live updates a VMI waits for, as the workload updater reads its conditions
/// (`isHotplugInProgress`, `isVolumesUpdateInProgress`, WU:319-331, the same in v1.6.0 to
/// v1.9.0): `HotVCPUChange` of any status, the other three of status `True`.
fn pending_live_updates(vmi: &Value) -> Vec<String> {
    let conditions = vmi.pointer("/status/conditions").and_then(Value::as_array);
    let text = |c: &Value, key: &str| c.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut pending: Vec<String> = conditions
        .into_iter()
        .flatten()
        .filter(|c| match text(c, "type").as_deref() {
            Some("HotVCPUChange") => true,
            Some("HotMemoryChange" | "MigrationRequired" | "VolumesChange") => {
                text(c, "status").as_deref() == Some("True")
            }
            _ => false,
        })
        .filter_map(|c| text(c, "type"))
        .collect();
    pending.sort_unstable();
    pending.dedup();
    pending
}

/// U10: a VMI with `status.migratedVolumes` is migrated whatever `LiveMigratable` says
/// (WU:416-422; KubeVirt also validates the volumes, which the preview does not).
fn volume_migration(vmi: &Value) -> bool {
    let volumes = vmi
        .pointer("/status/migratedVolumes")
        .and_then(Value::as_array);
    volumes.is_some_and(|v| !v.is_empty())
}

/// Whether the VMI counts as migratable: a `LiveMigratable` condition of status `True`
/// (`types.go` `IsMigratable`); else why not.
fn migratable(vmi: &Value) -> Result<(), String> {
    let conditions = vmi.pointer("/status/conditions").and_then(Value::as_array);
    let condition = conditions
        .into_iter()
        .flatten()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("LiveMigratable"));
    let Some(condition) = condition else {
        return Err("no LiveMigratable condition: not migratable".to_owned());
    };
    let field = |name: &str| {
        condition
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    match field("status") {
        "True" => Ok(()),
        status => Err(format!("LiveMigratable={status} ({})", field("reason"))),
    }
}

/// A VMI's update before the updater decides (U1, U6, U10): who it is, its strategy, what it
/// waits for.
fn undecided(vmi: &Value, updater: &Updater) -> VmiUpdate {
    let text = |pointer: &str| vmi.text_at(pointer).map(str::to_owned);
    let pending = pending_live_updates(vmi);
    let reasons = match pending.is_empty() {
        true => Vec::new(),
        false => vec![format!(
            "pending live update ({}): applied by the same migration or eviction",
            pending.join(", ")
        )],
    };
    VmiUpdate {
        namespace: vmi.namespace_field().to_owned(),
        name: vmi.name().to_owned(),
        node: text("/status/nodeName").or_else(|| text("/metadata/labels/kubevirt.io~1nodeName")),
        outcome: UpdateOutcome::StaysOutdated,
        eviction_strategy: text("/spec/evictionStrategy")
            .or_else(|| updater.cluster_strategy.clone())
            .map(|s| EvictionStrategy::parse(&s)),
        reasons,
        run_strategy: None,
        after_restart: None,
        pending_live_updates: pending,
        evicted: false,
    }
}

/// The updater's decision on one running VMI whose VM (if any) is `vm`.
pub fn decide(vmi: &Value, vm: Option<&Value>, updater: &Updater) -> VmiUpdate {
    let mut update = undecided(vmi, updater);
    let strategy = update.eviction_strategy.clone();
    let migratable = migratable(vmi);
    let volumes = volume_migration(vmi);
    if updater.live_migrate && (migratable.is_ok() || volumes) {
        update.outcome = UpdateOutcome::Migrate;
        let why = match migratable {
            Ok(()) => "the VMI is migratable",
            Err(_) => "a volume migration is pending (whatever LiveMigratable says)",
        };
        update.reasons.push(format!(
            "workloadUpdateMethods has LiveMigrate and {why}: live-migrated, at most {} at a time",
            updater.parallel_migrations
        ));
        return update;
    }
    if !updater.evict {
        update.reasons.push(match (&migratable, updater.live_migrate) {
            (Err(why), true) => format!("{why}, and workloadUpdateMethods lacks Evict: it stays on the old launcher"),
            _ => "workloadUpdateMethods holds neither LiveMigrate nor Evict: no automated update, it stays on the old launcher".to_owned(),
        });
        return update;
    }
    update.evicted = true;
    let shown = strategy
        .as_ref()
        .map_or("no eviction strategy", EvictionStrategy::as_str);
    let (outcome, why) = match (&strategy, &migratable) {
        (Some(EvictionStrategy::LiveMigrate), Err(why)) => (
            UpdateOutcome::Blocks,
            format!("evicted in a batch: LiveMigrate, {why}: the eviction is refused (429) at every batch, forever"),
        ),
        (Some(EvictionStrategy::LiveMigrate | EvictionStrategy::LiveMigrateIfPossible), Ok(())) => (
            UpdateOutcome::Migrate,
            format!("evicted in a batch: {shown} and migratable: marked for evacuation and migrated"),
        ),
        (Some(EvictionStrategy::External), _) => (
            UpdateOutcome::Evacuate,
            "evicted in a batch: External: marked for evacuation (429), an external controller must move it".to_owned(),
        ),
        (_, migratable) => {
            let run_strategy = RunStrategy::of(vm);
            let (outcome, after) = by_run_strategy(&run_strategy);
            update.run_strategy = Some(run_strategy);
            let how = match migratable {
                Err(why) if strategy == Some(EvictionStrategy::LiveMigrateIfPossible) => {
                    format!("LiveMigrateIfPossible, {why}")
                }
                _ => shown.to_owned(),
            };
            let why = format!("evicted in a batch: {how}: stopped; {after}");
            (evicted(outcome), why)
        }
    };
    update.outcome = outcome;
    update.reasons.push(why);
    if matches!(outcome, UpdateOutcome::Restart | UpdateOutcome::MayStayOff) {
        update.after_restart = after_restart(vm, updater);
    }
    update
}

/// A VMI started again from its VM gets the VM's strategy, else the cluster's
/// (`pkg/defaults/defaults.go` setDefaultEvictionStrategy).
fn after_restart(vm: Option<&Value>, updater: &Updater) -> Option<EvictionStrategy> {
    vm.and_then(|vm| vm.pointer("/spec/template/spec/evictionStrategy"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| updater.cluster_strategy.clone())
        .map(|s| EvictionStrategy::parse(&s))
}

/// What follows a VMI's eviction without migration, by its VM's runStrategy (R9).
fn evicted(outcome: DrainOutcome) -> UpdateOutcome {
    match outcome {
        DrainOutcome::Restart => UpdateOutcome::Restart,
        DrainOutcome::MayStayOff => UpdateOutcome::MayStayOff,
        _ => UpdateOutcome::StaysOff,
    }
}

/// Whether the update completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Completion {
    Completes,
    NeverCompletes,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Migrations {
    pub count: usize,
    pub parallel: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evictions {
    pub count: usize,
    pub batch_size: u64,
    pub interval_seconds: u64,
    pub batches: u64,
    /// The first batch goes at once, each next one an interval later.
    pub minimum_seconds: u64,
}

/// The whole update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UpgradePreview {
    pub outcome: Completion,
    pub vmis: Vec<VmiUpdate>,
    pub migrations: Migrations,
    pub evictions: Evictions,
}

/// An object's namespace and name (empty when missing).
fn key(object: &Value) -> (&str, &str) {
    (object.namespace_field(), object.name())
}

/// Every running VMI of `vmis` (phase `Running`, not being deleted), with its VM from `vms`.
pub fn preview(
    vmis: &[Value],
    vms: &[Value],
    updater: &Updater,
    external_controller: bool,
) -> UpgradePreview {
    summarize(decide_all(vmis, vms, updater), updater, external_controller)
}

/// What the updater does with each running VMI of `vmis` (phase `Running`, not being deleted),
/// with its VM from `vms`, in their order.
pub fn decide_all(vmis: &[Value], vms: &[Value], updater: &Updater) -> Vec<VmiUpdate> {
    // Each VMI's VM by namespace and name: one index, not a scan of every VM per VMI.
    let mut by_name: HashMap<(&str, &str), &Value> = HashMap::with_capacity(vms.len());
    for vm in vms {
        // The first of duplicates, as a scan finds it.
        by_name.entry(key(vm)).or_insert(vm);
    }
    vmis.iter()
        .filter(|vmi| {
            vmi.text_at("/status/phase") == Some("Running")
                && vmi
                    .pointer("/metadata/deletionTimestamp")
                    .is_none_or(Value::is_null)
        })
        .map(|vmi| decide(vmi, by_name.get(&key(vmi)).copied(), updater))
        .collect()
}

/// The update of every running VMI (`updates`, any order): sorted, counted, and whether it
/// completes.
pub fn summarize(
    mut updates: Vec<VmiUpdate>,
    updater: &Updater,
    external_controller: bool,
) -> UpgradePreview {
    updates.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    let never = updates.iter().any(|u| match u.outcome {
        UpdateOutcome::Blocks | UpdateOutcome::StaysOutdated => true,
        UpdateOutcome::Evacuate => !external_controller,
        UpdateOutcome::Migrate
        | UpdateOutcome::Restart
        | UpdateOutcome::MayStayOff
        | UpdateOutcome::StaysOff => false,
    });
    let migrations = updates
        .iter()
        .filter(|u| u.outcome == UpdateOutcome::Migrate && !u.evicted)
        .count();
    let evicted = updates.iter().filter(|u| u.evicted).count() as u64;
    let batches = evicted.div_ceil(updater.batch_size.max(1));
    UpgradePreview {
        outcome: if never {
            Completion::NeverCompletes
        } else {
            Completion::Completes
        },
        migrations: Migrations {
            count: migrations,
            parallel: updater.parallel_migrations,
        },
        evictions: Evictions {
            count: evicted as usize,
            batch_size: updater.batch_size,
            interval_seconds: updater.interval_seconds,
            batches,
            minimum_seconds: batches.saturating_sub(1) * updater.interval_seconds,
        },
        vmis: updates,
    }
}
