//! The cluster model: what a node drain does with a VM ([`drain`]: Harvester's drain filter and
//! KubeVirt's eviction admission) and what Harvester's maintenance mode does with a node
//! ([`maintenance`]) and what KubeVirt's workload updater does after an upgrade ([`upgrade`]), as pure functions over a cluster's objects. The policy crate judges each VM
//! (`eviction::Assessment`), here over a cluster held in memory ([`objects`]); this crate never
//! admits anything. Every module reads an object's metadata through [`object::ObjectExt`].

pub mod affinity;
pub mod drain;
pub mod maintenance;
pub mod object;
pub mod objects;
pub mod restart;
pub mod status;
pub mod upgrade;

/// A JSON object, as the cluster's objects are read.
pub type Object = serde_json::Map<String, serde_json::Value>;
