//! What a node drain does, in two steps.
//!
//! [`drain_action`] is Harvester's drain filter (`pkg/util/drainhelper/helper.go`,
//! `maintainModeStrategyFilter`) as a pure function over a virt-launcher Pod's labels: the drain
//! skips (leaves to the shutdown logic) only a Pod that has `harvesterhci.io/vmName` and a
//! Shutdown-family strategy; it evicts every other Pod. A missing, `Migrate` or invalid value
//! therefore all mean "evict", i.e. "migrate".
//!
//! [`drain_outcome`] is what the drain then does with the whole VM: the filter on the labels its
//! Pod carries (the VM's template labels), then KubeVirt's eviction admission
//! (`pod-eviction-admitter.go`) for the Pods that are evicted.

use std::fmt::Display;

use serde::{Deserialize, Serialize};

use crate::Object;
use vm_maintenance_strategy::strategy::{
    EvictionStrategy, MIGRATE, MaintenanceStrategy, is_shutdown_family,
};

/// The label Harvester's drain filter reads (whatever key the policy's settings manage).
pub use vm_maintenance_strategy::strategy::DEFAULT_LABEL_KEY;
/// Harvester's label naming the VM a Pod runs.
pub const VM_NAME_LABEL: &str = "harvesterhci.io/vmName";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrainAction {
    /// Not evicted by the drain: the VM is shut down by Harvester's maintenance logic.
    Skip,
    /// Evicted: the VM is live-migrated (or handled by its eviction strategy).
    Evict,
}

/// The Pod filter: `Skip` only when `pod_labels` hold `harvesterhci.io/vmName` and
/// `harvesterhci.io/maintain-mode-strategy` is exactly `Shutdown`,
/// `ShutdownAndRestartAfterEnable` or `ShutdownAndRestartAfterDisable`; `Evict` for every other
/// Pod (no label, `Migrate`, an invalid value, a non-string value, or no `vmName`).
pub fn drain_action(pod_labels: &Object) -> DrainAction {
    let shutdown = pod_labels
        .get(DEFAULT_LABEL_KEY)
        .and_then(|v| v.as_str())
        .is_some_and(is_shutdown_family);
    if shutdown && pod_labels.contains_key(VM_NAME_LABEL) {
        DrainAction::Skip
    } else {
        DrainAction::Evict
    }
}

/// What a node drain does with one running VM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum DrainOutcome {
    /// Evicted and live-migrated to another node.
    Migrate,
    /// Skipped by the drain: Harvester stops it before the drain (Shutdown-family label) and
    /// starts it again as its strategy says.
    ShutDown,
    /// Evicted without migration and started again elsewhere: `runStrategy: Always` (R1).
    Restart,
    /// Evicted without migration, `runStrategy: RerunOnFailure`: it stays off after a clean
    /// guest shutdown, and starts again only after a failure (R2).
    MayStayOff,
    /// Evicted without migration, and nothing starts it again: `Manual`, `Once`, `Halted`, no
    /// VM (R3-R9).
    StaysOff,
    /// Evicted without migration, it would start again, but its disk is bound to the drained
    /// node: it stays down until the node is back (R10).
    DownUntilNodeReturns,
    /// Every eviction is denied (HTTP 429): the drain never completes.
    Blocks,
}

impl DrainOutcome {
    pub const ALL: [DrainOutcome; 7] = [
        DrainOutcome::Migrate,
        DrainOutcome::ShutDown,
        DrainOutcome::Restart,
        DrainOutcome::MayStayOff,
        DrainOutcome::StaysOff,
        DrainOutcome::DownUntilNodeReturns,
        DrainOutcome::Blocks,
    ];

    /// The name, as serde writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            DrainOutcome::Migrate => "Migrate",
            DrainOutcome::ShutDown => "ShutDown",
            DrainOutcome::Restart => "Restart",
            DrainOutcome::MayStayOff => "MayStayOff",
            DrainOutcome::StaysOff => "StaysOff",
            DrainOutcome::DownUntilNodeReturns => "DownUntilNodeReturns",
            DrainOutcome::Blocks => "Blocks",
        }
    }

    /// Evicted without migration and possibly not back after the drain: `MayStayOff`,
    /// `StaysOff`, `DownUntilNodeReturns`.
    pub fn may_stay_down(self) -> bool {
        matches!(
            self,
            DrainOutcome::MayStayOff | DrainOutcome::StaysOff | DrainOutcome::DownUntilNodeReturns
        )
    }
}

