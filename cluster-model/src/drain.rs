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

use serde::{Deserialize, Serialize};

use crate::Object;
use vm_maintenance_strategy::strategy::{
    LIVE_MIGRATE, LIVE_MIGRATE_IF_POSSIBLE, MIGRATE, is_shutdown_family,
};

/// The label Harvester's drain filter reads (whatever key the policy's settings manage).
pub use vm_maintenance_strategy::strategy::DEFAULT_LABEL_KEY;
/// Harvester's label naming the VM a Pod runs.
pub const VM_NAME_LABEL: &str = "harvesterhci.io/vmName";

/// KubeVirt's eviction strategy that evicts without migrating.
pub const EVICTION_NONE: &str = "None";
/// KubeVirt's eviction strategy that leaves the evacuation to another controller.
pub const EVICTION_EXTERNAL: &str = "External";

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
    /// Evicted without migration: the VM stops and starts again elsewhere per its `runStrategy`.
    Restart,
    /// Every eviction is denied (HTTP 429): the drain never completes.
    Blocks,
}

impl DrainOutcome {
    pub const ALL: [DrainOutcome; 4] = [
        DrainOutcome::Migrate,
        DrainOutcome::ShutDown,
        DrainOutcome::Restart,
        DrainOutcome::Blocks,
    ];

    /// The name, as serde writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            DrainOutcome::Migrate => "Migrate",
            DrainOutcome::ShutDown => "ShutDown",
            DrainOutcome::Restart => "Restart",
            DrainOutcome::Blocks => "Blocks",
        }
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
/// - `external_controller`: whether a controller that evacuates `External` VMIs is present.
///
/// Order: a Pod the filter skips is `ShutDown` whatever its strategy (Harvester stops the VM
/// before the drain); else `LiveMigrate` → `Migrate`, or `Blocks` when it cannot migrate (every
/// eviction denied with 429); `LiveMigrateIfPossible` → `Migrate`, or `Restart` when it cannot
/// migrate; `None` → `Restart`; `External` → `Blocks` without a controller, else `Migrate` (or
/// `Restart` when it cannot migrate: the controller can only stop it).
pub fn drain_outcome(
    template_labels: &Object,
    eviction_strategy: &str,
    non_migratable: &[String],
    external_controller: bool,
) -> DrainDecision {
    let label = template_labels.get(DEFAULT_LABEL_KEY);
    if drain_action(template_labels) == DrainAction::Skip {
        let value = label.and_then(|v| v.as_str()).unwrap_or_default();
        let after = match value {
            "ShutdownAndRestartAfterEnable" => "starts it again once the node is in maintenance",
            "ShutdownAndRestartAfterDisable" => "starts it again when maintenance mode is disabled",
            _ => "does not start it again",
        };
        return DrainDecision {
            outcome: DrainOutcome::ShutDown,
            reason: format!("label {value}: Harvester stops the VM before the drain and {after}"),
        };
    }
    let cannot = non_migratable.join(", ");
    let (outcome, mut reason) = match eviction_strategy {
        LIVE_MIGRATE if non_migratable.is_empty() => (
            DrainOutcome::Migrate,
            "LiveMigrate: the eviction starts a live migration".to_owned(),
        ),
        LIVE_MIGRATE => (
            DrainOutcome::Blocks,
            format!(
                "LiveMigrate, cannot live-migrate ({cannot}): every eviction is denied (429), the drain waits forever"
            ),
        ),
        LIVE_MIGRATE_IF_POSSIBLE if non_migratable.is_empty() => (
            DrainOutcome::Migrate,
            "LiveMigrateIfPossible: the eviction starts a live migration".to_owned(),
        ),
        LIVE_MIGRATE_IF_POSSIBLE => (
            DrainOutcome::Restart,
            format!(
                "LiveMigrateIfPossible, cannot live-migrate ({cannot}): evicted, restarted per its runStrategy"
            ),
        ),
        EVICTION_NONE => (
            DrainOutcome::Restart,
            "None: evicted without migration, restarted per its runStrategy".to_owned(),
        ),
        EVICTION_EXTERNAL if !external_controller => (
            DrainOutcome::Blocks,
            "External, no external controller: the eviction is denied (429) and only marks the VMI for evacuation, the drain waits forever".to_owned(),
        ),
        EVICTION_EXTERNAL if non_migratable.is_empty() => (
            DrainOutcome::Migrate,
            "External: the external controller evacuates the VMI".to_owned(),
        ),
        EVICTION_EXTERNAL => (
            DrainOutcome::Restart,
            format!(
                "External, cannot live-migrate ({cannot}): the external controller can only stop it"
            ),
        ),
        other => (
            DrainOutcome::Restart,
            format!(
                "unknown eviction strategy {other:?}: KubeVirt does not start such a VMI; a running one is evicted like None"
            ),
        ),
    };
    // Why a Shutdown-family or invalid label does not make the drain skip the Pod.
    match label {
        Some(value) if value.as_str().is_some_and(is_shutdown_family) => reason.push_str(&format!(
            " (label {} without {VM_NAME_LABEL}: the drain filter evicts the Pod)",
            value.as_str().unwrap_or_default()
        )),
        Some(value) if value.as_str() != Some(MIGRATE) => reason.push_str(&format!(
            " (label {value} is not a strategy: treated as Migrate)"
        )),
        _ => {}
    }
    DrainDecision { outcome, reason }
}

#[cfg(test)]
mod tests {
    use super::*;
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

