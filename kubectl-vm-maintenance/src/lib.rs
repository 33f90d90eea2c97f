//! The previews behind `kubectl vm-maintenance`: reading cluster dumps ([`input`], and the kinds
//! beyond the VMs in [`extra`]), held as text until a preview parses some VMs' objects
//! ([`store`]), the drain preview ([`preview`], rows and table in [`report`])
//! and Harvester's maintenance-mode preview ([`maintenance`]), with the dump as the cluster the
//! policy's assessment reads ([`dump_cluster`]), a running VM judged by its VMI ([`running`]),
//! and the live cluster read as a dump ([`live`]); the KubeVirt upgrade preview ([`upgrade`]);
//! tables as `kubectl get` prints them ([`columns`]); what a running VM's objects carry against
//! it ([`staleness`]) and whether the KubeVirt CR syncs the label ([`label_sync`]); the settings
//! file, checked as policy-server checks it ([`settings`]). And `sync`: its plan ([`sync`]) and
//! its writes to the live cluster ([`apply`]).

pub mod apply;
pub mod columns;
pub mod dump_cluster;
pub mod extra;
pub mod input;
pub mod label_sync;
pub mod live;
pub mod maintenance;
pub mod preview;
pub mod report;
pub mod running;
pub mod settings;
pub mod staleness;
pub mod store;
pub mod sync;
pub mod upgrade;