impl std::fmt::Display for DrainOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A drain outcome and why, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrainDecision {
    pub outcome: DrainOutcome,
    pub reason: String,
}

/// The drain outcome of one running VM.
///
/// - `template_labels`: the VM's `spec.template.metadata.labels`, i.e. what its VMI and
///   virt-launcher Pod carry (an empty map when absent);
/// - `eviction_strategy`: the effective KubeVirt eviction strategy (the VM's own, else the
///   cluster's, else `None`), as written; an unknown value is treated like `None`, which is what
///   KubeVirt's eviction admission does with it (no case matches, the eviction is allowed);
/// - `non_migratable`: why the VM cannot live-migrate (empty: it can);
/// - `external_controller`: whether a controller that evacuates `External` VMIs is present;
/// - `evicted`: what becomes of the VM once evicted without migration
///   (`after_eviction` of restart.rs: its runStrategy and its disks).
///
/// Order: a Pod the filter skips is `ShutDown` whatever its strategy (Harvester stops the VM
/// before the drain); else `LiveMigrate` → `Migrate`, or `Blocks` when it cannot migrate (every
/// eviction denied with 429); `LiveMigrateIfPossible` → `Migrate`, or `evicted` when it cannot
/// migrate; `None` → `evicted`; `External` → `Blocks` without a controller, else `Migrate` (or
/// `Restart` when it cannot migrate: the controller can only stop it, and what it then does is
/// its own).
pub fn drain_outcome(
    template_labels: &Object,
    eviction_strategy: &EvictionStrategy,
    non_migratable: &[impl Display],
    external_controller: bool,
    evicted: &DrainDecision,
) -> DrainDecision {
    use EvictionStrategy::{External, LiveMigrate, LiveMigrateIfPossible, Other};
    let label = template_labels.get(DEFAULT_LABEL_KEY);
    if drain_action(template_labels) == DrainAction::Skip {
        return shut_down(label.and_then(|v| v.as_str()).unwrap_or_default());
    }
    let cannot = non_migratable
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let (outcome, mut reason) = match eviction_strategy {
        LiveMigrate if non_migratable.is_empty() => (
            DrainOutcome::Migrate,
            "LiveMigrate: the eviction starts a live migration".to_owned(),
        ),
        LiveMigrate => (
            DrainOutcome::Blocks,
            format!(
                "LiveMigrate, cannot live-migrate ({cannot}): every eviction is denied (429), the drain waits forever"
            ),
        ),
        LiveMigrateIfPossible if non_migratable.is_empty() => (
            DrainOutcome::Migrate,
            "LiveMigrateIfPossible: the eviction starts a live migration".to_owned(),
        ),
        LiveMigrateIfPossible => (
            evicted.outcome,
            format!(
                "LiveMigrateIfPossible, cannot live-migrate ({cannot}): evicted without migration; {}",
                evicted.reason
            ),
        ),
        EvictionStrategy::None => (
            evicted.outcome,
            format!("None: evicted without migration; {}", evicted.reason),
        ),
        External if !external_controller => (
            DrainOutcome::Blocks,
            "External, no external controller: the eviction is denied (429) and only marks the VMI for evacuation, the drain waits forever".to_owned(),
        ),
        External if non_migratable.is_empty() => (
            DrainOutcome::Migrate,
            "External: the external controller evacuates the VMI".to_owned(),
        ),
        External => (
            DrainOutcome::Restart,
            format!(
                "External, cannot live-migrate ({cannot}): the external controller can only stop it"
            ),
        ),
        Other(other) => (
            evicted.outcome,
            format!(
                "unknown eviction strategy {other:?}: KubeVirt does not start such a VMI; a running one is evicted like None; {}",
                evicted.reason
            ),
        ),
    };
    reason.push_str(&label_note(label));
    DrainDecision { outcome, reason }
}

