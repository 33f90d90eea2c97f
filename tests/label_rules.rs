//! docs/rules.md: gate, mutation and label validation rules (G1–G5, M1, M2, M4, V1–V5), one table each.

mod common;

use common::{Case, K, fixture, labels_ptr, patched, run, vm_request};
use serde_json::{Value, json};

const ALL: &str =
    "Migrate, ShutdownAndRestartAfterEnable, ShutdownAndRestartAfterDisable, Shutdown";

fn vm_label() -> String {
    labels_ptr("/metadata/labels", K)
}
fn tpl_label() -> String {
    labels_ptr("/spec/template/metadata/labels", K)
}
fn invalid(value: &str, valid: &str) -> String {
    format!("metadata.labels[{K}]: invalid maintenance mode strategy: {value} (valid: {valid})")
}
/// A fixture with the VM label set to `value` (on the VM only).
fn with_label(name: &str, value: Value) -> Value {
    let mut vm = fixture(name);
    if vm.pointer("/metadata/labels").is_none() {
        vm["metadata"]["labels"] = json!({});
    }
    patched(
        vm,
        &json!([{"op": "add", "path": vm_label(), "value": value}]),
    )
}
fn create(object: Value) -> Value {
    vm_request("CREATE", object, None)
}
fn update(object: Value, old: Value) -> Value {
    vm_request("UPDATE", object, Some(old))
}
fn legacy() -> Value {
    fixture("legacy-01-unlabelled")
}
fn web() -> Value {
    fixture("web-01-migratable")
}
const KEPT_TYPO: &str =
    "spec.template.spec.evictionStrategy: kept unsupported value \"LiveMigrateIfPossibe\"";
const VALIDATE_ONLY: fn() -> Value = || json!({"mutate": false});

#[test]
fn g1_to_g5_gate() {
    let mut pod = create(legacy());
    pod["kind"] = json!({"group": "", "version": "v1", "kind": "Pod"});
    let mut other_group = create(legacy());
    other_group["kind"]["group"] = json!("example.com");
    let mut status = vm_request("UPDATE", legacy(), Some(legacy()));
    status["subResource"] = json!("status");
    let mut status_snake = vm_request("UPDATE", legacy(), Some(legacy()));
    status_snake["sub_resource"] = json!("status");
    let mut dry_run = create(legacy());
    dry_run["dryRun"] = json!(true);
    let mut no_object = create(Value::Null);
    no_object.as_object_mut().unwrap().remove("object");
    run(vec![
        Case::new("G1 a Pod is not evaluated", pod),
        Case::new("G1 VirtualMachine of another group", other_group),
        Case::new(
            "G2 DELETE",
            vm_request("DELETE", Value::Null, Some(legacy())),
        ),
        Case::new("G2 CONNECT", vm_request("CONNECT", legacy(), None)),
        Case::new("G3 status subresource", status),
        Case::new("G3 status subresource, snake_case", status_snake),
        Case::new("G4 dry-run mutates the same", dry_run)
            .sets(vm_label(), json!("Migrate"))
            .sets(tpl_label(), json!("Migrate")),
        Case::new("G5 object missing", no_object).rejects("object: missing"),
        Case::new("G5 object null", create(Value::Null)).rejects("object: missing"),
        Case::new("G5 object an array", create(json!([1])))
            .rejects("object: must be a JSON object, got array"),
        Case::new(
            "G5 labels a list",
            create(patched(
                legacy(),
                &json!([
            {"op": "add", "path": "/metadata/labels", "value": ["a"]}]),
            )),
        )
        .rejects("metadata.labels: must be an object, got array"),
        Case::new(
            "G5 metadata a string",
            create(patched(
                legacy(),
                &json!([
            {"op": "replace", "path": "/metadata", "value": "x"}]),
            )),
        )
        .rejects("metadata: must be an object, got string"),
        Case::new(
            "G5 template labels a string",
            create(patched(
                web(),
                &json!([
            {"op": "replace", "path": "/spec/template/metadata/labels", "value": "x"}]),
            )),
        )
        .rejects("spec.template.metadata.labels: must be an object, got string"),
        Case::new(
            "G5 template metadata a number",
            create(patched(
                legacy(),
                &json!([
            {"op": "add", "path": "/spec/template/metadata", "value": 3}]),
            )),
        )
        .rejects("spec.template.metadata: must be an object, got number"),
        Case::new(
            "G5 UPDATE without oldObject is a CREATE",
            vm_request(
                "UPDATE",
                with_label("web-01-migratable", json!("migrate")),
                None,
            ),
        )
        .rejects(invalid("migrate", ALL)),
        Case::new(
            "G5 UPDATE with a non-object oldObject is a CREATE",
            vm_request(
                "UPDATE",
                with_label("web-01-migratable", json!("migrate")),
                Some(json!("x")),
            ),
        )
        .rejects(invalid("migrate", ALL)),
    ]);
}

