//! Every case of `e2e-tests/cases/*.yaml`, each a test of its own, on the compiled module: on a
//! fresh instance, then twice on one reused instance (`reuse.rs`).

use std::sync::Arc;

use e2e_tests::{cases, reuse};
use libtest_mimic::{Arguments, Failed, Trial};
use policy_host::{PolicyHost, default_module_path};

fn main() {
    let args = Arguments::from_args();
    let host = match PolicyHost::load(&default_module_path()) {
        Ok(host) => Arc::new(host),
        Err(e) => {
            eprintln!("cannot load the module: {e}");
            std::process::exit(2);
        }
    };
    let all = match cases::load_all(&cases::cases_dir()) {
        Ok(all) => all,
        Err(e) => {
            eprintln!("cannot read the cases: {e}");
            std::process::exit(2);
        }
    };
    let trials = all
        .into_iter()
        .map(|(name, case)| {
            let host = Arc::clone(&host);
            Trial::test(name, move || {
                reuse::run(&case, &host).map_err(|e| Failed::from(e.to_string()))
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
