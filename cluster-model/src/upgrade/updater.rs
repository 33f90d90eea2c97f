//! The workload updater's settings, read from the KubeVirt CR's `spec.workloadUpdateStrategy`
//! and `spec.configuration` (docs/rules.md, "KubeVirt upgrade", U3-U6).

use serde_json::Value;
use vm_maintenance_strategy::duration;

/// `batchEvictionSize`'s default (`defaultBatchDeletionCount`, workload-updater.go:61).
pub const DEFAULT_BATCH_SIZE: u64 = 10;
/// `batchEvictionInterval`'s default in seconds (workload-updater.go:60).
pub const DEFAULT_INTERVAL_SECONDS: u64 = 60;
/// `parallelMigrationsPerCluster`'s default (`pkg/virt-config/virt-config.go:45`).
pub const DEFAULT_PARALLEL_MIGRATIONS: u64 = 5;

/// The updater's settings, from the KubeVirt CR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Updater {
    pub live_migrate: bool,
    pub evict: bool,
    pub batch_size: u64,
    pub interval_seconds: u64,
    pub parallel_migrations: u64,
    /// `spec.configuration.evictionStrategy`.
    pub cluster_strategy: Option<String>,
}

impl Updater {
    /// The updater of the KubeVirt CR `cr` (`None`: KubeVirt's defaults, no update method). A
    /// `batchEvictionInterval` that is not a Go duration (`time.ParseDuration`) is an error.
    pub fn of(cr: Option<&Value>) -> Result<Updater, String> {
        let strategy = cr.and_then(|cr| cr.pointer("/spec/workloadUpdateStrategy"));
        let methods: Vec<&str> = strategy
            .and_then(|s| s.get("workloadUpdateMethods"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let interval = match strategy.and_then(|s| s.get("batchEvictionInterval")) {
            None | Some(Value::Null) => DEFAULT_INTERVAL_SECONDS,
            // A negative interval is 0: the next batch is always due (`lastDeletionBatch.Add`).
            Some(Value::String(text)) => duration::parse(text)
                .map(|ns| u64::try_from(ns).map_or(0, |ns| ns / 1_000_000_000))
                .map_err(|e| {
                    format!("workloadUpdateStrategy.batchEvictionInterval {text:?}: {e}")
                })?,
            Some(other) => {
                return Err(format!(
                    "workloadUpdateStrategy.batchEvictionInterval: a duration text, got {other}"
                ));
            }
        };
        let number =
            |value: Option<&Value>, default: u64| value.and_then(Value::as_u64).unwrap_or(default);
        Ok(Updater {
            live_migrate: methods.contains(&"LiveMigrate"),
            evict: methods.contains(&"Evict"),
            batch_size: number(
                strategy.and_then(|s| s.get("batchEvictionSize")),
                DEFAULT_BATCH_SIZE,
            ),
            interval_seconds: interval,
            parallel_migrations: number(
                cr.and_then(|cr| {
                    cr.pointer("/spec/configuration/migrations/parallelMigrationsPerCluster")
                }),
                DEFAULT_PARALLEL_MIGRATIONS,
            ),
            cluster_strategy: cr
                .and_then(|cr| cr.pointer("/spec/configuration/evictionStrategy"))
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
    }
}