#[test]
fn m1_m2_m4_mutation() {
    let with_template_value = |v: &str| {
        patched(
            web(),
            &json!([{"op": "replace", "path": tpl_label(), "value": v}]),
        )
    };
    run(vec![
        Case::new("M4 web-01 as is", create(web())),
        Case::new("M4 ml-train-01 as is", create(fixture("ml-train-01-gpu"))),
        Case::new("M1+M2 legacy-01: no labels, no template metadata", create(legacy()))
            .sets(vm_label(), json!("Migrate"))
            .sets(tpl_label(), json!("Migrate"))
            .sets("/metadata/name", json!("legacy-01")),
        Case::new("M1 labels: null", create(patched(legacy(), &json!([
            {"op": "add", "path": "/metadata/labels", "value": null}]))))
            .sets(vm_label(), json!("Migrate")),
        Case::new("M2 template metadata: null", create(patched(web(), &json!([
            {"op": "replace", "path": "/spec/template/metadata", "value": null}]))))
            .sets(tpl_label(), json!("Migrate")),
        Case::new("M2 template labels: null", create(patched(web(), &json!([
            {"op": "replace", "path": "/spec/template/metadata/labels", "value": null}]))))
            .sets(tpl_label(), json!("Migrate")),
        Case::new("M2 label missing from the template", create(patched(web(), &json!([
            {"op": "remove", "path": tpl_label()}]))))
            .sets(tpl_label(), json!("Migrate"))
            .sets("/spec/template/metadata/labels/harvesterhci.io~1vmName", json!("web-01")),
        Case::new("M2 template differs: the VM label wins", create(with_template_value("Shutdown")))
            .sets(tpl_label(), json!("Migrate")),
        Case::new("M1+M2 label only in the template: default on both", create(patched(legacy(), &json!([
            {"op": "add", "path": "/spec/template/metadata", "value": {"labels": {K: "Shutdown"}}}]))))
            .sets(vm_label(), json!("Migrate"))
            .sets(tpl_label(), json!("Migrate")),
        Case::new("M2 never creates spec.template", create(patched(legacy(), &json!([
            {"op": "remove", "path": "/spec/template"}]))))
            .sets(vm_label(), json!("Migrate"))
            .sets("/spec", json!({"runStrategy": "Always"})),
        Case::new("M2 spec a string: no template, M1 only", create(patched(legacy(), &json!([
            {"op": "replace", "path": "/spec", "value": "x"}]))))
            .sets(vm_label(), json!("Migrate"))
            .sets("/spec", json!("x")),
        Case::new("M1 custom labelKey", create(legacy()))
            .settings(json!({"labelKey": "example.com/drain"}))
            .sets("/metadata/labels/example.com~1drain", json!("Migrate"))
            .sets("/spec/template/metadata/labels/example.com~1drain", json!("Migrate")),
        Case::new("M1 defaultStrategy", create(legacy()))
            .settings(json!({"defaultStrategy": "Shutdown"}))
            .sets(vm_label(), json!("Shutdown"))
            .sets(tpl_label(), json!("Shutdown")),
        Case::new("M1 UPDATE removing the label gets the default",
            update(legacy(), with_label("legacy-01-unlabelled", json!("Shutdown"))))
            .sets(vm_label(), json!("Migrate")),
        Case::new("M2 copies an invalid value verbatim, then V3 rejects",
            create(with_label("legacy-01-unlabelled", json!(" Migrate"))))
            .rejects(invalid(" Migrate", ALL)),
    ]);
}

