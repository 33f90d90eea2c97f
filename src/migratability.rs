//! Why KubeVirt will mark a VM's VMI `LiveMigratable=False` (KubeVirt v1.9.0
//! `pkg/virt-handler/vm.go` `calculateLiveMigrationCondition`, 1247-1290; v1.8.4 1195-1241;
//! docs/rules.md, V7). One function per KubeVirt reason constant, in KubeVirt's check order, each
//! adding phrases that start with the constant (`HostDeviceNotLiveMigratable: host device nic-vf`)
//! and name the device, disk or interface. KubeVirt names the first reason; the policy names all.

use serde_json::Value;

use crate::configuration::{Configuration, Rules};
use crate::json::{Object, member, name_of};
use crate::reason::{Reason, ReasonKind};
use crate::vm;
use crate::vmi::{self, Sources, Vmi, binding_of};

/// Harvester's annotation holding the VM's PVC templates as a JSON array.
pub(crate) const VOLUME_CLAIM_TEMPLATES: &str = "harvesterhci.io/volumeClaimTemplates";
/// The VMI annotation that lets a bridge binding on the pod network migrate (`interface.go:77`).
pub(crate) const ALLOW_POD_BRIDGE: &str = "kubevirt.io/allow-pod-bridge-network-live-migration";
/// The feature gate of vGPU live migration (v1.9.0 `featuregate/active.go:212-217`).
pub(crate) const VGPU_GATE: &str = "VGPULiveMigration";

/// The reasons, the node-dependent ones, and warnings about what could not be read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Findings {
    /// Definite reasons: KubeVirt marks the VMI `LiveMigratable=False` wherever it runs.
    pub reasons: Vec<Reason>,
    /// Reasons that depend on the node or the cluster (`CPUModeLiveMigratable`,
    /// `NoTSCFrequencyNotLiveMigratable`): warnings only, never a V7 reason.
    pub node: Vec<Reason>,
    pub warnings: Vec<String>,
}

/// What the reasons read besides the VMI.
pub(crate) struct Context<'a> {
    pub(crate) vm: &'a Object,
    pub(crate) config: &'a Configuration,
    pub(crate) rules: Rules,
    /// The access modes of a claim the VM's own templates do not describe (`None`: unknown).
    pub(crate) external_claim: &'a dyn Fn(&str) -> Option<Vec<String>>,
}

/// One reason check: reads the VMI, adds to the findings.
type Check = fn(&Vmi, &Context, &mut Findings);

/// Every reason, in KubeVirt's check order (v1.9.0 `vm.go:1250-1284`).
const REASONS: [Check; 9] = [
    interface_not_live_migratable,
    cpu_mode_live_migratable,
    host_device_not_live_migratable,
    sev_or_tdx_not_live_migratable,
    secure_execution_not_live_migratable,
    persistent_reservation_not_live_migratable,
    no_tsc_frequency_not_live_migratable,
    hyperv_passthrough_not_live_migratable,
    disks_not_live_migratable,
];

/// All the reasons of an expanded VMI.
pub(crate) fn reasons_of(vmi: &Vmi, context: &Context) -> Findings {
    let mut found = Findings::default();
    REASONS
        .iter()
        .for_each(|reason| reason(vmi, context, &mut found));
    found
}

/// The reasons the VM's spec shows on its own: no instancetype or preference, KubeVirt's default
/// configuration, the newest rules (v1.9), claims only from the VM's own templates.
pub fn non_migratable_reasons(vm: &Object) -> Findings {
    let config = Configuration::default();
    let vmi = vmi::expand(vm, Sources::default(), &config, Rules::V1_9);
    let context = Context {
        vm,
        config: &config,
        rules: Rules::V1_9,
        external_claim: &|_| None,
    };
    reasons_of(&vmi, &context)
}

/// What the reasons of a VMI need to know beyond its spec.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Needs {
    /// The cluster's configuration (default interface, binding plugins, vGPU gate and devices).
    pub(crate) configuration: bool,
    /// The KubeVirt release (GPUs, LUN reservations).
    pub(crate) version: bool,
}

/// Which reasons of `vmi` depend on the cluster's configuration or release; `rules` is the release
/// when it is already known (then a v1.8 single GPU needs no configuration).
pub(crate) fn needs(vmi: &Vmi, rules: Option<Rules>) -> Needs {
    let plugin = primary_interface(vmi).is_some_and(|i| binding_of(i) == Some("binding"));
    let one_gpu = vmi.gpus.len() == 1;
    let reservation = vmi
        .disks
        .iter()
        .any(|d| d.pointer("/lun/reservation") == Some(&Value::Bool(true)));
    Needs {
        configuration: vmi.default_interface.is_some()
            || plugin
            || (one_gpu && rules != Some(Rules::V1_8)),
        version: one_gpu || reservation,
    }
}

