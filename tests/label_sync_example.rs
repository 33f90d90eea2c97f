//! examples/kubevirt/label-sync.yaml, the merge patch docs/rules.md K4 shows, makes the KubeVirt
//! fixture sync the label: K4 under `labelSync: reject` refuses the CR without it and admits it
//! with it.

mod common;

use common::{evaluate, fixture};
use serde_json::{Value, json};

fn kubevirt_request(object: Value) -> Value {
    json!({
        "uid": "k4",
        "kind": {"group": "kubevirt.io", "version": "v1", "kind": "KubeVirt"},
        "operation": "UPDATE",
        "object": object,
    })
}

#[test]
fn the_example_makes_the_cr_sync_the_label() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/kubevirt/label-sync.yaml"
    );
    let text = std::fs::read_to_string(path).expect("the example");
    let example: Value = serde_yaml::from_str(&text).expect("YAML");
    let mut cr = fixture("kubevirt-cr");
    cr["spec"]
        .as_object_mut()
        .expect("a spec")
        .remove("customizeComponents");
    let settings = json!({"kubevirt": {"labelSync": "reject"}});
    let without = evaluate(kubevirt_request(cr.clone()), settings.clone());
    assert_eq!(without["accepted"], json!(false), "{without}");
    json_patch::merge(&mut cr, &example);
    let with = evaluate(kubevirt_request(cr), settings);
    assert_eq!(with["accepted"], json!(true), "{with}");
    assert_eq!(with["warnings"], Value::Null, "{with}");
}

/// `label_sync::syncs_label`, K4 for the tools: the fixture syncs the label, without its
/// `customizeComponents` it does not (K4's message), and `kubevirt.version` decides a pattern.
#[test]
fn syncs_label_is_k4s_judgement() {
    use vm_maintenance_strategy::label_sync::syncs_label;
    let key = common::K;
    let mut cr = fixture("kubevirt-cr");
    assert_eq!(syncs_label(&cr, key, None), Ok(()));
    cr["spec"]["customizeComponents"]["flags"]["controller"]["additional-launcher-labels-sync"] =
        json!("harvesterhci.io/*");
    assert_eq!(syncs_label(&cr, key, Some("v1.9.0")), Ok(()));
    assert_eq!(
        syncs_label(&cr, key, Some("v1.8.4")),
        Err(vec![format!(
            "spec.customizeComponents: --additional-launcher-labels-sync pattern harvesterhci.io/* covers label {key} only from KubeVirt v1.9.0 (v1.8 matches exact keys); a changed label reaches running VMIs and launcher Pods only when the VM restarts"
        )])
    );
    assert!(syncs_label(&json!("not a CR"), key, None).is_err());
}
