//! docs/rules.md "Answers outside the rules" on the compiled module: hostile payloads get an answer, never a trap, and the same
//! instance keeps serving afterwards.

use policy_host::fixture;
use policy_host::{Instance, PolicyHost, default_module_path};
use serde_json::{Map, Value, json};

fn host() -> PolicyHost {
    PolicyHost::load(&default_module_path()).expect("policy.wasm loads")
}

fn vm_request(object: &Value) -> Value {
    json!({
        "uid": "u", "operation": "CREATE",
        "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
        "object": object,
    })
}

fn validate(instance: &Instance, payload: &[u8]) -> Value {
    let bytes = instance
        .call("validate", payload)
        .expect("validate answers, no trap");
    serde_json::from_slice(&bytes).expect("a JSON ValidationResponse")
}

/// The instance still evaluates an ordinary request correctly.
fn still_serving(instance: &Instance) {
    let payload =
        json!({"request": vm_request(&fixture("legacy-01-unlabelled").unwrap()), "settings": {}});
    let answer = validate(instance, payload.to_string().as_bytes());
    assert_eq!(answer["accepted"], json!(true), "{answer}");
    assert_eq!(
        answer["mutated_object"]["metadata"]["labels"]["harvesterhci.io/maintain-mode-strategy"],
        json!("Migrate")
    );
}

fn rejected_with(answer: &Value, code: u16, start: &str) {
    assert_eq!(answer["accepted"], json!(false), "{answer}");
    assert_eq!(answer["code"], json!(code), "{answer}");
    let message = answer["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with(start),
        "{message:?} does not start with {start:?}"
    );
}

#[test]
fn protocol_version_is_v1() {
    let instance = host().instance().unwrap();
    assert_eq!(
        instance.call("protocol_version", b"").unwrap(),
        br#""v1""#.to_vec()
    );
}

