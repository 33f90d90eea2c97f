//! docs/rules.md "Answers outside the rules" natively: malformed payloads get a clear answer, and a mutation changes only the paths
//! the rules own (the same properties are checked on the wasm module by the e2e suite).

mod common;

use common::{K, evaluate, fixture, patched, vm_request};
use serde_json::{Map, Value, json};
use vm_maintenance_strategy::policy::validate;

const FIXTURES: [&str; 6] = [
    "web-01-migratable",
    "ml-train-01-gpu",
    "legacy-01-unlabelled",
    "db-01-rwo-livemigrate",
    "vdi-07-invalid",
    "kubevirt-cr",
];

/// Removes what M1/M2 own: `K` from both label maps, and the parent maps left empty or `null`.
fn without_owned_paths(mut vm: Value, key: &str) -> Value {
    for (metadata, prune_metadata) in [("/metadata", false), ("/spec/template/metadata", true)] {
        let Some(Value::Object(meta)) = vm.pointer_mut(metadata) else {
            continue;
        };
        if let Some(Value::Object(labels)) = meta.get_mut("labels") {
            labels.remove(key);
        }
        if meta
            .get("labels")
            .is_some_and(|l| l.is_null() || l == &json!({}))
        {
            meta.remove("labels");
        }
        if prune_metadata && meta.is_empty() {
            let template = vm
                .pointer_mut("/spec/template")
                .and_then(Value::as_object_mut);
            template.map(|t| t.remove("metadata"));
        }
    }
    if let Some(template) = vm
        .pointer_mut("/spec/template")
        .and_then(Value::as_object_mut)
    {
        if template.get("metadata").is_some_and(Value::is_null) {
            template.remove("metadata");
        }
    }
    vm
}

#[test]
fn mutation_changes_only_owned_paths() {
    let mut objects: Vec<(String, Value)> = FIXTURES
        .iter()
        .map(|f| (f.to_string(), fixture(f)))
        .collect();
    objects.push((
        "labels null".into(),
        patched(
            fixture("web-01-migratable"),
            &json!([
        {"op": "replace", "path": "/metadata/labels", "value": null},
        {"op": "replace", "path": "/spec/template/metadata", "value": null}]),
        ),
    ));
    objects.push(("empty template labels".into(), patched(fixture("legacy-01-unlabelled"), &json!([
        {"op": "add", "path": "/spec/template/metadata", "value": {"labels": {}, "annotations": {"a": "b"}}}]))));
    let mut mutated = 0;
    for (name, object) in &objects {
        for settings in [
            json!({}),
            json!({"labelKey": "example.com/drain"}),
            json!({"defaultStrategy": "Shutdown"}),
        ] {
            let key = settings["labelKey"].as_str().unwrap_or(K);
            for old in [None, Some(object.clone())] {
                let answer = evaluate(vm_request("UPDATE", object.clone(), old), settings.clone());
                let Some(result) = answer.get("mutated_object").filter(|m| !m.is_null()) else {
                    continue;
                };
                mutated += 1;
                assert_ne!(
                    result, object,
                    "{name}: mutated_object equals the request object"
                );
                assert_eq!(
                    without_owned_paths(result.clone(), key),
                    without_owned_paths(object.clone(), key),
                    "{name} with {settings}: changed outside the owned paths"
                );
            }
        }
    }
    assert!(mutated >= 10, "only {mutated} mutations were checked");
}

fn answer(payload: &[u8]) -> Value {
    serde_json::from_slice(&validate(payload)).expect("the policy answers JSON")
}

fn assert_rejected(payload: &[u8], code: u16, message_start: &str) {
    let got = answer(payload);
    assert_eq!(got["accepted"], json!(false), "{got}");
    assert_eq!(got["code"], json!(code), "{got}");
    let message = got["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(message_start),
        "{message:?} does not start with {message_start:?}"
    );
}

fn payload(request: Value, settings: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap()
}

#[test]
fn malformed_payloads_get_a_clear_rejection() {
    assert_rejected(b"", 400, "invalid validation payload: EOF while parsing");
    assert_rejected(
        b"\xff\xfe",
        400,
        "invalid validation payload: not UTF-8: invalid utf-8 sequence of 1 bytes from index 0",
    );
    assert_rejected(
        b"[]",
        400,
        "invalid validation payload: invalid type: sequence, expected struct Payload",
    );
    assert_rejected(
        br#"{"request": {"operation": "CREATE", "object": {}, "object": {}}}"#,
        400,
        "invalid validation payload: duplicate field `object`",
    );
    assert_rejected(
        br#"{"request": {"kind": {"group": 1}}}"#,
        400,
        "invalid validation payload: invalid type: integer `1`, expected a string",
    );
    assert_rejected(
        b"{}",
        400,
        "invalid validation payload: missing field `request`",
    );
    assert_rejected(
        br#"{"request": 3}"#,
        400,
        "invalid validation payload: invalid type: integer `3`",
    );
    assert_rejected(
        br#"{"request": {"operation": 5}}"#,
        400,
        "invalid validation payload: invalid type: integer `5`",
    );
    let mut bad_utf8 = payload(
        vm_request("CREATE", fixture("web-01-migratable"), None),
        json!({}),
    );
    let at = bad_utf8.windows(6).position(|w| w == b"web-01").unwrap();
    bad_utf8[at] = 0xff;
    assert_rejected(
        &bad_utf8,
        400,
        "invalid validation payload: not UTF-8: invalid utf-8 sequence of 1 bytes from index",
    );
    let request = vm_request("CREATE", fixture("web-01-migratable"), None);
    assert_rejected(
        &payload(request.clone(), json!({"mutate": 1})),
        500,
        "invalid policy settings: mutate: invalid type: integer `1`, expected a boolean",
    );
    assert_rejected(
        &payload(request, json!({"allowedStrategies": []})),
        500,
        "invalid policy settings: allowedStrategies: must not be empty",
    );
}

