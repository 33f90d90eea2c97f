//! The names this policy knows: Harvester maintenance-mode strategies and KubeVirt eviction strategies.

/// The label Harvester reads (`harvesterhci.io/maintain-mode-strategy`).
pub const DEFAULT_LABEL_KEY: &str = "harvesterhci.io/maintain-mode-strategy";

/// Harvester's maintenance-mode strategies (`pkg/util/constants.go`), exact and case-sensitive.
pub const MAINTENANCE_STRATEGIES: [&str; 4] = [
    "Migrate",
    "ShutdownAndRestartAfterEnable",
    "ShutdownAndRestartAfterDisable",
    "Shutdown",
];

/// The strategy set on a VM that has none.
pub const DEFAULT_MAINTENANCE_STRATEGY: &str = "Migrate";

/// The strategies under which a drain shuts the VM down instead of evicting (migrating) it.
pub const SHUTDOWN_FAMILY: [&str; 3] = [
    "Shutdown",
    "ShutdownAndRestartAfterEnable",
    "ShutdownAndRestartAfterDisable",
];

/// KubeVirt's eviction strategies.
pub const EVICTION_STRATEGIES: [&str; 4] =
    ["LiveMigrate", "LiveMigrateIfPossible", "None", "External"];

pub const LIVE_MIGRATE: &str = "LiveMigrate";
pub const LIVE_MIGRATE_IF_POSSIBLE: &str = "LiveMigrateIfPossible";

pub fn is_maintenance_strategy(name: &str) -> bool {
    MAINTENANCE_STRATEGIES.contains(&name)
}

pub fn is_eviction_strategy(name: &str) -> bool {
    EVICTION_STRATEGIES.contains(&name)
}

pub fn is_shutdown_family(name: &str) -> bool {
    SHUTDOWN_FAMILY.contains(&name)
}

/// Whether a JSON value is a string listed in `allowed` (settings lists are exact, case-sensitive).
pub fn is_listed(value: &serde_json::Value, allowed: &[String]) -> bool {
    value
        .as_str()
        .is_some_and(|v| allowed.iter().any(|a| a == v))
}
