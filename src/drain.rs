//! The drain decision of Harvester's drain filter (`pkg/util/drainhelper/helper.go`), as a pure
//! function over a virt-launcher Pod's labels: the drain skips (leaves to the shutdown logic) only a
//! Pod that has `harvesterhci.io/vmName` and a Shutdown-family strategy; it evicts every other Pod,
//! which for a VM means live migration. A missing, `Migrate` or invalid value therefore all mean
//! "migrate".

use crate::strategy::{DEFAULT_LABEL_KEY, is_shutdown_family};
use crate::vm::Object;

/// Harvester's label naming the VM a Pod runs.
pub const VM_NAME_LABEL: &str = "harvesterhci.io/vmName";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrainAction {
    /// Not evicted by the drain: the VM is shut down by Harvester's maintenance logic.
    Skip,
    /// Evicted: the VM is live-migrated (or handled by its eviction strategy).
    Evict,
}

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
}
