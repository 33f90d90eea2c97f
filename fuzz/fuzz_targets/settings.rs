//! Arbitrary bytes as settings: `validate_settings` answers `{valid, message}`, and settings it
//! accepts are accepted by `validate` too (no 500 "invalid policy settings").
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use vm_maintenance_strategy_fuzz::check_validation_answer;

const VM: &str = r#"{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine","metadata":{"name":"vm","labels":{"harvesterhci.io/maintain-mode-strategy":"Migrate"}},"spec":{"template":{"metadata":{"labels":{"harvesterhci.io/maintain-mode-strategy":"Migrate"}},"spec":{"evictionStrategy":"LiveMigrate","domain":{"devices":{"gpus":[{"name":"g","deviceName":"nvidia"}]}}}}}}"#;

fuzz_target!(|data: &[u8]| {
    let answer = vm_maintenance_strategy::policy::validate_settings(data);
    let answer: Value = serde_json::from_slice(&answer).expect("validate_settings answers JSON");
    let valid = answer["valid"].as_bool().expect("a boolean `valid`");
    if !valid {
        assert!(
            answer["message"].is_string(),
            "refused without a message: {answer}"
        );
        return;
    }
    // Accepted settings are one JSON value (fuzz/regressions/settings/trailing-bytes-*: `{} x`
    // used to be valid). Checked for its syntax, not as a `Value`: a member no field reads may hold
    // a number beyond f64, which JSON allows and a `Value` cannot hold (regressions/settings/
    // number-beyond-f64-*; serde's derive accepts it too).
    serde_json::from_slice::<Box<serde_json::value::RawValue>>(data)
        .expect("accepted settings are one JSON value");
    let settings = std::str::from_utf8(data).expect("accepted settings are UTF-8");
    let payload = format!(
        r#"{{"request":{{"uid":"u","kind":{{"group":"kubevirt.io","version":"v1","kind":"VirtualMachine"}},"operation":"CREATE","object":{VM}}},"settings":{settings}}}"#
    );
    let answer = check_validation_answer(&vm_maintenance_strategy::policy::validate(
        payload.as_bytes(),
    ));
    assert_ne!(
        answer["code"], 500,
        "settings accepted by validate_settings but not by validate: {answer}"
    );
});