/// The pod network's interface (`interface.go:64-69`): `None` without interfaces, without a pod
/// network, or without an interface of its name.
fn primary_interface<'v>(vmi: &'v Vmi) -> Option<&'v Value> {
    let pod = vmi
        .networks
        .iter()
        .find(|n| member(Some(n), "pod").is_some())?;
    vmi.interfaces
        .iter()
        .find(|i| i.get("name") == pod.get("name"))
}

/// `InterfaceNotLiveMigratable` (`pkg/network/vmispec/interface.go:58-88`, the same in v1.8.4):
/// the pod network's interface must be `masquerade`, `passtBinding`, `bridge` with the VMI
/// annotation, or a binding plugin whose CR entry has `migration`.
fn interface_not_live_migratable(vmi: &Vmi, context: &Context, found: &mut Findings) {
    const REASON: ReasonKind = ReasonKind::InterfaceNotLiveMigratable;
    if vmi.interfaces.is_empty() {
        return;
    }
    let Some(pod) = vmi
        .networks
        .iter()
        .find(|n| member(Some(n), "pod").is_some())
    else {
        return;
    };
    let network = name_of(pod);
    let Some(interface) = primary_interface(vmi) else {
        found.reasons.push(Reason::new(
            REASON,
            format!("no interface for pod network \"{network}\""),
        ));
        return;
    };
    let what = match binding_of(interface) {
        Some("masquerade" | "passtBinding") => return,
        Some("bridge") if vmi.annotations.contains_key(ALLOW_POD_BRIDGE) => return,
        Some("binding") => {
            let plugin = interface
                .pointer("/binding/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if context.config.plugin_migrates(plugin) {
                return;
            }
            format!("binding plugin \"{plugin}\" without migration")
        }
        Some(binding) => binding.to_owned(),
        None => "no binding".to_owned(),
    };
    let default = match vmi.default_interface {
        Some(_) => " (default interface)",
        None => "",
    };
    found.reasons.push(Reason::new(
        REASON,
        format!("{what} on pod network \"{network}\"{default}"),
    ));
}

/// `CPUModeLiveMigratable` (`vm.go:2441-2450`): a `host-model` CPU cannot migrate from a node
/// whose host model is unknown. Node-dependent: a warning only.
fn cpu_mode_live_migratable(vmi: &Vmi, _: &Context, found: &mut Findings) {
    if vmi.cpu_model.as_deref() == Some("host-model") {
        found.node.push(Reason::new(
            ReasonKind::CPUModeLiveMigratable,
            "host-model CPU, if the node has no host model",
        ));
    }
}

/// `HostDeviceNotLiveMigratable`: v1.9.0 `vm.go:1304-1323` (host devices; more than one GPU; one
/// GPU without the `VGPULiveMigration` gate or not a permitted mediated device); v1.8.4
/// `vm.go:1243-1245` (any host device or GPU).
fn host_device_not_live_migratable(vmi: &Vmi, context: &Context, found: &mut Findings) {
    const REASON: ReasonKind = ReasonKind::HostDeviceNotLiveMigratable;
    for device in vmi.host_devices.iter() {
        found.reasons.push(Reason::new(
            REASON,
            format!("host device {}", name_of(device)),
        ));
    }
    match (context.rules, &*vmi.gpus) {
        (_, []) => {}
        (Rules::V1_8, gpus) => {
            for gpu in gpus {
                found
                    .reasons
                    .push(Reason::new(REASON, format!("GPU {}", name_of(gpu))));
            }
        }
        (Rules::V1_9, [gpu]) => {
            let name = name_of(gpu);
            let device = gpu.get("deviceName").and_then(Value::as_str);
            if !context.config.gate(VGPU_GATE) {
                found.reasons.push(Reason::new(
                    REASON,
                    format!("GPU {name} without gate {VGPU_GATE}"),
                ));
            } else if !device.is_some_and(|d| context.config.is_mdev(d)) {
                found.reasons.push(Reason::new(
                    REASON,
                    format!("GPU {name} is not a permitted mediated device"),
                ));
            }
        }
        (Rules::V1_9, gpus) => {
            let names: Vec<String> = gpus.iter().map(name_of).collect();
            found.reasons.push(Reason::new(
                REASON,
                format!(
                    "{} GPUs ({}), at most one migrates",
                    gpus.len(),
                    names.join(", ")
                ),
            ));
        }
    }
}