    #[test]
    fn outcome_table() {
        use DrainOutcome::*;
        let gpu = vec!["GPU gpu1".to_owned()];
        let none: Vec<String> = Vec::new();
        let two = vec![
            "host device nic".to_owned(),
            "volume data (ReadWriteOnce)".to_owned(),
        ];
        // (label value, vmName in the template, strategy, reasons, external controller, outcome, reason)
        type Case<'a> = (
            Option<serde_json::Value>,
            bool,
            &'a str,
            &'a Vec<String>,
            bool,
            DrainOutcome,
            &'a str,
        );
        #[rustfmt::skip]
        let cases: Vec<Case> = vec![
            // The filter skips a Shutdown-family Pod whatever the strategy or migratability.
            (Some(json!("Shutdown")), true, "LiveMigrate", &gpu, false, ShutDown,
             "label Shutdown: Harvester stops the VM before the drain and does not start it again"),
            (Some(json!("ShutdownAndRestartAfterEnable")), true, "External", &none, false, ShutDown,
             "label ShutdownAndRestartAfterEnable: Harvester stops the VM before the drain and starts it again once the node is in maintenance"),
            (Some(json!("ShutdownAndRestartAfterDisable")), true, "None", &none, false, ShutDown,
             "label ShutdownAndRestartAfterDisable: Harvester stops the VM before the drain and starts it again when maintenance mode is disabled"),
            // LiveMigrate.
            (Some(json!("Migrate")), true, "LiveMigrate", &none, false, Migrate,
             "LiveMigrate: the eviction starts a live migration"),
            (Some(json!("Migrate")), true, "LiveMigrate", &gpu, false, Blocks,
             "LiveMigrate, cannot live-migrate (GPU gpu1): every eviction is denied (429), the drain waits forever"),
            (None, false, "LiveMigrate", &two, true, Blocks,
             "LiveMigrate, cannot live-migrate (host device nic, volume data (ReadWriteOnce)): every eviction is denied (429), the drain waits forever"),
            // LiveMigrateIfPossible.
            (None, true, "LiveMigrateIfPossible", &none, false, Migrate,
             "LiveMigrateIfPossible: the eviction starts a live migration"),
            (Some(json!("Migrate")), true, "LiveMigrateIfPossible", &gpu, false, Restart,
             "LiveMigrateIfPossible, cannot live-migrate (GPU gpu1): evicted, restarted per its runStrategy"),
            // None: evicted whether or not it could migrate.
            (Some(json!("Migrate")), true, "None", &none, false, Restart,
             "None: evicted without migration, restarted per its runStrategy"),
            (Some(json!("Migrate")), true, "None", &gpu, true, Restart,
             "None: evicted without migration, restarted per its runStrategy"),
            // External: only a controller that is said to exist ends the eviction.
            (Some(json!("Migrate")), true, "External", &none, false, Blocks,
             "External, no external controller: the eviction is denied (429) and only marks the VMI for evacuation, the drain waits forever"),
            (Some(json!("Migrate")), true, "External", &gpu, false, Blocks,
             "External, no external controller: the eviction is denied (429) and only marks the VMI for evacuation, the drain waits forever"),
            (Some(json!("Migrate")), true, "External", &none, true, Migrate,
             "External: the external controller evacuates the VMI"),
            (Some(json!("Migrate")), true, "External", &gpu, true, Restart,
             "External, cannot live-migrate (GPU gpu1): the external controller can only stop it"),
            // Values KubeVirt does not know: evicted like None; the match is exact.
            (Some(json!("Migrate")), true, "liveMigrate", &none, false, Restart,
             "unknown eviction strategy \"liveMigrate\": KubeVirt does not start such a VMI; a running one is evicted like None"),
            (Some(json!("Migrate")), true, "", &gpu, false, Restart,
             "unknown eviction strategy \"\": KubeVirt does not start such a VMI; a running one is evicted like None"),
            // Labels the filter does not skip: the strategy decides, the reason says why.
            (Some(json!("Shutdown")), false, "LiveMigrate", &gpu, false, Blocks,
             "LiveMigrate, cannot live-migrate (GPU gpu1): every eviction is denied (429), the drain waits forever (label Shutdown without harvesterhci.io/vmName: the drain filter evicts the Pod)"),
            (Some(json!("ShutdownAndRestartAfterEnable")), false, "None", &none, false, Restart,
             "None: evicted without migration, restarted per its runStrategy (label ShutdownAndRestartAfterEnable without harvesterhci.io/vmName: the drain filter evicts the Pod)"),
            (Some(json!("shutdown")), true, "LiveMigrateIfPossible", &none, false, Migrate,
             "LiveMigrateIfPossible: the eviction starts a live migration (label \"shutdown\" is not a strategy: treated as Migrate)"),
            (Some(json!(1)), true, "LiveMigrate", &none, false, Migrate,
             "LiveMigrate: the eviction starts a live migration (label 1 is not a strategy: treated as Migrate)"),
            (None, true, "None", &none, false, Restart,
             "None: evicted without migration, restarted per its runStrategy"),
        ];
        for (value, vm_name, strategy, reasons, external, outcome, reason) in cases {
            let labels = labels(value, vm_name);
            let got = drain_outcome(&labels, strategy, reasons, external);
            let want = DrainDecision {
                outcome,
                reason: reason.to_owned(),
            };
            assert_eq!(
                got, want,
                "{labels:?} {strategy} {reasons:?} external={external}"
            );
        }
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
            ["Migrate", "ShutDown", "Restart", "Blocks"]
        );
    }
}