/// A VM the drain filter skips: Harvester stops it, and starts it again as its label says.
fn shut_down(value: &str) -> DrainDecision {
    let after = match MaintenanceStrategy::parse(value) {
        Some(MaintenanceStrategy::ShutdownAndRestartAfterEnable) => {
            "starts it again once the node is in maintenance"
        }
        Some(MaintenanceStrategy::ShutdownAndRestartAfterDisable) => {
            "starts it again when maintenance mode is disabled"
        }
        _ => "does not start it again",
    };
    DrainDecision {
        outcome: DrainOutcome::ShutDown,
        reason: format!("label {value}: Harvester stops the VM before the drain and {after}"),
    }
}

/// Why a Shutdown-family or invalid label did not make the drain skip the Pod (empty for
/// `Migrate` or no label).
fn label_note(label: Option<&serde_json::Value>) -> String {
    match label {
        Some(value) if value.as_str().is_some_and(is_shutdown_family) => format!(
            " (label {} without {VM_NAME_LABEL}: the drain filter evicts the Pod)",
            value.as_str().unwrap_or_default()
        ),
        Some(value) if value.as_str() != Some(MIGRATE) => {
            format!(" (label {value} is not a strategy: treated as Migrate)")
        }
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DrainOutcome::*;
    use rstest::rstest;
    use serde_json::json;

    #[test]
    fn matches_harvesters_filter() {
        let cases = [
            (
                json!({VM_NAME_LABEL: "vm", DEFAULT_LABEL_KEY: "Shutdown"}),
                DrainAction::Skip,
            ),
            (
                json!({VM_NAME_LABEL: "vm", DEFAULT_LABEL_KEY: "ShutdownAndRestartAfterEnable"}),
                DrainAction::Skip,
            ),
            (
                json!({VM_NAME_LABEL: "vm", DEFAULT_LABEL_KEY: "ShutdownAndRestartAfterDisable"}),
                DrainAction::Skip,
            ),
            (json!({VM_NAME_LABEL: "vm"}), DrainAction::Evict),
            (
                json!({VM_NAME_LABEL: "vm", DEFAULT_LABEL_KEY: "Migrate"}),
                DrainAction::Evict,
            ),
            (
                json!({VM_NAME_LABEL: "vm", DEFAULT_LABEL_KEY: "invalid"}),
                DrainAction::Evict,
            ),
            (
                json!({VM_NAME_LABEL: "vm", DEFAULT_LABEL_KEY: "shutdown"}),
                DrainAction::Evict,
            ),
            (
                json!({VM_NAME_LABEL: "vm", DEFAULT_LABEL_KEY: 1}),
                DrainAction::Evict,
            ),
            (json!({DEFAULT_LABEL_KEY: "Shutdown"}), DrainAction::Evict),
            (json!({}), DrainAction::Evict),
        ];
        for (labels, want) in cases {
            let labels = labels.as_object().cloned().unwrap_or_default();
            assert_eq!(drain_action(&labels), want, "{labels:?}");
        }
    }

    fn labels(value: Option<serde_json::Value>, vm_name: bool) -> Object {
        let mut map = Object::new();
        if vm_name {
            map.insert(VM_NAME_LABEL.to_owned(), json!("vm-1"));
        }
        if let Some(value) = value {
            map.insert(DEFAULT_LABEL_KEY.to_owned(), value);
        }
        map
    }

    const VM_NAME: bool = true;
    const NO_VM_NAME: bool = false;
    const CONTROLLER: bool = true;
    const NO_CONTROLLER: bool = false;
    const MIGRATABLE: &[&str] = &[];
    const GPU: &[&str] = &["GPU gpu1"];
    const TWO: &[&str] = &["host device nic", "volume data (ReadWriteOnce)"];

    /// One drain outcome: the template's label value and whether it names its VM, the effective
    /// strategy, the reasons it cannot migrate, whether an external controller runs; the
    /// outcome and its words.
    #[rstest]
    #[case::shutdown_label_skips_whatever_the_strategy(
        Some(json!("Shutdown")),
        VM_NAME,
        "LiveMigrate",
        GPU,
        NO_CONTROLLER,
        ShutDown,
        "label Shutdown: Harvester stops the VM before the drain and does not start it again"
    )]
    #[case::after_enable_label_skips(
        Some(json!("ShutdownAndRestartAfterEnable")),
        VM_NAME,
        "External",
        MIGRATABLE,
        NO_CONTROLLER,
        ShutDown,
        "label ShutdownAndRestartAfterEnable: Harvester stops the VM before the drain and starts it again once the node is in maintenance"
    )]
    #[case::after_disable_label_skips(
        Some(json!("ShutdownAndRestartAfterDisable")),
        VM_NAME,
        "None",
        MIGRATABLE,
        NO_CONTROLLER,
        ShutDown,
        "label ShutdownAndRestartAfterDisable: Harvester stops the VM before the drain and starts it again when maintenance mode is disabled"
    )]
    #[case::live_migrate_migrates(
        Some(json!("Migrate")),
        VM_NAME,
        "LiveMigrate",
        MIGRATABLE,
        NO_CONTROLLER,
        Migrate,
        "LiveMigrate: the eviction starts a live migration"
    )]
    #[case::live_migrate_cannot_migrate_blocks(
        Some(json!("Migrate")),
        VM_NAME,
        "LiveMigrate",
        GPU,
        NO_CONTROLLER,
        Blocks,
        "LiveMigrate, cannot live-migrate (GPU gpu1): every eviction is denied (429), the drain waits forever"
    )]
    #[case::live_migrate_two_reasons_block(
        None,
        NO_VM_NAME,
        "LiveMigrate",
        TWO,
        CONTROLLER,
        Blocks,
        "LiveMigrate, cannot live-migrate (host device nic, volume data (ReadWriteOnce)): every eviction is denied (429), the drain waits forever"
    )]
    #[case::if_possible_migrates(
        None,
        VM_NAME,
        "LiveMigrateIfPossible",
        MIGRATABLE,
        NO_CONTROLLER,
        Migrate,
        "LiveMigrateIfPossible: the eviction starts a live migration"
    )]
    #[case::if_possible_cannot_migrate_restarts(
        Some(json!("Migrate")),
        VM_NAME,
        "LiveMigrateIfPossible",
        GPU,
        NO_CONTROLLER,
        Restart,
        "LiveMigrateIfPossible, cannot live-migrate (GPU gpu1): evicted without migration; runStrategy Always (spec.runStrategy): KubeVirt starts it again"
    )]
    #[case::none_restarts(
        Some(json!("Migrate")),
        VM_NAME,
        "None",
        MIGRATABLE,
        NO_CONTROLLER,
        Restart,
        "None: evicted without migration; runStrategy Always (spec.runStrategy): KubeVirt starts it again"
    )]
    #[case::none_restarts_whatever_the_migratability(
        Some(json!("Migrate")),
        VM_NAME,
        "None",
        GPU,
        CONTROLLER,
        Restart,
        "None: evicted without migration; runStrategy Always (spec.runStrategy): KubeVirt starts it again"
    )]
    #[case::external_without_controller_blocks(
        Some(json!("Migrate")),
        VM_NAME,
        "External",
        MIGRATABLE,
        NO_CONTROLLER,
        Blocks,
        "External, no external controller: the eviction is denied (429) and only marks the VMI for evacuation, the drain waits forever"
    )]
    #[case::external_cannot_migrate_without_controller_blocks(
        Some(json!("Migrate")),
        VM_NAME,
        "External",
        GPU,
        NO_CONTROLLER,
        Blocks,
        "External, no external controller: the eviction is denied (429) and only marks the VMI for evacuation, the drain waits forever"
    )]
    #[case::external_with_controller_migrates(
        Some(json!("Migrate")),
        VM_NAME,
        "External",
        MIGRATABLE,
        CONTROLLER,
        Migrate,
        "External: the external controller evacuates the VMI"
    )]
    #[case::external_cannot_migrate_with_controller_restarts(
        Some(json!("Migrate")),
        VM_NAME,
        "External",
        GPU,
        CONTROLLER,
        Restart,
        "External, cannot live-migrate (GPU gpu1): the external controller can only stop it"
    )]
    #[case::unknown_strategy_is_evicted_like_none(
        Some(json!("Migrate")),
        VM_NAME,
        "liveMigrate",
        MIGRATABLE,
        NO_CONTROLLER,
        Restart,
        "unknown eviction strategy \"liveMigrate\": KubeVirt does not start such a VMI; a running one is evicted like None; runStrategy Always (spec.runStrategy): KubeVirt starts it again"
    )]
    #[case::empty_strategy_is_evicted_like_none(
        Some(json!("Migrate")),
        VM_NAME,
        "",
        GPU,
        NO_CONTROLLER,
        Restart,
        "unknown eviction strategy \"\": KubeVirt does not start such a VMI; a running one is evicted like None; runStrategy Always (spec.runStrategy): KubeVirt starts it again"
    )]
    #[case::shutdown_label_without_vm_name_is_evicted(
        Some(json!("Shutdown")),
        NO_VM_NAME,
        "LiveMigrate",
        GPU,
        NO_CONTROLLER,
        Blocks,
        "LiveMigrate, cannot live-migrate (GPU gpu1): every eviction is denied (429), the drain waits forever (label Shutdown without harvesterhci.io/vmName: the drain filter evicts the Pod)"
    )]
    #[case::after_enable_label_without_vm_name_is_evicted(
        Some(json!("ShutdownAndRestartAfterEnable")),
        NO_VM_NAME,
        "None",
        MIGRATABLE,
        NO_CONTROLLER,
        Restart,
        "None: evicted without migration; runStrategy Always (spec.runStrategy): KubeVirt starts it again (label ShutdownAndRestartAfterEnable without harvesterhci.io/vmName: the drain filter evicts the Pod)"
    )]
    #[case::lowercase_label_is_treated_as_migrate(
        Some(json!("shutdown")),
        VM_NAME,
        "LiveMigrateIfPossible",
        MIGRATABLE,
        NO_CONTROLLER,
        Migrate,
        "LiveMigrateIfPossible: the eviction starts a live migration (label \"shutdown\" is not a strategy: treated as Migrate)"
    )]
    #[case::non_string_label_is_treated_as_migrate(
        Some(json!(1)),
        VM_NAME,
        "LiveMigrate",
        MIGRATABLE,
        NO_CONTROLLER,
        Migrate,
        "LiveMigrate: the eviction starts a live migration (label 1 is not a strategy: treated as Migrate)"
    )]
    #[case::no_label_none_restarts(
        None,
        VM_NAME,
        "None",
        MIGRATABLE,
        NO_CONTROLLER,
        Restart,
        "None: evicted without migration; runStrategy Always (spec.runStrategy): KubeVirt starts it again"
    )]
    fn drain_outcomes(
        #[case] label: Option<serde_json::Value>,
        #[case] vm_name: bool,
        #[case] strategy: &str,
        #[case] reasons: &[&str],
        #[case] external: bool,
        #[case] want_outcome: DrainOutcome,
        #[case] reason: &str,
    ) {
        let labels = labels(label, vm_name);
        // What `restart::after_eviction` says of `runStrategy: Always` (R1).
        let always = DrainDecision {
            outcome: Restart,
            reason: "runStrategy Always (spec.runStrategy): KubeVirt starts it again".to_owned(),
        };
        let got = drain_outcome(
            &labels,
            &EvictionStrategy::parse(strategy),
            reasons,
            external,
            &always,
        );
        let want = DrainDecision {
            outcome: want_outcome,
            reason: reason.to_owned(),
        };
        assert_eq!(got, want);
    }

    #[test]
    fn outcome_names_are_the_serde_names() {
        for outcome in DrainOutcome::ALL {
            let written = serde_json::to_value(outcome).unwrap_or_default();
            assert_eq!(written, json!(outcome.as_str()));
            assert_eq!(outcome.to_string(), outcome.as_str());
            let read: Result<DrainOutcome, _> = serde_json::from_value(written);
            assert_eq!(read.ok(), Some(outcome));
        }
        assert_eq!(
            DrainOutcome::ALL.map(DrainOutcome::as_str),
            [
                "Migrate",
                "ShutDown",
                "Restart",
                "MayStayOff",
                "StaysOff",
                "DownUntilNodeReturns",
                "Blocks"
            ]
        );
    }
}