/// `SEVNotLiveMigratable` (`launchSecurity.sev` or `.snp`), else `TDXNotLiveMigratable`
/// (`launchSecurity.tdx`): `pkg/util/amd64.go:22-27`, `62-64`; `vm.go:1264-1268`.
fn sev_or_tdx_not_live_migratable(vmi: &Vmi, _: &Context, found: &mut Findings) {
    let security = vmi.launch_security;
    if let Some(kind) = ["sev", "snp"]
        .into_iter()
        .find(|k| member(security, k).is_some())
    {
        found.reasons.push(Reason::new(
            ReasonKind::SEVNotLiveMigratable,
            format!("launch security {kind}"),
        ));
    } else if member(security, "tdx").is_some() {
        found.reasons.push(Reason::new(
            ReasonKind::TDXNotLiveMigratable,
            "launch security tdx",
        ));
    }
}

/// `SecureExecutionNotLiveMigratable` (`pkg/util/s390x.go:22-24`): any `launchSecurity` on s390x.
fn secure_execution_not_live_migratable(vmi: &Vmi, _: &Context, found: &mut Findings) {
    if vmi.launch_security.is_some() && vmi.architecture.as_deref() == Some("s390x") {
        found.reasons.push(Reason::new(
            ReasonKind::SecureExecutionNotLiveMigratable,
            "launch security on s390x",
        ));
    }
}

/// `PersistentReservationNotLiveMigratable`, through v1.8.x only (v1.8.4 `vm.go:1221-1223`,
/// `pkg/storage/reservation/pr.go:60-67`): a LUN disk with `reservation: true`.
fn persistent_reservation_not_live_migratable(vmi: &Vmi, context: &Context, found: &mut Findings) {
    if context.rules != Rules::V1_8 {
        return;
    }
    for disk in vmi.disks.iter() {
        if disk.pointer("/lun/reservation") == Some(&Value::Bool(true)) {
            found.reasons.push(Reason::new(
                ReasonKind::PersistentReservationNotLiveMigratable,
                format!("LUN {} with reservation", name_of(disk)),
            ));
        }
    }
}

/// `NoTSCFrequencyNotLiveMigratable` (`pkg/virt-controller/watch/topology/tsc.go:135-174`,
/// `vm.go:1274-1276`): Hyper-V reenlightenment (enabled unless `enabled: false`) without an
/// `invtsc` feature of policy `require`/`force`, on a cluster whose TSC frequency may be unknown.
/// Node-dependent unless `minimumClusterTSCFrequency` is set (then never): a warning only.
fn no_tsc_frequency_not_live_migratable(vmi: &Vmi, context: &Context, found: &mut Findings) {
    let invtsc = vmi.cpu_features.iter().any(|f| {
        f.get("name").and_then(Value::as_str) == Some("invtsc")
            && matches!(
                f.get("policy").and_then(Value::as_str),
                Some("require" | "force")
            )
    });
    let reenlightenment = vmi
        .hyperv
        .get("reenlightenment")
        .filter(|r| r.is_object())
        .is_some_and(|r| r.get("enabled") != Some(&Value::Bool(false)));
    if reenlightenment && !invtsc && !context.config.tsc_frequency_known() {
        found.node.push(Reason::new(
            ReasonKind::NoTSCFrequencyNotLiveMigratable,
            "Hyper-V reenlightenment, if no TSC frequency is known",
        ));
    }
}

/// `HypervPassthroughNotLiveMigratable` (`vm.go:1278-1280`): `features.hypervPassthrough.enabled`.
fn hyperv_passthrough_not_live_migratable(vmi: &Vmi, _: &Context, found: &mut Findings) {
    let enabled = vmi
        .hyperv_passthrough
        .as_ref()
        .and_then(|p| p.get("enabled"));
    if enabled == Some(&Value::Bool(true)) {
        found.reasons.push(Reason::new(
            ReasonKind::HypervPassthroughNotLiveMigratable,
            "Hyper-V passthrough",
        ));
    }
}

