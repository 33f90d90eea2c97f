//! Every case of `e2e-tests/cases/*.yaml`, each a test of its own, on the policy crate itself
//! (no wasm): `policy::validate_settings`, then `policy::validate_with` the policy's own `Host`,
//! its host calls answered and recorded by the case's e2e cluster as the wasm host answers them.
//! The payloads, the AdmissionResponse built from the answer and every check are the wasm suite's
//! (`policy_host::admission::evaluate_through`, `Case::judge`).
//!
//! `cargo test -p e2e-tests --test native -- labels` runs the cases of `labels.yaml`.

use e2e_tests::cases::{self, Case};
use libtest_mimic::{Arguments, Failed, Trial};
use policy_host::HostCalls;
use policy_host::admission::evaluate_through;
use policy_host::host::Error;
use vm_maintenance_strategy::cluster::Host;
use vm_maintenance_strategy::policy;

fn main() {
    let args = Arguments::from_args();
    let all = match cases::load_all(&cases::cases_dir()) {
        Ok(all) => all,
        Err(e) => {
            eprintln!("cannot read the cases: {e}");
            std::process::exit(2);
        }
    };
    let trials = all
        .into_iter()
        .map(|(name, case)| trial(name, case))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

fn trial(name: String, case: Case) -> Trial {
    Trial::test(name, move || {
        run(&case).map_err(|e| Failed::from(e.to_string()))
    })
}

/// The case's request and settings through the policy's functions; its checks.
fn run(case: &Case) -> Result<(), Error> {
    let request = case.request()?;
    let cluster = case.cluster()?;
    let host = Host::through(|operation: &str, payload: &[u8]| {
        cluster.host_call("kubewarden", "kubernetes", operation, payload)
    });
    let evaluation = evaluate_through(
        &request,
        &case.settings,
        |function, payload| match function {
            "validate_settings" => Ok(policy::validate_settings(payload)),
            "validate" => Ok(policy::validate_with(payload, &host)),
            other => Err(format!("the policy has no function {other}").into()),
        },
    )?;
    case.judge(&request, &evaluation, &cluster.calls())
}
