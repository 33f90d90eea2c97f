//! The names this policy knows: Harvester maintenance-mode strategies and KubeVirt eviction
//! strategies, as types ([`MaintenanceStrategy`], [`EvictionStrategy`]) and as the exact strings
//! the API carries.

use std::fmt;

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

/// A Harvester maintenance-mode strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MaintenanceStrategy {
    Migrate,
    ShutdownAndRestartAfterEnable,
    ShutdownAndRestartAfterDisable,
    Shutdown,
}

impl MaintenanceStrategy {
    /// In [`MAINTENANCE_STRATEGIES`]' order.
    pub const ALL: [MaintenanceStrategy; 4] = [
        MaintenanceStrategy::Migrate,
        MaintenanceStrategy::ShutdownAndRestartAfterEnable,
        MaintenanceStrategy::ShutdownAndRestartAfterDisable,
        MaintenanceStrategy::Shutdown,
    ];

    /// The strategy `name` spells exactly (Harvester compares case-sensitively), else `None`.
    pub fn parse(name: &str) -> Option<MaintenanceStrategy> {
        let at = MAINTENANCE_STRATEGIES.iter().position(|s| *s == name)?;
        Some(MaintenanceStrategy::ALL[at])
    }

    pub fn as_str(self) -> &'static str {
        MAINTENANCE_STRATEGIES[self as usize]
    }

    /// Whether a drain shuts the VM down instead of evicting (migrating) it: every strategy but
    /// `Migrate`.
    pub fn is_shutdown_family(self) -> bool {
        self != MaintenanceStrategy::Migrate
    }
}

impl fmt::Display for MaintenanceStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A KubeVirt eviction strategy as written: one of KubeVirt's four, or `Other` with the value
/// KubeVirt does not know (its eviction admission matches none of its cases).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EvictionStrategy {
    LiveMigrate,
    LiveMigrateIfPossible,
    None,
    External,
    Other(String),
}

impl EvictionStrategy {
    /// The strategy `name` spells exactly; `Other` for anything else.
    pub fn parse(name: &str) -> EvictionStrategy {
        match name {
            LIVE_MIGRATE => EvictionStrategy::LiveMigrate,
            LIVE_MIGRATE_IF_POSSIBLE => EvictionStrategy::LiveMigrateIfPossible,
            "None" => EvictionStrategy::None,
            "External" => EvictionStrategy::External,
            other => EvictionStrategy::Other(other.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            EvictionStrategy::LiveMigrate => LIVE_MIGRATE,
            EvictionStrategy::LiveMigrateIfPossible => LIVE_MIGRATE_IF_POSSIBLE,
            EvictionStrategy::None => "None",
            EvictionStrategy::External => "External",
            EvictionStrategy::Other(other) => other,
        }
    }

    /// Whether KubeVirt knows the value.
    pub fn is_known(&self) -> bool {
        !matches!(self, EvictionStrategy::Other(_))
    }
}

impl fmt::Display for EvictionStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for EvictionStrategy {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

pub fn is_maintenance_strategy(name: &str) -> bool {
    MAINTENANCE_STRATEGIES.contains(&name)
}

pub fn is_eviction_strategy(name: &str) -> bool {
    EVICTION_STRATEGIES.contains(&name)
}

/// Whether `name` is a strategy under which a drain shuts the VM down instead of evicting it.
pub fn is_shutdown_family(name: &str) -> bool {
    MaintenanceStrategy::parse(name).is_some_and(MaintenanceStrategy::is_shutdown_family)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (strategy, name) in MaintenanceStrategy::ALL.iter().zip(MAINTENANCE_STRATEGIES) {
            assert_eq!(strategy.as_str(), name);
            assert_eq!(MaintenanceStrategy::parse(name), Some(*strategy));
        }
        for name in EVICTION_STRATEGIES {
            let strategy = EvictionStrategy::parse(name);
            assert!(strategy.is_known(), "{name}");
            assert_eq!(strategy.to_string(), name);
        }
    }

    #[test]
    fn unknown_names() {
        for name in ["", "migrate", "shutdown", "None ", "LiveMigrateIfpossible"] {
            assert_eq!(MaintenanceStrategy::parse(name), None, "{name:?}");
            assert!(!is_shutdown_family(name), "{name:?}");
            let eviction = EvictionStrategy::parse(name);
            assert_eq!(eviction, EvictionStrategy::Other(name.to_owned()));
            assert_eq!(eviction.as_str(), name);
        }
        assert!(!is_shutdown_family(MIGRATE));
        assert!(is_shutdown_family("Shutdown"));
    }
}