#[test]
fn v1_missing_label() {
    let not_found = format!("metadata.labels[{K}]: label `{K}` not found");
    run(vec![
        Case::new("V1 CREATE without the label", create(legacy()))
            .settings(VALIDATE_ONLY())
            .rejects(not_found.clone()),
        Case::new("V1 UPDATE of a legacy VM", update(legacy(), legacy()))
            .settings(VALIDATE_ONLY())
            .warns(format!(
                "metadata.labels[{K}]: not set on this existing VM; a drain treats it as Migrate"
            )),
        Case::new(
            "V1 UPDATE removing the label",
            update(
                legacy(),
                with_label("legacy-01-unlabelled", json!("Migrate")),
            ),
        )
        .settings(VALIDATE_ONLY())
        .rejects(not_found.clone()),
        Case::new(
            "V1 UPDATE without oldObject",
            vm_request("UPDATE", legacy(), None),
        )
        .settings(VALIDATE_ONLY())
        .rejects(not_found),
        Case::new("V1 requireLabel: false", create(legacy()))
            .settings(json!({"mutate": false, "requireLabel": false}))
            .warns(format!(
                "metadata.labels[{K}]: not set; a drain treats this VM as Migrate"
            )),
    ]);
}

#[test]
fn v2_v3_strategy_value() {
    let restricted = json!({"allowedStrategies": ["Migrate", "Shutdown"]});
    let labelled = |v: Value| with_label("web-01-migratable", v);
    run(vec![
        Case::new("V3 empty string", create(labelled(json!("")))).rejects(invalid("", ALL)),
        Case::new("V3 leading space", create(labelled(json!(" Migrate"))))
            .rejects(invalid(" Migrate", ALL)),
        Case::new("V3 lower case", create(labelled(json!("migrate")))).rejects(invalid("migrate", ALL)),
        Case::new("V3 a number is shown as JSON", create(labelled(json!(5)))).rejects(invalid("5", ALL)),
        Case::new("V3 null value", create(labelled(Value::Null))).rejects(invalid("null", ALL)),
        Case::new("V3 every valid strategy", create(labelled(json!("ShutdownAndRestartAfterEnable"))))
            .sets(tpl_label(), json!("ShutdownAndRestartAfterEnable")),
        Case::new("V3 restricted allowedStrategies, in their order",
            create(labelled(json!("ShutdownAndRestartAfterEnable"))))
            .settings(restricted.clone())
            .rejects(invalid("ShutdownAndRestartAfterEnable", "Migrate, Shutdown")),
        Case::new("V3 custom labelKey", create(patched(legacy(), &json!([
            {"op": "add", "path": "/metadata/labels", "value": {"example.com/drain": "Drain"}}]))))
            .settings(json!({"labelKey": "example.com/drain"}))
            .rejects(format!("metadata.labels[example.com/drain]: invalid maintenance mode strategy: Drain (valid: {ALL})")),
        Case::new("V3 mutate: false", create(labelled(json!("migrate"))))
            .settings(VALIDATE_ONLY())
            .rejects(invalid("migrate", ALL)),
        Case::new("V2 UPDATE keeps an invalid value",
            update(labelled(json!("migrate")), labelled(json!("migrate"))))
            .warns(format!("metadata.labels[{K}]: kept invalid value migrate; a drain treats this VM as Migrate"))
            .sets(tpl_label(), json!("migrate")),
        Case::new("V2 UPDATE keeps a disallowed strategy",
            update(labelled(json!("ShutdownAndRestartAfterEnable")), labelled(json!("ShutdownAndRestartAfterEnable"))))
            .settings(restricted)
            .warns(format!("metadata.labels[{K}]: kept ShutdownAndRestartAfterEnable, not in allowedStrategies"))
            .sets(tpl_label(), json!("ShutdownAndRestartAfterEnable")),
        Case::new("V3 UPDATE from valid to invalid", update(labelled(json!("migrate")), web()))
            .rejects(invalid("migrate", ALL)),
        Case::new("V3 UPDATE from one invalid value to another",
            update(labelled(json!("Migrate ")), labelled(json!("migrate"))))
            .rejects(invalid("Migrate ", ALL)),
        Case::new("V2 number kept", update(labelled(json!(5)), labelled(json!(5))))
            .warns(format!("metadata.labels[{K}]: kept invalid value 5; a drain treats this VM as Migrate"))
            .sets(tpl_label(), json!(5)),
    ]);
}

