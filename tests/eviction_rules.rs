//! docs/rules.md, V7's reasons: `migratability::non_migratable_reasons`, the function the tools
//! share with the policy, on its own. The rules M3, V6, V7 and K1–K3 are cases of
//! e2e-tests/cases/eviction.yaml and kubevirt.yaml.

mod common;

use common::{fixture, patched};
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
