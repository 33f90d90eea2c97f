//! vm-maintenance-strategy: a Kubewarden policy for KubeVirt VirtualMachines and the KubeVirt CR.
//! This file only wires the modules and the waPC functions: `policy` is the pipeline, `rules/` the
//! rules (docs/rules.md lists each with its ID, message, file and function), `object/` reading and
//! writing the request's object, `admission/` the payload, the verdict and the answer.
//!
//! The library surface is what the waPC wiring, the native tests and the tools use:
//! [`policy::validate`] (and [`policy::validate_with`] a [`cluster::Cluster`] of plain data),
//! [`policy::validate_settings`], [`settings`], [`migratability`], [`eviction::assess`], and the
//! vocabulary the cluster model and the plugin share ([`strategy`], [`reason`], and [`duration`],
//! Go's `time.ParseDuration`).

mod admission;
pub mod cluster;
pub mod configuration;
pub mod duration;
mod listing;
mod object;
pub mod policy;
pub mod reason;
mod rules;
pub mod settings;
pub mod strategy;

pub use rules::{eviction, label_sync, migratability};

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
