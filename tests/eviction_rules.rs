//! docs/rules.md: migratability reasons, M3, V6, V7 and K1–K3, natively; one table each.

mod common;

use common::{Case, fixture, patched, run, vm_request};
use serde_json::{Value, json};
use vm_maintenance_strategy::migratability::non_migratable_reasons;

const DEVICES: &str = "/spec/template/spec/domain/devices";

fn reasons(vm: &Value) -> (Vec<String>, Vec<String>) {
    let found = non_migratable_reasons(vm);
    let texts = found.reasons.iter().map(ToString::to_string).collect();
    (texts, found.warnings)
}

fn web(patch: Value) -> Value {
    patched(fixture("web-01-migratable"), &patch)
}

#[test]
fn every_reason_a_vm_cannot_live_migrate() {
    let mut rwo_annotation = fixture("web-01-migratable");
    let key = "harvesterhci.io/volumeClaimTemplates";
    let claims = rwo_annotation["metadata"]["annotations"][key]
        .as_str()
        .unwrap()
        .replace("ReadWriteMany", "ReadWriteOnce");
    rwo_annotation["metadata"]["annotations"][key] = json!(claims);
    let bridge_on_pod = patched(
        fixture("legacy-01-unlabelled"),
        &json!([
        {"op": "replace", "path": format!("{DEVICES}/interfaces/0"), "value": {"name": "default", "bridge": {}}}]),
    );
    let bridge_allowed = patched(
        bridge_on_pod.clone(),
        &json!([{"op": "add", "path": "/spec/template/metadata",
        "value": {"annotations": {"kubevirt.io/allow-pod-bridge-network-live-migration": ""}}}]),
    );
    let table: Vec<(&str, Value, &[&str], &[&str])> = vec![
        ("migratable web-01", fixture("web-01-migratable"), &[], &[]),
        (
            "legacy-01, RWX annotation",
            fixture("legacy-01-unlabelled"),
            &[],
            &[],
        ),
        (
            "ml-train-01",
            fixture("ml-train-01-gpu"),
            &[
                "HostDeviceNotLiveMigratable: host device harvester-node-2-000081000",
                "HostDeviceNotLiveMigratable: GPU vgpu-0 without gate VGPULiveMigration",
            ],
            &[],
        ),
        (
            "db-01",
            fixture("db-01-rwo-livemigrate"),
            &["DisksNotLiveMigratable: volume db-01-data (ReadWriteOnce)"],
            &[],
        ),
        (
            "vdi-07: GPU, bridge allowed by annotation",
            fixture("vdi-07-invalid"),
            &["HostDeviceNotLiveMigratable: GPU gpu1 without gate VGPULiveMigration"],
            &[],
        ),
        (
            "host device without a name",
            web(
                json!([{"op": "add", "path": format!("{DEVICES}/hostDevices"),
            "value": [{"deviceName": "intel.com/qat"}]}]),
            ),
            &["HostDeviceNotLiveMigratable: host device intel.com/qat"],
            &[],
        ),
        (
            "launch security",
            web(
                json!([{"op": "add", "path": "/spec/template/spec/domain/launchSecurity",
            "value": {"tdx": {}}}]),
            ),
            &["TDXNotLiveMigratable: launch security tdx"],
            &[],
        ),
        (
            "empty launch security, not s390x: no reason",
            web(json!([{"op": "add",
            "path": "/spec/template/spec/domain/launchSecurity", "value": {}}])),
            &[],
            &[],
        ),
        (
            "empty launch security on s390x (Secure Execution)",
            web(json!([{"op": "add",
            "path": "/spec/template/spec/domain/launchSecurity", "value": {}},
            {"op": "add", "path": "/spec/template/spec/architecture", "value": "s390x"}])),
            &["SecureExecutionNotLiveMigratable: launch security on s390x"],
            &[],
        ),
        (
            "Hyper-V passthrough",
            web(
                json!([{"op": "add", "path": "/spec/template/spec/domain/features/hypervPassthrough",
            "value": {"enabled": true}}]),
            ),
            &["HypervPassthroughNotLiveMigratable: Hyper-V passthrough"],
            &[],
        ),
        (
            "RWO in the annotation",
            rwo_annotation,
            &["DisksNotLiveMigratable: volume web-01-disk-0-k2x7q (ReadWriteOnce)"],
            &[],
        ),
        (
            "malformed annotation",
            web(
                json!([{"op": "replace", "path": "/metadata/annotations/harvesterhci.io~1volumeClaimTemplates",
            "value": "{}"}]),
            ),
            &[],
            &[
                "metadata.annotations[harvesterhci.io/volumeClaimTemplates]: not a JSON list of PVC templates; not checked",
            ],
        ),
        (
            "annotation of the wrong type",
            web(
                json!([{"op": "replace", "path": "/metadata/annotations/harvesterhci.io~1volumeClaimTemplates",
            "value": 3}]),
            ),
            &[],
            &[
                "metadata.annotations[harvesterhci.io/volumeClaimTemplates]: not a JSON list of PVC templates; not checked",
            ],
        ),
        (
            "dataVolumeTemplate without accessModes: the storage profile decides",
            patched(
                fixture("db-01-rwo-livemigrate"),
                &json!([{"op": "remove", "path": "/spec/dataVolumeTemplates/0/spec/storage/accessModes"}]),
            ),
            &[],
            &[],
        ),
        (
            "bridge on the pod network",
            bridge_on_pod,
            &["InterfaceNotLiveMigratable: bridge on pod network \"default\""],
            &[],
        ),
        (
            "bridge on the pod network, allowed",
            bridge_allowed,
            &[],
            &[],
        ),
        (
            "hostDisk",
            web(
                json!([{"op": "add", "path": "/spec/template/spec/volumes/-",
            "value": {"name": "hd", "hostDisk": {"path": "/x", "shared": false}}}]),
            ),
            &["DisksNotLiveMigratable: hostDisk hd not shared"],
            &[],
        ),
        (
            "shared hostDisk",
            web(
                json!([{"op": "add", "path": "/spec/template/spec/volumes/-",
            "value": {"name": "hd", "hostDisk": {"path": "/x", "shared": true}}}]),
            ),
            &[],
            &[],
        ),
        (
            "wrong types everywhere",
            json!({"spec": {"template": {"spec": {"domain": {"devices": {"gpus": "x",
            "interfaces": 1}}, "volumes": {}}}, "dataVolumeTemplates": [1, {"spec": 2}]}}),
            &[],
            &[],
        ),
    ];
    for (name, vm, want_reasons, want_warnings) in table {
        let (got_reasons, got_warnings) = reasons(&vm);
        assert_eq!(got_reasons, want_reasons, "{name}");
        assert_eq!(got_warnings, want_warnings, "{name}");
    }
}

