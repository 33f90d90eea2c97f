//! Arbitrary bytes as the `validate` payload: the module answers a `ValidationResponse` to anything.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use serde_json::value::RawValue;
use vm_maintenance_strategy_fuzz::check_validation_answer;

fuzz_target!(|data: &[u8]| {
    let answer = vm_maintenance_strategy::policy::validate(data);
    // A number beyond f64 or a lone surrogate escape (`"\udac1"`) in a member no rule reads is
    // answered as the request wrote it (the answer is the request's own text, and JSON's grammar
    // allows both), and this harness's `Value`, like the `Value` policy-server reads a request
    // into, refuses them: such an answer is checked as JSON syntax
    // (fuzz/regressions/validate/number-beyond-f64-*, lone-surrogate-*).
    if serde_json::from_slice::<Value>(data).is_err_and(|e| {
        let why = e.to_string();
        why.starts_with("number out of range") || why.contains("surrogate") || why.contains("hex escape")
    }) {
        if let Err(e) = serde_json::from_slice::<Box<RawValue>>(&answer) {
            panic!("validate answered no JSON ({e}): {}", String::from_utf8_lossy(&answer));
        }
        return;
    }
    check_validation_answer(&answer);
});
