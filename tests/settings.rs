//! docs/rules.md "Settings": settings parsing and `validate_settings`, through the waPC function's own code.

use serde_json::{Value, json};
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

#[test]
fn valid_settings() {
    for settings in [
        json!({}),
        Value::Null,
        json!({"labelKey": "example.com/drain", "allowedStrategies": ["Shutdown", "Migrate"],
               "defaultStrategy": "Shutdown", "mutate": false, "requireLabel": false,
               "templateMismatch": "warn"}),
        json!({"templateMismatch": "ignore"}),
        json!({"labelKey": "drain-strategy"}),
    ] {
        let (valid, message) = answer(settings.to_string().as_bytes());
        assert!(valid, "{settings}: {message}");
        assert_eq!(message, "", "{settings}");
    }
}

/// Exact messages for our own checks; the start of serde's (which add a line and column).
#[test]
fn invalid_settings() {
    let all = "Migrate, ShutdownAndRestartAfterEnable, ShutdownAndRestartAfterDisable, Shutdown";
    let exact: Vec<(Value, String)> = vec![
        (json!({"allowedStrategies": []}), "allowedStrategies: must not be empty".into()),
        (json!({"allowedStrategies": ["Migrate", ""]}), "allowedStrategies[1]: must not be empty".into()),
        (json!({"allowedStrategies": ["Migrate", "Drain"]}),
            format!("allowedStrategies[1]: unknown value \"Drain\" (valid: {all})")),
        (json!({"allowedStrategies": ["migrate"]}),
            format!("allowedStrategies[0]: unknown value \"migrate\" (valid: {all})")),
        (json!({"allowedStrategies": ["Migrate", "Migrate"]}),
            "allowedStrategies[1]: \"Migrate\" is listed twice".into()),
        (json!({"allowedStrategies": ["Shutdown"]}),
            "defaultStrategy: \"Migrate\" is not in allowedStrategies (Shutdown)".into()),
        (json!({"defaultStrategy": "Drain"}),
            format!("defaultStrategy: \"Drain\" is not in allowedStrategies ({all})")),
        (json!({"labelKey": "Bad Key"}),
            "labelKey: \"Bad Key\" is not a valid label key ([prefix/]name, name at most 63 characters)".into()),
        (json!({"labelKey": ""}),
            "labelKey: \"\" is not a valid label key ([prefix/]name, name at most 63 characters)".into()),
    ];
    let prefix: Vec<(&[u8], &str)> = vec![
        (
            br#"{"labelkey": "x"}"#,
            "labelkey: unknown field `labelkey`, expected one of `labelKey`,",
        ),
        (
            br#"{"templateMismatch": "sometimes"}"#,
            "templateMismatch: unknown variant `sometimes`, expected one of `ignore`, `warn`, `reject`",
        ),
        (
            br#"{"mutate": "yes"}"#,
            "mutate: invalid type: string \"yes\", expected a boolean",
        ),
        (
            br#"{"allowedStrategies": "Migrate"}"#,
            "allowedStrategies: invalid type: string \"Migrate\", expected a sequence",
        ),
        (
            br#""x""#,
            "invalid type: string \"x\", expected struct Settings",
        ),
        (br#"[]"#, "settings must be a JSON object, got an array"),
        (
            br#"["Migrate"]"#,
            "settings must be a JSON object, got an array",
        ),
        (b"7", "invalid type: integer `7`, expected struct Settings"),
        (b"", "EOF while parsing a value"),
        // One JSON value: what follows it is refused, not ignored (fuzz finding, BENCHMARKS.md).
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
    for (settings, want) in exact {
        assert_eq!(
            answer(settings.to_string().as_bytes()),
            (false, want),
            "{settings}"
        );
    }
    for (settings, want) in prefix {
        let (valid, message) = answer(settings);
        assert!(!valid, "{}", String::from_utf8_lossy(settings));
        assert!(
            message.starts_with(want),
            "{message:?} does not start with {want:?}"
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

#[test]
fn invalid_eviction_and_kubevirt_settings() {
    let all = "LiveMigrate, LiveMigrateIfPossible, None, External";
    let table: Vec<(Value, String)> = vec![
        (json!({"evictionStrategy": {"allowed": []}}), "evictionStrategy.allowed: must not be empty".into()),
        (json!({"evictionStrategy": {"allowed": ["Migrate"]}}), format!("evictionStrategy.allowed[0]: unknown value \"Migrate\" (valid: {all})")),
        (json!({"evictionStrategy": {"default": "External", "allowed": ["None"]}}),
            "evictionStrategy.default: \"External\" is not in evictionStrategy.allowed (None)".into()),
        (json!({"evictionStrategy": {"clusterDefault": "x"}}), format!("evictionStrategy.clusterDefault: unknown value \"x\" (valid: {all})")),
        (json!({"mutate": false, "evictionStrategy": {"nonMigratable": "fix"}}), "evictionStrategy.nonMigratable: fix needs mutate: true".into()),
        (json!({"evictionStrategy": {"nonMigratable": "fix", "allowed": ["LiveMigrate", "None"]}}),
            "evictionStrategy.nonMigratable: fix sets LiveMigrateIfPossible, which evictionStrategy.allowed (LiveMigrate, None) does not include".into()),
        (json!({"mutate": false, "evictionStrategy": {"default": "None"}}), "evictionStrategy.default: needs mutate: true".into()),
        (json!({"kubevirt": {"allowedEvictionStrategies": ["None", "none"]}}),
            format!("kubevirt.allowedEvictionStrategies[1]: unknown value \"none\" (valid: {all})")),
        (json!({"kubevirt": {"recommendedEvictionStrategy": "None", "allowedEvictionStrategies": ["External"]}}),
            "kubevirt.recommendedEvictionStrategy: \"None\" is not in kubevirt.allowedEvictionStrategies (External)".into()),
    ];
    for (settings, want) in table {
        assert_eq!(
            answer(settings.to_string().as_bytes()),
            (false, want),
            "{settings}"
        );
    }
    let (valid, message) = answer(br#"{"evictionStrategy": {"nonMigratable": "maybe"}}"#);
    assert!(!valid);
    assert!(message.starts_with("evictionStrategy.nonMigratable: unknown variant `maybe`, expected one of `ignore`, `warn`, `reject`, `fix`"), "{message}");
    let (valid, message) = answer(br#"{"kubevirt": {"requireEvictFallbak": true}}"#);
    assert!(!valid);
    assert!(
        message.starts_with("kubevirt.requireEvictFallbak: unknown field `requireEvictFallbak`"),
        "{message}"
    );
    let full = json!({"evictionStrategy": {"default": "LiveMigrateIfPossible", "allowed": ["LiveMigrateIfPossible", "None"],
        "clusterDefault": "LiveMigrate", "nonMigratable": "fix"},
        "kubevirt": {"allowedEvictionStrategies": ["LiveMigrateIfPossible"], "recommendedEvictionStrategy": "LiveMigrateIfPossible",
        "requireEvictFallback": false}});
    assert_eq!(answer(full.to_string().as_bytes()), (true, String::new()));
}

/// The settings' refusals, serde's words with serde_json's positions: a member read twice, a mode
/// that is not a name (serde says only `expected value`), a struct given another JSON type (refused
/// although serde's derive would read a struct from an array, by position), a number out of
/// range, and where the reader failed.
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
