//! docs/rules.md "Settings": what `validate_settings` (the waPC function's own code) answers to
//! settings text no YAML case can write (not one JSON value, a member twice, positions in text of
//! its own), and `is_label_key`. The settings rules themselves are cases of
//! e2e-tests/cases/settings.yaml.

use serde_json::Value;
use vm_maintenance_strategy::policy::validate_settings;
use vm_maintenance_strategy::settings::is_label_key;

fn answer(settings: &[u8]) -> (bool, String) {
    let answer: Value = serde_json::from_slice(&validate_settings(settings)).expect("JSON answer");
    let valid = answer["valid"].as_bool().expect("valid is a boolean");
    (
        valid,
        answer["message"].as_str().unwrap_or_default().to_owned(),
    )
}

/// Settings no YAML case can send (the e2e hosts serialise a YAML value): no JSON at all, text
/// after the one JSON value (a fuzz finding, BENCHMARKS.md), bytes that are not UTF-8. Every
/// other refusal is a case of e2e-tests/cases/settings.yaml.
#[test]
fn settings_that_are_not_one_json_value() {
    let table: [(&[u8], &str); 4] = [
        (b"", "EOF while parsing a value at line 1 column 0"),
        (b"{} x", "trailing characters at line 1 column 4"),
        (
            br#"{}{"mutate": 5}"#,
            "trailing characters at line 1 column 3",
        ),
        (
            b"{\"labelKey\": \"\xff\"}",
            "not UTF-8: invalid utf-8 sequence of 1 bytes from index 14",
        ),
    ];
    for (settings, want) in table {
        assert_eq!(
            answer(settings),
            (false, want.to_owned()),
            "{}",
            String::from_utf8_lossy(settings)
        );
    }
}

#[test]
fn label_keys() {
    for key in [
        "harvesterhci.io/maintain-mode-strategy",
        "a",
        "A_b.c-9",
        "x.y/Z",
        &"a".repeat(63),
    ] {
        assert!(is_label_key(key), "{key}");
    }
    let long_prefix = format!("{}/a", "a".repeat(254));
    for key in [
        "",
        "/a",
        "a/",
        "-a",
        "a-",
        "a b",
        "Ex.com/a",
        "a..b/c",
        "a/b/c",
        &"a".repeat(64),
        &long_prefix,
    ] {
        assert!(!is_label_key(key), "{key}");
    }
}

/// The settings' refusals, serde's words with serde_json's positions: a member read twice, a mode
/// that is not a name (serde says only `expected value`), a struct given another JSON type (refused
/// although serde's derive would read a struct from an array, by position), a number out of
/// range, and where the reader failed. Here, not in YAML: the positions are those of this exact
/// text (a YAML case sends compact JSON), and YAML cannot write a member twice.
#[test]
fn reader_messages() {
    let table: [(&str, &str); 10] = [
        (
            r#"{"mutate": true, "mutate": false}"#,
            "duplicate field `mutate` at line 1 column 25",
        ),
        (
            r#"{"evictionStrategy": {"allowed": ["None"], "allowed": ["None"]}}"#,
            "evictionStrategy: duplicate field `allowed` at line 1 column 52",
        ),
        (
            r#"{"templateMismatch": 1}"#,
            "templateMismatch: expected value at line 1 column 22",
        ),
        (
            r#"{"evictionStrategy": {"nonMigratable": null}}"#,
            "evictionStrategy.nonMigratable: expected value at line 1 column 40",
        ),
        (
            r#"{"evictionStrategy": [null, ["None"]]}"#,
            "evictionStrategy: invalid type: sequence, expected struct EvictionSettings at line 1 column 21",
        ),
        (
            r#"{"kubevirt": null}"#,
            "kubevirt: invalid type: null, expected struct KubevirtSettings at line 1 column 17",
        ),
        (
            r#"{"allowedStrategies": ["Migrate", 3]}"#,
            "allowedStrategies[1]: invalid type: integer `3`, expected a string at line 1 column 35",
        ),
        (
            r#"{"kubevirt": {"configuration": {"developerConfiguration": {"minimumClusterTSCFrequency": 9223372036854775808}}}}"#,
            "kubevirt.configuration.developerConfiguration.minimumClusterTSCFrequency: invalid value: integer `9223372036854775808`, expected i64 at line 1 column 108",
        ),
        (
            r#"{"kubevirt": {"configuration": {"network": {"binding": {"passt": null}}}}}"#,
            "kubevirt.configuration.network.binding.passt: invalid type: null, expected struct BindingPlugin at line 1 column 69",
        ),
        (
            r#"{"kubevirt": {"configuration": {"unknownField": [1], "evictionStrategy": "None"}}, "mutate": tru}"#,
            "mutate: expected ident at line 1 column 97",
        ),
    ];
    for (settings, want) in table {
        assert_eq!(
            answer(settings.as_bytes()),
            (false, want.to_owned()),
            "{settings}"
        );
    }
}
