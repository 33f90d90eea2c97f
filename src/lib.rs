//! vm-maintenance-strategy: a Kubewarden policy for KubeVirt VirtualMachines and the KubeVirt CR.
//! This file only wires the waPC functions; `policy` is the pipeline, and docs/rules.md lists every
//! rule with its ID, message and settings.
//!
//! The library surface is what the waPC wiring, the native tests and the tools use:
//! [`policy::validate`] (and [`policy::validate_with`] a [`cluster::Cluster`] of plain data),
//! [`policy::validate_settings`], [`settings`], [`migratability`], [`eviction::assess`], and the
//! vocabulary the cluster model shares ([`strategy`], [`reason`]).

mod allowed;
pub mod cluster;
pub mod configuration;
pub mod eviction;
mod kubevirt;
mod labels;
mod listing;
pub mod migratability;
pub mod policy;
pub mod reason;
mod request;
mod response;
mod review;
pub mod settings;
mod splice;
pub mod strategy;
mod verdict;
mod view;
mod vm;
mod vmi;

use kubewarden_policy_sdk::wapc_guest as guest;

#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    guest::register_function("validate", |payload| Ok(policy::validate(payload)));
    guest::register_function("validate_settings", |payload| {
        Ok(policy::validate_settings(payload))
    });
    guest::register_function(
        "protocol_version",
        kubewarden_policy_sdk::protocol_version_guest,
    );
}
