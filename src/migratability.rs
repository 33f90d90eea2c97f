//! Why a VM cannot live-migrate, as far as its spec shows (KubeVirt's
//! `calculateLiveMigrationCondition`; docs/rules.md, V7). One function per reason, each adding
//! short phrases that name the device, disk or interface; `REASONS` lists them in report order.

use serde_json::Value;

use crate::json::{Object, name_of};
use crate::vm;

/// Harvester's annotation holding the VM's PVC templates as a JSON array.
pub(crate) const VOLUME_CLAIM_TEMPLATES: &str = "harvesterhci.io/volumeClaimTemplates";
/// The template annotation that lets a bridge binding on the pod network migrate.
pub(crate) const ALLOW_POD_BRIDGE: &str = "kubevirt.io/allow-pod-bridge-network-live-migration";

/// The reasons, plus warnings about what could not be read (a malformed Harvester annotation).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Findings {
    pub reasons: Vec<String>,
    pub warnings: Vec<String>,
}

/// One reason check: reads the VM, adds to the findings.
type Reason = fn(&Object, &mut Findings);

/// Every reason, in the order they are reported.
const REASONS: [Reason; 8] = [
    host_devices,
    gpus,
    launch_security,
    hyperv_passthrough,
    data_volume_templates,
    volume_claim_templates,
    pod_network_bridge,
    host_disks,
];

/// All the reasons the VM's spec shows; empty when it can live-migrate as far as the spec tells.
pub fn non_migratable_reasons(vm: &Object) -> Findings {
    let mut found = Findings::default();
    REASONS.iter().for_each(|reason| reason(vm, &mut found));
    found
}

/// `domain.devices.hostDevices`: every host device pins the VM to its node.
fn host_devices(vm: &Object, found: &mut Findings) {
    for device in vm::devices(vm, "hostDevices") {
        found
            .reasons
            .push(format!("host device {}", name_of(device)));
    }
}

/// `domain.devices.gpus`.
fn gpus(vm: &Object, found: &mut Findings) {
    for gpu in vm::devices(vm, "gpus") {
        found.reasons.push(format!("GPU {}", name_of(gpu)));
    }
}

/// `domain.launchSecurity` (SEV, SNP, TDX, ...): confidential VMs do not migrate.
fn launch_security(vm: &Object, found: &mut Findings) {
    let Some(security) = vm::domain(vm)
        .and_then(|d| d.get("launchSecurity"))
        .filter(|s| !s.is_null())
    else {
        return;
    };
    let kinds: Vec<&str> = security
        .as_object()
        .into_iter()
        .flat_map(|m| m.keys())
        .map(String::as_str)
        .collect();
    found.reasons.push(match kinds.as_slice() {
        [] => "launch security".to_owned(),
        kinds => format!("launch security ({})", kinds.join(", ")),
    });
}

/// `domain.features.hypervPassthrough.enabled: true`.
fn hyperv_passthrough(vm: &Object, found: &mut Findings) {
    let enabled = vm::domain(vm).and_then(|d| d.pointer("/features/hypervPassthrough/enabled"));
    if enabled == Some(&Value::Bool(true)) {
        found.reasons.push("Hyper-V passthrough".to_owned());
    }
}

/// `spec.dataVolumeTemplates` whose claim (`pvc` or `storage`) is not `ReadWriteMany`.
fn data_volume_templates(vm: &Object, found: &mut Findings) {
    for dv in vm::data_volume_templates(vm) {
        let dv_spec = dv.get("spec");
        let modes = dv_spec
            .and_then(|s| s.pointer("/pvc/accessModes"))
            .or_else(|| dv_spec.and_then(|s| s.pointer("/storage/accessModes")));
        not_rwx(found, dv.pointer("/metadata/name"), modes);
    }
}

