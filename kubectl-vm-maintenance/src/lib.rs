//! The previews behind `kubectl vm-maintenance`: reading cluster dumps ([`input`]), the drain
//! preview ([`preview`], rows and table in [`report`]) and Harvester's maintenance-mode preview
//! ([`maintenance`]), with the dump as the cluster the policy's assessment reads
//! ([`dump_cluster`]), a running VM judged by its VMI ([`running`]), and the live cluster read as
//! a dump ([`live`]); the KubeVirt upgrade preview ([`upgrade`]); tables as `kubectl get` prints
//! them ([`columns`]).

pub mod columns;
pub mod dump_cluster;
pub mod input;
pub mod live;
pub mod maintenance;
pub mod preview;
pub mod report;
pub mod running;
pub mod upgrade;
