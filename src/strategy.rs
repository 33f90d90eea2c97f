//! The names this policy knows: Harvester maintenance-mode strategies and KubeVirt eviction strategies.

/// The label Harvester reads (`harvesterhci.io/maintain-mode-strategy`).
pub const DEFAULT_LABEL_KEY: &str = "harvesterhci.io/maintain-mode-strategy";

/// The strategy set on a VM that has none, and the one a drain applies to any other value.
pub const MIGRATE: &str = "Migrate";
/// The strategy M1 sets when `defaultStrategy` is not configured.
pub const DEFAULT_MAINTENANCE_STRATEGY: &str = MIGRATE;

/// Harvester's maintenance-mode strategies (`pkg/util/constants.go`), exact and case-sensitive:
/// `Migrate` and the Shutdown family.
pub const MAINTENANCE_STRATEGIES: [&str; 4] = [
    MIGRATE,
    "ShutdownAndRestartAfterEnable",
    "ShutdownAndRestartAfterDisable",
    "Shutdown",
];

/// KubeVirt's eviction strategies.
pub const EVICTION_STRATEGIES: [&str; 4] =
    [LIVE_MIGRATE, LIVE_MIGRATE_IF_POSSIBLE, "None", "External"];

pub const LIVE_MIGRATE: &str = "LiveMigrate";
pub const LIVE_MIGRATE_IF_POSSIBLE: &str = "LiveMigrateIfPossible";

pub fn is_maintenance_strategy(name: &str) -> bool {
    MAINTENANCE_STRATEGIES.contains(&name)
}

pub fn is_eviction_strategy(name: &str) -> bool {
    EVICTION_STRATEGIES.contains(&name)
}

/// The strategies under which a drain shuts the VM down instead of evicting (migrating) it: every
/// maintenance strategy but `Migrate`.
pub fn is_shutdown_family(name: &str) -> bool {
    name != MIGRATE && is_maintenance_strategy(name)
}