/// `DisksNotLiveMigratable` (`vm.go:1849-1925`, the same in v1.8.4): in volume order, each
/// `persistentVolumeClaim` / `dataVolume` whose claim's access modes are known and lack
/// `ReadWriteMany`, each `hostDisk` without `shared: true`. Every other source is at most a block
/// migration. The modes come from the VM's `dataVolumeTemplates`, Harvester's
/// `volumeClaimTemplates` annotation, else the cluster ([`Context::external_claim`]).
fn disks_not_live_migratable(_: &Vmi, context: &Context, found: &mut Findings) {
    const REASON: ReasonKind = ReasonKind::DisksNotLiveMigratable;
    let vm = context.vm;
    let templated = claim_templates(vm, found);
    let mut seen: Vec<&str> = Vec::new();
    for volume in vm::template_spec_items(vm, "volumes") {
        if let Some(disk) = member(Some(volume), "hostDisk") {
            if disk.get("shared") != Some(&Value::Bool(true)) {
                found.reasons.push(Reason::new(
                    REASON,
                    format!("hostDisk {} not shared", name_of(volume)),
                ));
            }
            continue;
        }
        let Some(claim) = claim_name(volume) else {
            continue;
        };
        if seen.contains(&claim) {
            continue;
        }
        seen.push(claim);
        let modes = match templated.iter().find(|(name, _)| name == claim) {
            Some((_, modes)) => modes.clone(),
            None => (context.external_claim)(claim),
        };
        if let Some(modes) = modes.filter(|m| !m.iter().any(|m| m == "ReadWriteMany")) {
            let shown = match modes.as_slice() {
                [] => "no access modes".to_owned(),
                modes => modes.join(", "),
            };
            found
                .reasons
                .push(Reason::new(REASON, format!("volume {claim} ({shown})")));
        }
    }
}

/// The claim a `persistentVolumeClaim` or `dataVolume` volume mounts (CDI names the PVC after its
/// DataVolume, `vm.go:1870-1875`).
fn claim_name(volume: &Value) -> Option<&str> {
    volume
        .pointer("/persistentVolumeClaim/claimName")
        .or_else(|| volume.pointer("/dataVolume/name"))
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
}

/// The VM's own claim templates: `spec.dataVolumeTemplates` (`spec.pvc.accessModes`, else
/// `spec.storage.accessModes`) and Harvester's `volumeClaimTemplates` annotation; modes `None`
/// where the template leaves them to the storage profile. A malformed annotation is a warning.
fn claim_templates(vm: &Object, found: &mut Findings) -> Vec<(String, Option<Vec<String>>)> {
    let modes_of = |modes: Option<&Value>| {
        modes.and_then(Value::as_array).map(|m| {
            m.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
    };
    let mut templates = Vec::new();
    for dv in vm::data_volume_templates(vm) {
        let spec = dv.get("spec");
        let modes = spec
            .and_then(|s| s.pointer("/pvc/accessModes"))
            .or_else(|| spec.and_then(|s| s.pointer("/storage/accessModes")));
        if let Some(name) = dv.pointer("/metadata/name").and_then(Value::as_str) {
            templates.push((name.to_owned(), modes_of(modes)));
        }
    }
    if let Some(raw) = vm::annotation(vm, VOLUME_CLAIM_TEMPLATES) {
        match raw.as_str().map(serde_json::from_str::<Vec<Value>>) {
            Some(Ok(claims)) => {
                for claim in &claims {
                    if let Some(name) = claim.pointer("/metadata/name").and_then(Value::as_str) {
                        templates.push((
                            name.to_owned(),
                            modes_of(claim.pointer("/spec/accessModes")),
                        ));
                    }
                }
            }
            _ => found.warnings.push(format!(
                "metadata.annotations[{VOLUME_CLAIM_TEMPLATES}]: not a JSON list of PVC templates; not checked"
            )),
        }
    }
    templates
}

/// The claims the spec does not describe: each claim of `spec.template.spec.volumes`, in volume
/// order, that is none of the VM's own templates. Each name once.
pub(crate) fn external_claims(vm: &Object) -> Vec<&str> {
    let templated = claim_templates(vm, &mut Findings::default());
    let mut claims: Vec<&str> = Vec::new();
    for volume in vm::template_spec_items(vm, "volumes") {
        if let Some(name) = claim_name(volume)
            .filter(|n| !templated.iter().any(|(t, _)| t == n) && !claims.contains(n))
        {
            claims.push(name);
        }
    }
    claims
}

/// Whether the VM names an instancetype or a preference.
pub(crate) fn names_instancetype(vm: &Object) -> bool {
    let spec = vm.get("spec");
    member(spec, "instancetype").is_some() || member(spec, "preference").is_some()
}