#[test]
fn deep_nesting_is_refused_where_read_and_skipped_elsewhere() {
    let deep = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let request = |object: &str| {
        format!(
            r#"{{"request":{{"operation":"CREATE","kind":{{"group":"kubevirt.io","kind":"VirtualMachine"}},"object":{object}}}}}"#
        )
    };
    let vm = fixture("web-01-migratable").to_string();
    // A label value (read by V2) nested too deep: a clear rejection.
    let key = "\"harvesterhci.io/maintain-mode-strategy\":";
    assert!(vm.contains(key), "the fixture carries the label");
    let nested_label = vm.replacen(
        &format!("{key}\"Migrate\""),
        &format!("{key}{}", deep(100_000)),
        1,
    );
    assert_ne!(nested_label, vm);
    assert_rejected(
        request(&nested_label).as_bytes(),
        422,
        "object: recursion limit exceeded",
    );
    // A member no rule reads is skipped unread, at any depth: never a trap, no refusal.
    for depth in [100, 100_000] {
        let nested_vm = vm.replacen("{", &format!("{{\"x\":{},", deep(depth)), 1);
        assert_eq!(
            answer(request(&nested_vm).as_bytes())["accepted"],
            json!(true),
            "{depth}"
        );
    }
    // An object that is a deep array is not an object.
    assert_rejected(
        request(&deep(100_000)).as_bytes(),
        422,
        "object: must be a JSON object, got array",
    );
}

/// docs/rules.md L1: a running VM's template spec nested past serde_json's limit, in a member no
/// other rule reads, is skipped by the request's reading but not parsed by the live-update rules:
/// a warning, the update allowed.
#[test]
fn a_template_spec_nested_too_deep_is_not_checked_for_live_updates() {
    let running = json!([{"op": "add", "path": "/status", "value": {"created": true}}]);
    let old = patched(fixture("web-01-migratable"), &running);
    let socket =
        json!([{"op": "replace", "path": "/spec/template/spec/domain/cpu/sockets", "value": 2}]);
    let new = patched(old.clone(), &socket);
    let settings = json!({"clusterLookups": false});
    let text = String::from_utf8(payload(vm_request("UPDATE", new, Some(old)), settings)).unwrap();
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    assert_eq!(
        text.matches("\"domain\":").count(),
        2,
        "one template spec each"
    );
    let nested = text.replace("\"domain\":", &format!("\"x\":{deep},\"domain\":"));
    let got = answer(nested.as_bytes());
    assert_eq!(got["accepted"], json!(true), "{got}");
    let warnings = got["warnings"].as_array().cloned().unwrap_or_default();
    // `{"x":` and 127 brackets: the spec's own object is the first of serde_json's 128 levels.
    let column = 5 + 127;
    assert_eq!(
        warnings,
        [json!(format!(
            "spec.template.spec: not read (recursion limit exceeded at line 1 column {column}); live updates not checked"
        ))],
        "{got}"
    );
}

#[test]
fn a_large_object_is_evaluated() {
    let mut annotations = Map::new();
    for i in 0..20_000 {
        annotations.insert(format!("example.com/a{i}"), json!("x".repeat(100)));
    }
    let vm = patched(
        fixture("legacy-01-unlabelled"),
        &json!([
        {"op": "add", "path": "/metadata/annotations", "value": annotations}]),
    );
    let request = payload(vm_request("CREATE", vm.clone(), Some(vm)), json!({}));
    assert!(request.len() > 4 << 20, "{} bytes", request.len());
    let got = answer(&request);
    assert_eq!(got["accepted"], json!(true));
    assert_eq!(
        got["mutated_object"]["metadata"]["annotations"]
            .as_object()
            .map(Map::len),
        Some(20_000)
    );
}

#[test]
fn wrong_types_anywhere_are_answered() {
    let web = fixture("web-01-migratable");
    let invalid = format!(
        "metadata.labels[{K}]: invalid maintenance mode strategy: {{\"a\":1}} (valid: Migrate, ShutdownAndRestartAfterEnable, ShutdownAndRestartAfterDisable, Shutdown)"
    );
    // (path, value, expected rejection message: `None` = accepted untouched)
    let cases = [
        // No template object: nothing to copy the label into, nothing to check.
        ("/spec", json!("x"), None),
        ("/spec/template", json!([]), None),
        // The template's labels are still consistent; a non-object spec has no eviction strategy.
        ("/spec/template/spec", json!(1), None),
        // A label value of the wrong type is an invalid strategy, shown as its JSON text.
        (
            "/metadata/labels/harvesterhci.io~1maintain-mode-strategy",
            json!({"a": 1}),
            Some(invalid.as_str()),
        ),
        ("/metadata/name", json!(null), None),
    ];
    for (path, value, rejection) in cases {
        let vm = patched(
            web.clone(),
            &json!([{"op": "replace", "path": path, "value": value}]),
        );
        // `oldObject` of the wrong type: the UPDATE is evaluated as a CREATE (G5).
        for op in ["CREATE", "UPDATE"] {
            let got = evaluate(vm_request(op, vm.clone(), Some(json!([1]))), json!({}));
            let context = format!("{op} {path}: {got}");
            assert_eq!(got["accepted"], json!(rejection.is_none()), "{context}");
            assert_eq!(got["message"].as_str(), rejection, "{context}");
            assert_eq!(got["mutated_object"], Value::Null, "{context}");
            assert_eq!(got["warnings"], Value::Null, "{context}");
        }
    }
}
