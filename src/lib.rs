//! vm-maintenance-strategy: a Kubewarden policy for KubeVirt VirtualMachines. This file only wires
//! the waPC functions; the rules live in the modules below (see `policy` for the pipeline).

pub mod drain;
pub mod eviction;
pub mod kubevirt;
pub mod labels;
pub mod migratability;
pub mod policy;
pub mod request;
pub mod response;
pub mod review;
pub mod settings;
pub mod strategy;
pub mod verdict;
pub mod vm;

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
