//! What runs and what lags behind it: a running VM as KubeVirt judges it, by its VMI and
//! launcher Pods (`vmi.rs`); what those objects carry against what the VM says now
//! (`staleness.rs`); and whether the KubeVirt CR keeps the label in sync (`label_sync.rs`).

pub mod label_sync;
pub mod staleness;
pub mod vmi;

pub use vmi::{Running, Vmi};

/// The label key Harvester's drain filter and maintenance mode read, whatever key the policy's
/// settings keep (`labelKey`): what a drain does is decided by this one.
pub const HARVESTER_READS: &str = cluster_model::drain::DEFAULT_LABEL_KEY;