#[test]
fn hostile_payloads_on_one_instance() {
    let instance = host().instance().unwrap();
    let web = fixture("web-01-migratable").unwrap().to_string();
    let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    let label = "\"harvesterhci.io/maintain-mode-strategy\":\"Migrate\"";
    assert!(web.contains(label), "the fixture carries the label");
    let nested = web.replacen(
        label,
        &format!("\"harvesterhci.io/maintain-mode-strategy\":{deep}"),
        1,
    );
    let unread = web.replacen('{', &format!("{{\"x\":{deep},"), 1);
    let mut utf8 = json!({"request": vm_request(&fixture("web-01-migratable").unwrap())})
        .to_string()
        .into_bytes();
    let at = utf8.windows(6).position(|w| w == b"web-01").unwrap();
    utf8[at] = 0xc3;
    let cases: Vec<(Vec<u8>, u16, &str)> = vec![
        (Vec::new(), 400, "invalid validation payload: EOF while parsing"),
        (b"\xff\xfe\x00".to_vec(), 400, "invalid validation payload: not UTF-8: invalid utf-8 sequence of 1 bytes from index 0"),
        (utf8, 400, "invalid validation payload: not UTF-8: invalid utf-8 sequence of 1 bytes from index"),
        (b"null".to_vec(), 400, "invalid validation payload: invalid type: null"),
        (b"[]".to_vec(), 400, "invalid validation payload: invalid type: sequence, expected struct Payload"),
        (b"{}".to_vec(), 400, "invalid validation payload: missing field `request`"),
        (br#"{"request": {"object": {}, "object": {}}}"#.to_vec(), 400, "invalid validation payload: duplicate field `object`"),
        (format!(r#"{{"request":{{"operation":"CREATE","kind":{{"group":"kubevirt.io","kind":"VirtualMachine"}},"object":{nested}}}}}"#).into_bytes(),
            422, "object: recursion limit exceeded"),
        (format!(r#"{{"request":{{"operation":"CREATE","kind":{{"group":"kubevirt.io","kind":"VirtualMachine"}},"object":{deep}}}}}"#).into_bytes(),
            422, "object: must be a JSON object, got array"),
        (json!({"request": vm_request(&fixture("web-01-migratable").unwrap()), "settings": "x"}).to_string().into_bytes(),
            500, "invalid policy settings: invalid type: string \"x\""),
        (json!({"request": vm_request(&json!({"metadata": {"labels": [1]}}))}).to_string().into_bytes(),
            422, "metadata.labels: must be an object, got array"),
    ];
    for (payload, code, start) in &cases {
        rejected_with(&validate(&instance, payload), *code, start);
        still_serving(&instance);
    }
    // A member no rule reads is skipped unread, at any depth.
    let payload = format!(
        r#"{{"request":{{"operation":"CREATE","kind":{{"group":"kubevirt.io","kind":"VirtualMachine"}},"object":{unread}}}}}"#
    );
    assert_eq!(
        validate(&instance, payload.as_bytes())["accepted"],
        json!(true)
    );
    still_serving(&instance);
    for settings in [
        &b"\"x\""[..],
        b"[1]",
        b"",
        b"\xff",
        b"{\"mutate\": null}",
        b"{} x",
    ] {
        let bytes = instance
            .call("validate_settings", settings)
            .expect("validate_settings answers");
        let answer: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            answer["valid"],
            json!(false),
            "{}: {answer}",
            String::from_utf8_lossy(settings)
        );
        assert!(
            answer["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{answer}"
        );
        still_serving(&instance);
    }
}

#[test]
fn a_request_of_several_mib() {
    let mut annotations = Map::new();
    for i in 0..40_000 {
        annotations.insert(format!("example.com/note-{i}"), json!("x".repeat(100)));
    }
    let mut vm = fixture("legacy-01-unlabelled").unwrap();
    vm["metadata"]["annotations"] = Value::Object(annotations);
    let payload = json!({"request": {
        "uid": "u", "operation": "UPDATE",
        "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
        "object": vm, "oldObject": vm,
    }, "settings": {}})
    .to_string();
    assert!(payload.len() > 8 << 20, "{} bytes", payload.len());
    let instance = host().instance().unwrap();
    for _ in 0..3 {
        let answer = validate(&instance, payload.as_bytes());
        assert_eq!(answer["accepted"], json!(true));
        assert_eq!(
            answer["mutated_object"]["metadata"]["annotations"]
                .as_object()
                .map(Map::len),
            Some(40_000)
        );
    }
    still_serving(&instance);
}

/// Rule M (docs/rules.md) on the module: the mutated object is the request's text outside the owned paths, so
/// numbers serde_json cannot hold exactly, escapes, key order and whitespace inside untouched
/// values come back byte for byte (fuzz finding 1, BENCHMARKS.md), and the owned paths are
/// written with their parents created.
#[test]
fn a_mutation_keeps_the_request_text() {
    let instance = host().instance().unwrap();
    let object = r#"{"kind": "VirtualMachine", "apiVersion": "kubevirt.io/v1", "metadata": {"name": "vm", "annotations": {"note": "caf\u00e9"}}, "spec": {"zeta": [974660.1575310733, 6.696044926687545e-304, 123456789012345678901234567890, 1.0, -0.0, 1E2], "template": {"spec": {"domain": {"devices": {}}}}, "alpha": { "kept" : true }}}"#;
    let payload = format!(
        r#"{{"request":{{"uid":"u","operation":"CREATE","kind":{{"group":"kubevirt.io","version":"v1","kind":"VirtualMachine"}},"object":{object}}},"settings":{{}}}}"#
    );
    let bytes = instance.call("validate", payload.as_bytes()).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let expected = r#""mutated_object":{"kind":"VirtualMachine","apiVersion":"kubevirt.io/v1","metadata":{"name":"vm","annotations":{"note": "caf\u00e9"},"labels":{"harvesterhci.io/maintain-mode-strategy":"Migrate"}},"spec":{"zeta":[974660.1575310733, 6.696044926687545e-304, 123456789012345678901234567890, 1.0, -0.0, 1E2],"template":{"spec":{"domain": {"devices": {}}},"metadata":{"labels":{"harvesterhci.io/maintain-mode-strategy":"Migrate"}}},"alpha":{ "kept" : true }}}"#;
    assert!(text.contains(expected), "{text}");
}

/// Duplicate keys on an edited path (hand-made JSON; the API server never sends them): the last
/// is edited (the one a JSON parser keeps), an earlier one is written as it was, but for a member
/// on the path that is not an object, which is left out. Everything else is the request's text.
#[test]
fn duplicate_keys_on_an_edited_path_are_spliced() {
    let instance = host().instance().unwrap();
    let object = r#"{"kind": "VirtualMachine", "metadata": {"labels": 1}, "metadata": {"name": "vm"}, "spec": {"running": false}}"#;
    let payload = format!(
        r#"{{"request":{{"uid":"u","operation":"CREATE","kind":{{"group":"kubevirt.io","version":"v1","kind":"VirtualMachine"}},"object":{object}}},"settings":{{}}}}"#
    );
    let bytes = instance.call("validate", payload.as_bytes()).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    // Spliced: the earlier `metadata` kept without its `labels` (not an object), the spaces of
    // `spec` as they came.
    assert!(
        text.contains(r#""mutated_object":{"kind":"VirtualMachine","metadata":{},"metadata":{"name":"vm","labels":{"harvesterhci.io/maintain-mode-strategy":"Migrate"}},"spec":{"running": false}}"#),
        "{text}"
    );
    let answer: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(answer["accepted"], json!(true), "{answer}");
    assert_eq!(
        answer["mutated_object"],
        json!({"kind": "VirtualMachine",
               "metadata": {"name": "vm", "labels": {"harvesterhci.io/maintain-mode-strategy": "Migrate"}},
               "spec": {"running": false}}),
        "{answer}"
    );
}

/// Every way of writing the same request (members in another order, a key escaped) gets the same
/// answer, byte for byte.
#[test]
fn the_answer_does_not_depend_on_how_the_payload_is_written() {
    let instance = host().instance().unwrap();
    let kubevirt = json!({"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"});
    let mut objects: Vec<(String, Value)> = [
        "legacy-01-unlabelled",
        "web-01-migratable",
        "db-01-rwo-livemigrate",
        "ml-train-01-gpu",
        "vdi-07-invalid",
    ]
    .iter()
    .map(|name| (name.to_string(), fixture(name).unwrap()))
    .collect();
    objects.push((
        "labels not a map".into(),
        json!({"metadata": {"labels": [1]}}),
    ));
    objects.push(("not an object".into(), json!([1])));
    let member = |key: &str, value: &Value| format!("{}:{value}", json!(key));
    let mut moved_strategies = 0;
    for (name, object) in &objects {
        let kind = member("kind", &kubevirt);
        let rest = [
            member("uid", &json!("u")),
            member("operation", &json!("CREATE")),
        ]
        .join(",");
        let object_member = member("object", object);
        let escaped = format!(r#""\u006fbject":{object}"#);
        let mut writings = vec![
            format!("{kind},{rest},{object_member}"),
            format!("{rest},{object_member},{kind}"),
            format!("{kind},{rest},{escaped}"),
        ];
        // V7's lists are read in the one pass or later, as the strategy comes before or after
        // them: the same answer.
        for first in [true, false] {
            if let Some(moved) = strategy_written(object, first) {
                writings.push(format!(r#"{kind},{rest},"object":{moved}"#));
                moved_strategies += 1;
            }
        }
        let answers: Vec<String> = writings
            .iter()
            .map(|request| {
                let payload = format!(r#"{{"request":{{{request}}},"settings":{{}}}}"#);
                let bytes = instance.call("validate", payload.as_bytes()).unwrap();
                String::from_utf8(bytes).unwrap()
            })
            .collect();
        assert!(
            answers[0].contains("\"accepted\""),
            "{name}: {}",
            answers[0]
        );
        assert_eq!(answers[0], answers[1], "{name}: kind first / kind last");
        assert_eq!(
            answers[0], answers[2],
            "{name}: `object` written with an escape"
        );
        for (at, answer) in answers.iter().enumerate().skip(3) {
            assert_eq!(&answers[0], answer, "{name}: evictionStrategy moved ({at})");
        }
    }
    // Four fixtures set a strategy (LiveMigrate, LiveMigrateIfPossible twice, a misspelt one).
    assert_eq!(moved_strategies, 8, "every strategy written first and last");
}

/// `object`'s text with `spec.template.spec.evictionStrategy` written first (or last) in its
/// object, where serde_json writes it between `domain` and `networks` (sorted keys).
fn strategy_written(object: &Value, first: bool) -> Option<String> {
    let spec = object.pointer("/spec/template/spec")?;
    let strategy = spec.get("evictionStrategy")?;
    let mut others = spec.clone();
    others.as_object_mut()?.remove("evictionStrategy");
    let others = others.to_string();
    let inner = &others[1..others.len() - 1];
    let member = format!(r#""evictionStrategy":{strategy}"#);
    let moved = match (inner.is_empty(), first) {
        (true, _) => format!("{{{member}}}"),
        (false, true) => format!("{{{member},{inner}}}"),
        (false, false) => format!("{{{inner},{member}}}"),
    };
    let text = object.to_string();
    let spec = spec.to_string();
    assert!(
        text.contains(&spec),
        "a member's compact text is in its object's"
    );
    Some(text.replacen(&spec, &moved, 1))
}

/// What only V7 reads (a VM's devices, volumes, networks) is read only when V7 applies: a volume
/// name nested beyond serde_json's limit is refused under `LiveMigrate`, and skipped unread under
/// a strategy V7 does not apply to, like any member no rule reads.
#[test]
fn what_only_v7_reads_is_read_when_v7_applies() {
    let instance = host().instance().unwrap();
    let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
    for (name, strategy, refused) in [
        ("db-01-rwo-livemigrate", "LiveMigrate", true),
        ("web-01-migratable", "LiveMigrateIfPossible", false),
    ] {
        let vm = fixture(name).unwrap();
        assert_eq!(
            vm.pointer("/spec/template/spec/evictionStrategy"),
            Some(&json!(strategy)),
            "{name}"
        );
        let volume = vm
            .pointer("/spec/template/spec/volumes/0/name")
            .and_then(Value::as_str)
            .unwrap()
            .to_owned();
        let text = json!({"request": vm_request(&vm)}).to_string();
        let named = format!(r#""name":"{volume}""#);
        assert!(text.contains(&named), "{name}");
        let nested = text.replace(&named, &format!(r#""name":{deep}"#));
        let answer = validate(&instance, nested.as_bytes());
        if refused {
            rejected_with(&answer, 422, "object: recursion limit exceeded");
        } else {
            assert_eq!(answer["accepted"], json!(true), "{name}: {answer}");
        }
        still_serving(&instance);
    }
}
