//! Why KubeVirt will mark a VM's VMI `LiveMigratable=False` (KubeVirt v1.9.0
//! `pkg/virt-handler/vm.go` `calculateLiveMigrationCondition`, 1247-1290; v1.8.4 1195-1241;
//! docs/rules.md, V7). One function per KubeVirt reason constant, in KubeVirt's check order, each
//! adding phrases that start with the constant (`HostDeviceNotLiveMigratable: host device nic-vf`)
//! and name the device, disk or interface. KubeVirt names the first reason; the policy names all.

use serde_json::Value;

use crate::configuration::{Configuration, Rules};
use crate::listing::listed;
use crate::object::view::{self, Scalar};
use crate::object::vm::{self, Disk, Interface, Whole, name_of};
use crate::reason::{Reason, ReasonKind};
use crate::rules::vmi::{self, Sources, Vmi};

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
    pub(crate) vm: Whole<'a, 'a>,
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
pub fn non_migratable_reasons(vm: &Value) -> Findings {
    let text = vm.to_string();
    let vm = match crate::object::vm::parse_whole(&text) {
        Ok(vm) => vm,
        Err(why) => {
            return Findings {
                warnings: vec![format!("the VM cannot be read: {why}")],
                ..Findings::default()
            };
        }
    };
    let vm = vm.whole().unwrap_or_else(Whole::empty);
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
    let plugin = primary_interface(vmi).is_some_and(|i| i.binding() == Some("binding"));
    let one_gpu = vmi.gpus.len() == 1;
    let reservation = vmi.disks.iter().any(reserved);
    // What v1.6 and v1.7 prune (`passtBinding`, `snp`, `tdx`) is no reason to read the release:
    // an unknown release is v1.9 (docs/rules.md).
    Needs {
        configuration: vmi.default_interface.is_some()
            || plugin
            || (one_gpu && rules.is_none_or(|r| r >= Rules::V1_9)),
        version: one_gpu || reservation,
    }
}

/// The pod network's interface (`interface.go:64-69`): `None` without interfaces, without a pod
/// network, or without an interface of its name.
fn primary_interface<'v>(vmi: &'v Vmi) -> Option<&'v Interface<'v>> {
    let pod = vmi.networks.iter().find(|n| n.pod.0)?;
    vmi.interfaces.iter().find(|i| i.name == pod.name)
}

/// A LUN disk with `reservation: true`.
fn reserved(disk: &Disk) -> bool {
    disk.lun
        .get()
        .is_some_and(|l| l.reservation == Some(Scalar::Bool(true)))
}

/// `InterfaceNotLiveMigratable` (`pkg/network/vmispec/interface.go:58-88`, the same in v1.8.4):
/// the pod network's interface must be `masquerade`, `passtBinding`, `bridge` with the VMI
/// annotation, or a binding plugin whose CR entry has `migration`.
fn interface_not_live_migratable(vmi: &Vmi, context: &Context, found: &mut Findings) {
    const REASON: ReasonKind = ReasonKind::InterfaceNotLiveMigratable;
    if vmi.interfaces.is_empty() {
        return;
    }
    let Some(pod) = vmi.networks.iter().find(|n| n.pod.0) else {
        return;
    };
    let network = name_of(&pod.name, &pod.device_name);
    let Some(interface) = primary_interface(vmi) else {
        found.reasons.push(Reason::new(
            REASON,
            format!("no interface for pod network \"{network}\""),
        ));
        return;
    };
    let what = match interface.binding() {
        Some("masquerade") => return,
        // v1.6 and v1.7 have no `passtBinding`: the API server prunes it, no binding is left.
        Some("passtBinding") if context.rules < Rules::V1_8 => "no binding".to_owned(),
        Some("passtBinding") => return,
        Some("bridge") if vmi.annotations.contains_key(ALLOW_POD_BRIDGE) => return,
        Some("binding") => {
            let plugin = interface.plugin();
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
            format!("host device {}", name_of(&device.name, &device.device_name)),
        ));
    }
    match (context.rules, &*vmi.gpus) {
        (_, []) => {}
        (rules, gpus) if rules < Rules::V1_9 => {
            for gpu in gpus {
                found.reasons.push(Reason::new(
                    REASON,
                    format!("GPU {}", name_of(&gpu.name, &gpu.device_name)),
                ));
            }
        }
        (_, [gpu]) => {
            let name = name_of(&gpu.name, &gpu.device_name);
            let device = gpu.device_name.as_ref().and_then(Scalar::as_str);
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
        (_, gpus) => {
            let names: Vec<String> = gpus
                .iter()
                .map(|g| name_of(&g.name, &g.device_name))
                .collect();
            found.reasons.push(Reason::new(
                REASON,
                format!(
                    "{} GPUs ({}), at most one migrates",
                    gpus.len(),
                    listed(&names, ", ")
                ),
            ));
        }
    }
}

