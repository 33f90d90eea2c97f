//! A VM-shaped request (always well-formed JSON) so the fuzzer reaches the rules: the answer is a
//! `ValidationResponse`, valid settings never give a 500, and a mutation changes only owned paths.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vm_maintenance_strategy_fuzz::{
    Request, check_validation_answer, differs_only_at, owned_paths,
};

fuzz_target!(|request: Request| {
    let (payload, object, preset) = request.payload();
    let answer = check_validation_answer(&vm_maintenance_strategy::policy::validate(&payload));
    if preset {
        assert_ne!(answer["code"], 500, "valid settings refused: {answer}");
    }
    if let Some(mutated) = answer.get("mutated_object").filter(|m| !m.is_null()) {
        // Compared with the harness's own parse of the text the policy received.
        let sent: serde_json::Value = serde_json::from_str(&object.to_string()).expect("JSON");
        if let Err(why) = differs_only_at(&sent, mutated, &owned_paths(request.label_key())) {
            panic!("mutation outside the owned paths: {why}\n{answer}");
        }
    }
});
