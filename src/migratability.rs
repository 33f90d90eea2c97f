//! Why a VM cannot live-migrate, as far as its spec shows (KubeVirt's
//! `calculateLiveMigrationCondition`). Each reason is a short phrase naming the device, disk or
//! interface.

use serde_json::Value;

use crate::vm::Object;

/// Harvester's annotation holding the VM's PVC templates as a JSON array.
pub const VOLUME_CLAIM_TEMPLATES: &str = "harvesterhci.io/volumeClaimTemplates";
/// The template annotation that lets a bridge binding on the pod network migrate.
pub const ALLOW_POD_BRIDGE: &str = "kubevirt.io/allow-pod-bridge-network-live-migration";

/// The reasons, plus warnings about what could not be read (a malformed Harvester annotation).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Findings {
    pub reasons: Vec<String>,
    pub warnings: Vec<String>,
}

pub fn non_migratable_reasons(vm: &Object) -> Findings {
    let mut found = Findings::default();
    let template = vm.get("spec").and_then(|s| s.get("template"));
    let spec = template.and_then(|t| t.get("spec"));
    let domain = spec.and_then(|s| s.get("domain"));
    let devices = domain.and_then(|d| d.get("devices"));
    for device in items(devices.and_then(|d| d.get("hostDevices"))) {
        found
            .reasons
            .push(format!("host device {}", name_of(device)));
    }
    for gpu in items(devices.and_then(|d| d.get("gpus"))) {
        found.reasons.push(format!("GPU {}", name_of(gpu)));
    }
    if let Some(security) = domain
        .and_then(|d| d.get("launchSecurity"))
        .filter(|s| !s.is_null())
    {
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
    let passthrough = domain.and_then(|d| d.pointer("/features/hypervPassthrough/enabled"));
    if passthrough == Some(&Value::Bool(true)) {
        found.reasons.push("Hyper-V passthrough".to_owned());
    }
    for dv in items(vm.get("spec").and_then(|s| s.get("dataVolumeTemplates"))) {
        let dv_spec = dv.get("spec");
        let modes = dv_spec
            .and_then(|s| s.pointer("/pvc/accessModes"))
            .or_else(|| dv_spec.and_then(|s| s.pointer("/storage/accessModes")));
        not_rwx(&mut found, dv.pointer("/metadata/name"), modes);
    }
    if let Some(raw) = vm
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(VOLUME_CLAIM_TEMPLATES))
    {
        match raw.as_str().map(serde_json::from_str::<Vec<Value>>) {
            Some(Ok(claims)) => {
                for claim in &claims {
                    not_rwx(&mut found, claim.pointer("/metadata/name"), claim.pointer("/spec/accessModes"));
                }
            }
            _ => found.warnings.push(format!(
                "metadata.annotations[{VOLUME_CLAIM_TEMPLATES}]: not a JSON list of PVC templates; not checked"
            )),
        }
    }
    let allow_bridge = template
        .and_then(|t| t.pointer("/metadata/annotations"))
        .and_then(|a| a.get(ALLOW_POD_BRIDGE))
        .is_some();
    let networks = items(spec.and_then(|s| s.get("networks")));
    for interface in items(devices.and_then(|d| d.get("interfaces"))) {
        let on_pod_network = networks.iter().any(|n| {
            n.get("name") == interface.get("name") && n.get("pod").is_some_and(|p| !p.is_null())
        });
        if on_pod_network && interface.get("bridge").is_some_and(|b| !b.is_null()) && !allow_bridge
        {
            found
                .reasons
                .push(format!("bridge on pod network {}", name_of(interface)));
        }
    }
    for volume in items(spec.and_then(|s| s.get("volumes"))) {
        if let Some(disk) = volume.get("hostDisk").filter(|d| !d.is_null()) {
            if disk.get("shared") != Some(&Value::Bool(true)) {
                found.reasons.push(format!("hostDisk {}", name_of(volume)));
            }
        }
    }
    found
}

/// The elements of a JSON array; nothing for any other type.
fn items(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

fn name_of(item: &Value) -> String {
    match item.get("name").or_else(|| item.get("deviceName")) {
        Some(Value::String(name)) => name.clone(),
        Some(other) => other.to_string(),
        None => "(unnamed)".to_owned(),
    }
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