#[test]
fn v4_template_mismatch() {
    let mismatched = || {
        patched(
            web(),
            &json!([{"op": "replace", "path": tpl_label(), "value": "Shutdown"}]),
        )
    };
    let must_equal = format!(
        "spec.template.metadata.labels[{K}]: must equal metadata.labels[{K}] (Shutdown != Migrate)"
    );
    let differs = format!(
        "spec.template.metadata.labels[{K}] (Shutdown) differs from metadata.labels (Migrate)"
    );
    let only_template = patched(
        legacy(),
        &json!([
        {"op": "add", "path": "/spec/template/metadata", "value": {"labels": {K: "Shutdown"}}}]),
    );
    run(vec![
        Case::new("V4 reject", create(mismatched())).settings(VALIDATE_ONLY()).rejects(must_equal.clone()),
        Case::new("V4 warn", create(mismatched()))
            .settings(json!({"mutate": false, "templateMismatch": "warn"}))
            .warns(differs.clone()),
        Case::new("V4 ignore", create(mismatched()))
            .settings(json!({"mutate": false, "templateMismatch": "ignore"})),
        Case::new("V4 UPDATE keeping the mismatch", update(mismatched(), mismatched()))
            .settings(VALIDATE_ONLY())
            .warns(differs),
        Case::new("V4 UPDATE introducing the mismatch", update(mismatched(), web()))
            .settings(VALIDATE_ONLY())
            .rejects(must_equal),
        Case::new("V4 template label missing", create(patched(web(), &json!([
            {"op": "remove", "path": tpl_label()}]))))
            .settings(VALIDATE_ONLY())
            .rejects(format!("spec.template.metadata.labels[{K}]: must equal metadata.labels[{K}] (<unset> != Migrate)")),
        Case::new("V1+V4 label only in the template", create(only_template))
            .settings(json!({"mutate": false, "requireLabel": false}))
            .warns(format!("metadata.labels[{K}]: not set; a drain treats this VM as Migrate"))
            .rejects(format!("spec.template.metadata.labels[{K}]: must equal metadata.labels[{K}] (Shutdown != <unset>)")),
        Case::new("V4 no template: nothing to compare", create(patched(web(), &json!([
            {"op": "remove", "path": "/spec/template"}]))))
            .settings(VALIDATE_ONLY()),
    ]);
}

#[test]
fn v5_case_variant_key_and_the_invalid_fixture() {
    let ignored = "metadata.labels[harvesterhci.io/Maintain-Mode-Strategy] is ignored: label keys are case-sensitive".to_owned();
    let vdi = || fixture("vdi-07-invalid");
    run(vec![
        Case::new("V5 case-variant key beside a valid one", create(patched(web(), &json!([
            {"op": "add", "path": "/metadata/labels/harvesterhci.io~1Maintain-Mode-Strategy", "value": "Shutdown"}]))))
            .warns(ignored.clone()),
        Case::new("V5 case-variant key in the template", create(patched(web(), &json!([
            {"op": "add", "path": "/spec/template/metadata/labels/HARVESTERHCI.IO~1MAINTAIN-MODE-STRATEGY", "value": "x"}]))))
            .warns("spec.template.metadata.labels[HARVESTERHCI.IO/MAINTAIN-MODE-STRATEGY] is ignored: label keys are case-sensitive"),
        Case::new("vdi-07 CREATE", create(vdi()))
            .warns(ignored.clone())
            .rejects(invalid("migrate", ALL)),
        Case::new("vdi-07 CREATE, validate only", create(vdi()))
            .settings(VALIDATE_ONLY())
            .warns(ignored.clone())
            .rejects(invalid("migrate", ALL)),
        Case::new("vdi-07 UPDATE that changes nothing", update(vdi(), vdi()))
            .warns(format!("metadata.labels[{K}]: kept invalid value migrate; a drain treats this VM as Migrate"))
            .warns(ignored.clone())
            .warns(KEPT_TYPO)
            .sets(tpl_label(), json!("migrate")),
        Case::new("vdi-07 UPDATE that changes nothing, validate only", update(vdi(), vdi()))
            .settings(VALIDATE_ONLY())
            .warns(format!("metadata.labels[{K}]: kept invalid value migrate; a drain treats this VM as Migrate"))
            .warns(format!("spec.template.metadata.labels[{K}] (Shutdown) differs from metadata.labels (migrate)"))
            .warns(ignored)
            .warns(KEPT_TYPO),
    ]);
}
