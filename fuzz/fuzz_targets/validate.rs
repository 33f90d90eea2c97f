//! Arbitrary bytes as the `validate` payload: the module answers a `ValidationResponse` to anything.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vm_maintenance_strategy_fuzz::check_validation_answer;

fuzz_target!(|data: &[u8]| {
    check_validation_answer(&vm_maintenance_strategy::policy::validate(data));
});