fn warn_text(reasons: &str) -> String {
    format!(
        "spec.template.spec.evictionStrategy: LiveMigrate blocks drains, not migratable ({reasons})"
    )
}
fn reject_text(reasons: &str) -> String {
    format!(
        "spec.template.spec.evictionStrategy: VM cannot live-migrate ({reasons}) and would block node drains with LiveMigrate; use LiveMigrateIfPossible or None"
    )
}

#[test]
fn m3_v6_v7_eviction_strategy() {
    let db = || fixture("db-01-rwo-livemigrate");
    let db_unset = || {
        patched(
            db(),
            &json!([{"op": "remove", "path": "/spec/template/spec/evictionStrategy"}]),
        )
    };
    let rwo = "DisksNotLiveMigratable: volume db-01-data (ReadWriteOnce)";
    let cpu = "spec.template.spec.evictionStrategy: may block drains (CPUModeLiveMigratable: host-model CPU, if the node has no host model)";
    let mode = |m: &str| json!({"evictionStrategy": {"nonMigratable": m}});
    run(vec![
        Case::new("V7 warn by default", vm_request("CREATE", db(), None)).warns(warn_text(rwo)).warns(cpu),
        Case::new("V7 reject", vm_request("CREATE", db(), None)).settings(mode("reject")).rejects(reject_text(rwo)).warns(cpu),
        Case::new("V7 ignore", vm_request("CREATE", db(), None)).settings(mode("ignore")),
        Case::new("V7 fix never overwrites an explicit LiveMigrate", vm_request("CREATE", db(), None))
            .settings(mode("fix")).rejects(reject_text(rwo)).warns(cpu),
        Case::new("V7 fix under clusterDefault LiveMigrate", vm_request("CREATE", db_unset(), None))
            .settings(json!({"evictionStrategy": {"nonMigratable": "fix", "clusterDefault": "LiveMigrate"}}))
            .warns(format!("spec.template.spec.evictionStrategy: set to LiveMigrateIfPossible, not migratable ({rwo})"))
            .sets("/spec/template/spec/evictionStrategy", json!("LiveMigrateIfPossible")),
        Case::new("V7 clusterDefault LiveMigrate, warn", vm_request("CREATE", db_unset(), None))
            .settings(json!({"evictionStrategy": {"clusterDefault": "LiveMigrate"}}))
            .warns(warn_text(rwo)).warns(cpu),
        Case::new("V7 clusterDefault LiveMigrateIfPossible", vm_request("CREATE", db_unset(), None))
            .settings(json!({"evictionStrategy": {"clusterDefault": "LiveMigrateIfPossible", "nonMigratable": "reject"}})),
        Case::new("V7 not LiveMigrate: no conflict (ml-train-01)", vm_request("CREATE", fixture("ml-train-01-gpu"), None))
            .settings(mode("reject")),
        Case::new("V7 validate only, reject", vm_request("CREATE", db(), None))
            .settings(json!({"mutate": false, "evictionStrategy": {"nonMigratable": "reject"}}))
            .rejects(reject_text(rwo)).warns(cpu),
        Case::new("M3 default set", vm_request("CREATE", db_unset(), None))
            .settings(json!({"evictionStrategy": {"default": "LiveMigrateIfPossible"}}))
            .sets("/spec/template/spec/evictionStrategy", json!("LiveMigrateIfPossible")),
        Case::new("M3 an explicit value is kept", vm_request("CREATE", fixture("web-01-migratable"), None))
            .settings(json!({"evictionStrategy": {"default": "None"}})),
        Case::new("M3 default LiveMigrate then V7 fix", vm_request("CREATE", db_unset(), None))
            .settings(json!({"evictionStrategy": {"default": "LiveMigrate", "nonMigratable": "fix"}}))
            .warns(format!("spec.template.spec.evictionStrategy: set to LiveMigrateIfPossible, not migratable ({rwo})"))
            .sets("/spec/template/spec/evictionStrategy", json!("LiveMigrateIfPossible")),
        Case::new("V6 not allowed", vm_request("CREATE", db(), None))
            .settings(json!({"evictionStrategy": {"allowed": ["None"], "nonMigratable": "ignore"}}))
            .rejects("spec.template.spec.evictionStrategy: unsupported value \"LiveMigrate\" (valid: None)"),
        Case::new("V6 a number", vm_request("CREATE", patched(fixture("web-01-migratable"), &json!([
            {"op": "replace", "path": "/spec/template/spec/evictionStrategy", "value": 1}])), None))
            .rejects("spec.template.spec.evictionStrategy: unsupported value \"1\" (valid: LiveMigrate, LiveMigrateIfPossible, None, External)"),
        Case::new("V6 kept on UPDATE", vm_request("UPDATE", db(), Some(db())))
            .settings(json!({"evictionStrategy": {"allowed": ["None"], "nonMigratable": "ignore"}}))
            .warns("spec.template.spec.evictionStrategy: kept unsupported value \"LiveMigrate\""),
    ]);
}