/// `SEVNotLiveMigratable` (`launchSecurity.sev` or `.snp`), else `TDXNotLiveMigratable`
/// (`launchSecurity.tdx`): `pkg/util/amd64.go:22-27`, `62-64`; `vm.go:1264-1268`.
fn sev_or_tdx_not_live_migratable(vmi: &Vmi, context: &Context, found: &mut Findings) {
    let Some(security) = vmi.launch_security.and_then(|s| s.get()) else {
        return;
    };
    // v1.6 knows only `sev` (v1.6.6 `amd64.go:22-24`): the API server prunes `snp` and `tdx`.
    let newer = context.rules >= Rules::V1_7;
    if let Some(kind) = [("sev", security.sev), ("snp", security.snp)]
        .into_iter()
        .find_map(|(kind, seen)| (seen.0 && (kind == "sev" || newer)).then_some(kind))
    {
        found.reasons.push(Reason::new(
            ReasonKind::SEVNotLiveMigratable,
            format!("launch security {kind}"),
        ));
    } else if security.tdx.0 && newer {
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
/// `pkg/storage/reservation/pr.go:60-67`; v1.7.4 `vm.go:1211-1213`, v1.6.6 `vm.go:1210-1212`): a
/// LUN disk with `reservation: true`.
fn persistent_reservation_not_live_migratable(vmi: &Vmi, context: &Context, found: &mut Findings) {
    if context.rules >= Rules::V1_9 {
        return;
    }
    for disk in vmi.disks.iter() {
        if reserved(disk) {
            found.reasons.push(Reason::new(
                ReasonKind::PersistentReservationNotLiveMigratable,
                format!(
                    "LUN {} with reservation",
                    name_of(&disk.name, &disk.device_name)
                ),
            ));
        }
    }
}

/// `NoTSCFrequencyNotLiveMigratable` (`pkg/virt-controller/watch/topology/tsc.go:135-174`,
/// `vm.go:1274-1276`): Hyper-V reenlightenment (enabled unless `enabled: false`) without an
/// `invtsc` feature of policy `require`/`force`, on a cluster whose TSC frequency may be unknown.
/// Node-dependent unless `minimumClusterTSCFrequency` is set (then never): a warning only.
fn no_tsc_frequency_not_live_migratable(vmi: &Vmi, context: &Context, found: &mut Findings) {
    let text = |value: &Option<Scalar>| value.as_ref().and_then(Scalar::as_str).map(str::to_owned);
    let invtsc = vmi.cpu_features.iter().any(|f| {
        text(&f.name).as_deref() == Some("invtsc")
            && matches!(text(&f.policy).as_deref(), Some("require" | "force"))
    });
    let reenlightenment = vmi
        .hyperv
        .get("reenlightenment")
        .and_then(|r| r.get())
        .is_some_and(|r| r.enabled != Some(Scalar::Bool(false)));
    if reenlightenment && !invtsc && !context.config.tsc_frequency_known() {
        found.node.push(Reason::new(
            ReasonKind::NoTSCFrequencyNotLiveMigratable,
            "Hyper-V reenlightenment, if no TSC frequency is known",
        ));
    }
}

/// `HypervPassthroughNotLiveMigratable` (`vm.go:1278-1280`): `features.hypervPassthrough.enabled`.
fn hyperv_passthrough_not_live_migratable(vmi: &Vmi, _: &Context, found: &mut Findings) {
    let enabled = vmi.hyperv_passthrough.and_then(|p| p.enabled.as_ref());
    if enabled == Some(&Scalar::Bool(true)) {
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
    for volume in vm.volumes() {
        if volume.host_disk.is_set() {
            let shared = volume.host_disk.get().and_then(|d| d.shared.as_ref());
            if shared != Some(&Scalar::Bool(true)) {
                found.reasons.push(Reason::new(
                    REASON,
                    format!(
                        "hostDisk {} not shared",
                        name_of(&volume.name, &volume.device_name)
                    ),
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
                modes => listed(modes, ", "),
            };
            found
                .reasons
                .push(Reason::new(REASON, format!("volume {claim} ({shown})")));
        }
    }
}

/// The claim a `persistentVolumeClaim` or `dataVolume` volume mounts (CDI names the PVC after its
/// DataVolume, `vm.go:1870-1875`).
fn claim_name<'v>(volume: &'v vm::Volume) -> Option<&'v str> {
    let claim = volume.persistent_volume_claim.get();
    claim
        .and_then(|c| c.claim_name.as_ref())
        .or_else(|| volume.data_volume.get().and_then(|d| d.name.as_ref()))
        .and_then(Scalar::as_str)
        .filter(|n| !n.is_empty())
}

/// The VM's own claim templates: `spec.dataVolumeTemplates` (`spec.pvc.accessModes`, else
/// `spec.storage.accessModes`) and Harvester's `volumeClaimTemplates` annotation; modes `None`
/// where the template leaves them to the storage profile. A malformed annotation is a warning.
fn claim_templates(vm: Whole, found: &mut Findings) -> Vec<(String, Option<Vec<String>>)> {
    let mut templates = Vec::new();
    for dv in vm.data_volume_templates() {
        let spec = dv.spec.get();
        let modes = spec
            .and_then(|s| s.pvc.get()?.access_modes.as_ref())
            .or_else(|| spec.and_then(|s| s.storage.get()?.access_modes.as_ref()));
        if let Some(name) = template_name(dv) {
            templates.push((name.to_owned(), modes_of(modes)));
        }
    }
    if let Some(raw) = vm.annotation(VOLUME_CLAIM_TEMPLATES) {
        let claims = raw.as_str().map(view::parse_array::<vm::ClaimTemplate>);
        match claims {
            Some(Ok(claims)) => {
                for claim in &claims {
                    if let Some(name) = template_name(claim) {
                        let modes = claim.spec.get().and_then(|s| s.access_modes.as_ref());
                        templates.push((name.to_owned(), modes_of(modes)));
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

/// `metadata.name` of a claim template, when a string.
fn template_name<'v>(template: &'v vm::ClaimTemplate) -> Option<&'v str> {
    template.metadata.get()?.name.as_ref()?.as_str()
}

/// The access modes of a template: `None` unless a list; its strings.
fn modes_of(modes: Option<&Scalar>) -> Option<Vec<String>> {
    match modes {
        Some(Scalar::Array(modes)) => Some(
            modes
                .iter()
                .filter_map(Scalar::as_str)
                .map(str::to_owned)
                .collect(),
        ),
        _ => None,
    }
}

/// The claims the spec does not describe: each claim of `spec.template.spec.volumes`, in volume
/// order, that is none of the VM's own templates. Each name once.
pub(crate) fn external_claims<'v>(vm: Whole<'v, '_>) -> Vec<&'v str> {
    let templated = claim_templates(vm, &mut Findings::default());
    let mut claims: Vec<&str> = Vec::new();
    for volume in vm.volumes() {
        if let Some(name) = claim_name(volume)
            .filter(|n| !templated.iter().any(|(t, _)| t == n) && !claims.contains(n))
        {
            claims.push(name);
        }
    }
    claims
}

/// Whether the VM names an instancetype or a preference.
pub(crate) fn names_instancetype(vm: &crate::object::vm::Vm) -> bool {
    vm.spec()
        .is_some_and(|s| s.instancetype.is_set() || s.preference.is_set())
}