/// Harvester's `volumeClaimTemplates` annotation: claims that are not `ReadWriteMany`.
fn volume_claim_templates(vm: &Object, found: &mut Findings) {
    let Some(raw) = vm::annotation(vm, VOLUME_CLAIM_TEMPLATES) else {
        return;
    };
    match raw.as_str().map(serde_json::from_str::<Vec<Value>>) {
        Some(Ok(claims)) => {
            for claim in &claims {
                let modes = claim.pointer("/spec/accessModes");
                not_rwx(found, claim.pointer("/metadata/name"), modes);
            }
        }
        _ => found.warnings.push(format!(
            "metadata.annotations[{VOLUME_CLAIM_TEMPLATES}]: not a JSON list of PVC templates; not checked"
        )),
    }
}

/// A `bridge` interface on the pod network, unless the template allows its migration.
fn pod_network_bridge(vm: &Object, found: &mut Findings) {
    if vm::template_annotation(vm, ALLOW_POD_BRIDGE).is_some() {
        return;
    }
    let networks = vm::template_spec_items(vm, "networks");
    for interface in vm::devices(vm, "interfaces") {
        let on_pod_network = networks.iter().any(|n| {
            n.get("name") == interface.get("name") && n.get("pod").is_some_and(|p| !p.is_null())
        });
        if on_pod_network && interface.get("bridge").is_some_and(|b| !b.is_null()) {
            found
                .reasons
                .push(format!("bridge on pod network {}", name_of(interface)));
        }
    }
}

/// A `hostDisk` volume without `shared: true`.
fn host_disks(vm: &Object, found: &mut Findings) {
    for volume in vm::template_spec_items(vm, "volumes") {
        let Some(disk) = volume.get("hostDisk").filter(|d| !d.is_null()) else {
            continue;
        };
        if disk.get("shared") != Some(&Value::Bool(true)) {
            found.reasons.push(format!("hostDisk {}", name_of(volume)));
        }
    }
}

/// The claims the spec does not describe: each `persistentVolumeClaim.claimName` or `dataVolume`
/// name (CDI names the PVC after its DataVolume) of `spec.template.spec.volumes`, in volume order,
/// that is none of the VM's own `dataVolumeTemplates` or Harvester `volumeClaimTemplates`
/// (those are read from the spec). Each name once.
pub(crate) fn external_claims(vm: &Object) -> Vec<&str> {
    let templated: Vec<Value> = vm::annotation(vm, VOLUME_CLAIM_TEMPLATES)
        .and_then(Value::as_str)
        .and_then(|raw| serde_json::from_str::<Vec<Value>>(raw).ok())
        .unwrap_or_default();
    let own = |name: &str| {
        vm::data_volume_templates(vm)
            .iter()
            .chain(&templated)
            .any(|t| t.pointer("/metadata/name").and_then(Value::as_str) == Some(name))
    };
    let mut claims: Vec<&str> = Vec::new();
    for volume in vm::template_spec_items(vm, "volumes") {
        let name = volume
            .pointer("/persistentVolumeClaim/claimName")
            .or_else(|| volume.pointer("/dataVolume/name"))
            .and_then(Value::as_str);
        if let Some(name) = name.filter(|n| !n.is_empty() && !own(n) && !claims.contains(n)) {
            claims.push(name);
        }
    }
    claims
}

/// A claim read from the cluster: a reason unless its access modes include `ReadWriteMany`.
pub(crate) fn claim_reason(found: &mut Findings, name: &str, modes: &[String]) {
    if modes.iter().any(|m| m == "ReadWriteMany") {
        return;
    }
    let shown = match modes {
        [] => "no access modes".to_owned(),
        modes => modes.join(", "),
    };
    found.reasons.push(format!("volume {name} ({shown})"));
}

/// A claim whose access modes are known and lack `ReadWriteMany` cannot follow the VM. Without
/// `accessModes` the storage profile decides, which the spec does not show.
fn not_rwx(found: &mut Findings, name: Option<&Value>, modes: Option<&Value>) {
    let Some(modes) = modes.and_then(Value::as_array) else {
        return;
    };
    if modes.iter().any(|m| m == "ReadWriteMany") {
        return;
    }
    let shown: Vec<&str> = modes.iter().filter_map(Value::as_str).collect();
    let name = match name {
        Some(Value::String(name)) => name.as_str(),
        _ => "(unnamed)",
    };
    found
        .reasons
        .push(format!("volume {name} ({})", shown.join(", ")));
}