fn kubevirt(patch: Value) -> Value {
    let mut request = vm_request("CREATE", patched(fixture("kubevirt-cr"), &patch), None);
    request["kind"] = json!({"group": "kubevirt.io", "version": "v1", "kind": "KubeVirt"});
    request
}

#[test]
fn k1_k2_k3_kubevirt_cr() {
    let methods = "/spec/workloadUpdateStrategy/workloadUpdateMethods";
    let no_evict = "spec.workloadUpdateStrategy.workloadUpdateMethods: must include Evict as a fallback for VMs that cannot live-migrate";
    run(vec![
        Case::new("fixture accepted", kubevirt(json!([]))),
        Case::new("K1 unset", kubevirt(json!([{"op": "remove", "path": "/spec/configuration/evictionStrategy"}])))
            .warns("spec.configuration.evictionStrategy: not set; KubeVirt then uses None"),
        Case::new("K1 not recommended", kubevirt(json!([{"op": "replace", "path": "/spec/configuration/evictionStrategy", "value": "None"}])))
            .warns("spec.configuration.evictionStrategy: None; LiveMigrateIfPossible is recommended"),
        Case::new("K1 unsupported", kubevirt(json!([{"op": "replace", "path": "/spec/configuration/evictionStrategy", "value": "Drain"}])))
            .rejects("spec.configuration.evictionStrategy: unsupported value \"Drain\" (valid: LiveMigrate, LiveMigrateIfPossible, None, External)"),
        Case::new("K2 no Evict", kubevirt(json!([{"op": "replace", "path": methods, "value": ["LiveMigrate"]}]))).rejects(no_evict),
        Case::new("K2 no Evict allowed", kubevirt(json!([{"op": "replace", "path": methods, "value": ["LiveMigrate"]}])))
            .settings(json!({"kubevirt": {"requireEvictFallback": false}})),
        Case::new("K2 Evict only", kubevirt(json!([{"op": "replace", "path": methods, "value": ["Evict"]}]))),
        Case::new("K2 unknown item", kubevirt(json!([{"op": "replace", "path": methods, "value": [3, "Evict"]}])))
            .rejects("spec.workloadUpdateStrategy.workloadUpdateMethods[0]: unsupported value \"3\" (valid: LiveMigrate, Evict)"),
        Case::new("K2 unset", kubevirt(json!([{"op": "remove", "path": "/spec/workloadUpdateStrategy"}])))
            .warns("spec.workloadUpdateStrategy.workloadUpdateMethods: empty; workloads are never updated automatically"),
        Case::new("K3 size 0", kubevirt(json!([{"op": "replace", "path": "/spec/workloadUpdateStrategy/batchEvictionSize", "value": 0}])))
            .rejects("spec.workloadUpdateStrategy.batchEvictionSize: must be an integer of at least 1, got 0"),
        Case::new("K3 size a string", kubevirt(json!([{"op": "replace", "path": "/spec/workloadUpdateStrategy/batchEvictionSize", "value": "10"}])))
            .rejects("spec.workloadUpdateStrategy.batchEvictionSize: must be an integer of at least 1, got \"10\""),
        Case::new("K3 interval 0s", kubevirt(json!([{"op": "replace", "path": "/spec/workloadUpdateStrategy/batchEvictionInterval", "value": "0s"}])))
            .rejects("spec.workloadUpdateStrategy.batchEvictionInterval: must be a positive duration such as 1m0s, got \"0s\""),
        Case::new("K never mutates, spec a string", kubevirt(json!([{"op": "replace", "path": "/spec", "value": "x"}])))
            .warns("spec.configuration.evictionStrategy: not set; KubeVirt then uses None")
            .warns("spec.workloadUpdateStrategy.workloadUpdateMethods: empty; workloads are never updated automatically"),
    ]);
}
