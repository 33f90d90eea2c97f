//! The VMI KubeVirt builds from a VM, as far as migratability reads it (docs/rules.md, "The VM as
//! KubeVirt runs it"): the template, the default pod interface (`pkg/network/vmispec/defaults.go`),
//! the instancetype (`pkg/instancetype/apply`) and the preference
//! (`pkg/instancetype/preference/apply`), applied in the order of the VM controller's `startVMI`
//! (`pkg/virt-controller/watch/vm/vm.go:1283-1318`). Only the parts the reasons read are copied.

use std::borrow::Cow;

use crate::configuration::{Configuration, Rules};
use crate::object::view::{Field, List, Scalar, Seen, view};
use crate::object::vm::{
    self, Cpu, CpuFeature, Device, Disk, Hyperv, Interface, Labels, LaunchSecurity, Network,
    Toggle, Whole,
};

/// The expanded VMI: every list and field the reasons of `migratability` read. It borrows the
/// VM's (and the instancetype's and preference's) lists and maps, and owns only what expansion
/// changed: a VM with 2,000 disks is not copied.
#[derive(Debug, Default)]
pub(crate) struct Vmi<'a> {
    /// `metadata.annotations`: the template's, then the instancetype's, then the preference's.
    pub(crate) annotations: Cow<'a, Labels<'a>>,
    pub(crate) interfaces: Cow<'a, [Interface<'a>]>,
    pub(crate) networks: Cow<'a, [Network<'a>]>,
    /// The binding of the default pod interface, when KubeVirt adds it.
    pub(crate) default_interface: Option<String>,
    pub(crate) host_devices: Cow<'a, [Device<'a>]>,
    pub(crate) gpus: Cow<'a, [Device<'a>]>,
    pub(crate) disks: Cow<'a, [Disk<'a>]>,
    /// `launchSecurity` when set (not `null`); its members only when it is an object.
    pub(crate) launch_security: Option<&'a Field<LaunchSecurity<'a>>>,
    pub(crate) architecture: Option<String>,
    /// `domain.cpu.model` as the VM or its instancetype set it (KubeVirt's own default,
    /// `host-model`, is not recorded: see docs/rules.md "Migratability as KubeVirt computes it").
    pub(crate) cpu_model: Option<String>,
    pub(crate) cpu_features: Cow<'a, [CpuFeature<'a>]>,
    /// `domain.features.hyperv`, after the preference's `preferredHyperv`.
    pub(crate) hyperv: Cow<'a, Hyperv<'a>>,
    pub(crate) hyperv_passthrough: Option<&'a Toggle<'a>>,
    /// Fields the instancetype sets that the VM sets too: KubeVirt rejects such a VM and applies
    /// neither the instancetype nor the preference (`apply/vmi.go:70-72`).
    pub(crate) conflicts: Vec<&'static str>,
}

view! {
    /// An instancetype's `spec`, as far as expansion reads it.
    Instancetype<'a> {
        "gpus" => gpus: List<Device<'a>>,
        "hostDevices" => host_devices: List<Device<'a>>,
        "launchSecurity" => launch_security: Field<LaunchSecurity<'a>>,
        "cpu" => cpu: Field<Cpu<'a>>,
        "annotations" => annotations: Field<Labels<'a>>,
    }
}

view! {
    /// A preference's `spec`, as far as expansion reads it.
    Preference<'a> {
        "devices" => devices: Field<PreferredDevices<'a>>,
        "features" => features: Field<PreferredFeatures<'a>>,
        "cpu" => cpu: Field<PreferredCpu<'a>>,
        "preferredLaunchSecurity" => preferred_launch_security: Field<LaunchSecurity<'a>>,
        "preferredArchitecture" => preferred_architecture: Option<Scalar<'a>>,
        "annotations" => annotations: Field<Labels<'a>>,
    }
}

view! {
    PreferredDevices<'a> {
        "preferredInterfaceMasquerade" => preferred_interface_masquerade: Seen,
        "preferredAutoattachPodInterface" => preferred_autoattach_pod_interface: Option<Scalar<'a>>,
    }
}

view! {
    PreferredFeatures<'a> {
        "preferredHyperv" => preferred_hyperv: Field<Hyperv<'a>>,
    }
}

view! {
    PreferredCpu<'a> {
        "preferredCPUFeatures" => preferred_cpu_features: List<CpuFeature<'a>>,
    }
}

/// The instancetype's and preference's `spec`, when the VM names them and they were read.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Sources<'a> {
    pub(crate) instancetype: Option<&'a Instancetype<'a>>,
    pub(crate) preference: Option<&'a Preference<'a>>,
}

fn non_null<'v>(value: &'v Option<Scalar<'v>>) -> Option<&'v Scalar<'v>> {
    value.as_ref().filter(|v| **v != Scalar::Null)
}

fn string(value: &Option<Scalar>) -> Option<String> {
    value
        .as_ref()
        .and_then(Scalar::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn set(field: &Field<LaunchSecurity>) -> bool {
    field.is_set()
}

/// Builds the VMI of `vm` under `config` (`rules`: `preferredLaunchSecurity` exists from v1.9).
pub(crate) fn expand<'a>(
    whole: Whole<'a, 'a>,
    sources: Sources<'a>,
    config: &Configuration,
    rules: Rules,
) -> Vmi<'a> {
    let vm = whole.vm();
    // Without `spec.template.spec` there is no VMI to build (KubeVirt refuses such a VM).
    let Some(spec) = vm.template_spec() else {
        return Vmi::default();
    };
    let domain = whole.domain();
    let networks = whole.networks();
    let devices = domain.and_then(|d| d.devices.get());
    let cpu = domain.and_then(|d| d.cpu.get());
    let features = domain.and_then(|d| d.features.get());
    let annotations = vm
        .template()
        .and_then(|t| t.metadata.get()?.annotations.get());
    let mut vmi = Vmi {
        annotations: annotations.map_or_else(Cow::default, Cow::Borrowed),
        interfaces: Cow::Borrowed(devices.map_or(&[], |d| &d.interfaces.items)),
        networks: Cow::Borrowed(networks.map_or(&[], |n| &n.items)),
        host_devices: Cow::Borrowed(devices.map_or(&[], |d| &d.host_devices.items)),
        gpus: Cow::Borrowed(devices.map_or(&[], |d| &d.gpus.items)),
        disks: Cow::Borrowed(devices.map_or(&[], |d| &d.disks.items)),
        launch_security: domain.map(|d| &d.launch_security).filter(|s| set(s)),
        architecture: string(&spec.architecture),
        cpu_model: cpu.and_then(|c| string(&c.model)),
        cpu_features: Cow::Borrowed(cpu.map_or(&[], |c| &c.features.items)),
        hyperv: features
            .and_then(|f| f.hyperv.get())
            .map_or_else(Cow::default, Cow::Borrowed),
        hyperv_passthrough: features.and_then(|f| f.hyperv_passthrough.get()),
        ..Vmi::default()
    };
    let preference = sources.preference;
    let pref_devices = preference.and_then(|p| p.devices.get());

    // ApplyAutoAttachPreferences, then SetDefaultNetworkInterface (defaults.go:33-58).
    let autoattach = devices
        .and_then(|d| non_null(&d.autoattach_pod_interface))
        .or_else(|| pref_devices.and_then(|d| non_null(&d.preferred_autoattach_pod_interface)));
    let unset = |list: Option<&List<_>>| list.is_none_or(|l: &List<_>| !l.set);
    if autoattach != Some(&Scalar::Bool(false))
        && unset(devices.map(|d| &d.interfaces))
        && !networks.is_some_and(|n| n.set)
    {
        let binding = config.default_interface().to_owned();
        let mut interface = Interface {
            name: Some(Scalar::str("default")),
            ..Interface::default()
        };
        interface.set_binding(&binding);
        vmi.interfaces = Cow::Owned(vec![interface]);
        vmi.networks = Cow::Owned(vec![Network {
            name: Some(Scalar::str("default")),
            pod: Seen(true),
            ..Network::default()
        }]);
        vmi.default_interface = Some(binding);
    }

    if let Some(instancetype) = sources.instancetype {
        vmi.conflicts = conflicts(&vmi, instancetype);
        if !vmi.conflicts.is_empty() {
            return vmi;
        }
        apply_instancetype(&mut vmi, instancetype);
    }
    if let Some(preference) = preference {
        apply_preference(&mut vmi, preference, rules);
    }
    vmi
}

/// The instancetype fields the VM sets too (`apply/gpu.go:37-39`, `hostdevices.go:37-39`,
/// `launchsecurity.go:37-39`, `cpu.go:136-138`, `annotations.go:33-38`).
fn conflicts(vmi: &Vmi, instancetype: &Instancetype) -> Vec<&'static str> {
    let mut found = Vec::new();
    if !instancetype.gpus.items.is_empty() && !vmi.gpus.is_empty() {
        found.push("gpus");
    }
    if !instancetype.host_devices.items.is_empty() && !vmi.host_devices.is_empty() {
        found.push("hostDevices");
    }
    if set(&instancetype.launch_security) && vmi.launch_security.is_some() {
        found.push("launchSecurity");
    }
    let model = instancetype.cpu.get().and_then(|c| string(&c.model));
    if model.is_some() && vmi.cpu_model.is_some() {
        found.push("cpu.model");
    }
    let differs = instancetype.annotations.get().is_some_and(|a| {
        a.entries()
            .any(|(k, v)| vmi.annotations.get(k).is_some_and(|own| own != v))
    });
    if differs {
        found.push("annotations");
    }
    found
}

/// `pkg/instancetype/apply/vmi.go:46-78`: gpus, hostDevices, launchSecurity, cpu.model and
/// annotations, each only where the VM sets none (a conflict was ruled out before).
fn apply_instancetype<'a>(vmi: &mut Vmi<'a>, instancetype: &'a Instancetype<'a>) {
    if vmi.gpus.is_empty() {
        vmi.gpus = Cow::Borrowed(&instancetype.gpus.items);
    }
    if vmi.host_devices.is_empty() {
        vmi.host_devices = Cow::Borrowed(&instancetype.host_devices.items);
    }
    if vmi.launch_security.is_none() {
        vmi.launch_security = Some(&instancetype.launch_security).filter(|s| set(s));
    }
    if vmi.cpu_model.is_none() {
        vmi.cpu_model = instancetype.cpu.get().and_then(|c| string(&c.model));
    }
    add_annotations(vmi, &instancetype.annotations);
}

/// Keys of `source.annotations` the VMI does not have yet.
fn add_annotations<'a>(vmi: &mut Vmi<'a>, source: &'a Field<Labels<'a>>) {
    for (key, value) in source.get().into_iter().flat_map(|a| a.entries()) {
        if !vmi.annotations.contains_key(key) {
            vmi.annotations
                .to_mut()
                .insert(Cow::Borrowed(key), value.clone());
        }
    }
}

/// `pkg/instancetype/preference/apply/vmi.go:34-54`: every field only where the VMI leaves it unset.
fn apply_preference<'a>(vmi: &mut Vmi<'a>, preference: &'a Preference<'a>, rules: Rules) {
    // devices.preferredInterfaceMasquerade (interface.go:28-53): an interface without any binding
    // on the pod network gets masquerade.
    let masquerade = preference
        .devices
        .get()
        .is_some_and(|d| d.preferred_interface_masquerade.0);
    if masquerade {
        let pod_networks: Vec<&Scalar> = vmi
            .networks
            .iter()
            .filter(|n| n.pod.0)
            .filter_map(|n| n.name.as_ref())
            .collect();
        let gets_masquerade = |interface: &Interface| {
            let on_pod = interface
                .name
                .as_ref()
                .is_some_and(|name| pod_networks.contains(&name));
            on_pod && interface.binding().is_none()
        };
        let changed: Vec<bool> = vmi.interfaces.iter().map(gets_masquerade).collect();
        if changed.contains(&true) {
            for (interface, changed) in vmi.interfaces.to_mut().iter_mut().zip(changed) {
                if changed {
                    interface.masquerade = Seen(true);
                }
            }
        }
    }
    // features.preferredHyperv (features.go:62-123): each sub-feature the VMI leaves unset.
    let preferred = preference
        .features
        .get()
        .and_then(|f| f.preferred_hyperv.get());
    for (key, value) in preferred.into_iter().flat_map(|h| h.entries()) {
        if !vmi.hyperv.get(key).is_some_and(Field::is_set) {
            vmi.hyperv
                .to_mut()
                .insert(Cow::Borrowed(key), value.clone());
        }
    }
    // cpu.preferredCPUFeatures (cpu.go:26-40): features of names the VMI does not list.
    let preferred = preference
        .cpu
        .get()
        .map_or(&[][..], |c| &c.preferred_cpu_features.items);
    for feature in preferred {
        if !vmi.cpu_features.iter().any(|f| f.name == feature.name) {
            vmi.cpu_features.to_mut().push(feature.clone());
        }
    }
    // preferredLaunchSecurity (launchsecurity.go:26-32), v1.9.0 on.
    if rules >= Rules::V1_9 && vmi.launch_security.is_none() {
        vmi.launch_security = Some(&preference.preferred_launch_security).filter(|s| set(s));
    }
    // preferredArchitecture (architecture.go:26-34), v1.7.0 on (v1.6 has no such field).
    if rules >= Rules::V1_7 && vmi.architecture.is_none() {
        vmi.architecture = string(&preference.preferred_architecture);
    }
    add_annotations(vmi, &preference.annotations);
}

/// KubeVirt's binding methods of an interface (`api/schema.go:1553-1571`), then `binding`.
pub(crate) const BINDINGS: [&str; 8] = [
    "bridge",
    "slirp",
    "masquerade",
    "sriov",
    "macvtap",
    "passt",
    "passtBinding",
    "binding",
];

impl<'a> Interface<'a> {
    fn bindings(&self) -> [bool; 8] {
        [
            self.bridge.0,
            self.slirp.0,
            self.masquerade.0,
            self.sriov.0,
            self.macvtap.0,
            self.passt.0,
            self.passt_binding.0,
            self.binding.is_set(),
        ]
    }

    /// The binding an interface sets (the first of [`BINDINGS`] that is present and not `null`).
    pub(crate) fn binding(&self) -> Option<&'static str> {
        BINDINGS
            .into_iter()
            .zip(self.bindings())
            .find_map(|(name, on)| on.then_some(name))
    }

    /// The name of the binding plugin (`binding.name`; empty when unset).
    pub(crate) fn plugin(&self) -> &str {
        self.binding
            .get()
            .and_then(|b| b.name.as_ref())
            .and_then(Scalar::as_str)
            .unwrap_or_default()
    }

    /// Sets the binding method `name` (`{}`); nothing for a name KubeVirt does not know.
    fn set_binding(&mut self, name: &str) {
        match name {
            "bridge" => self.bridge = Seen(true),
            "slirp" => self.slirp = Seen(true),
            "masquerade" => self.masquerade = Seen(true),
            "sriov" => self.sriov = Seen(true),
            "macvtap" => self.macvtap = Seen(true),
            "passt" => self.passt = Seen(true),
            "passtBinding" => self.passt_binding = Seen(true),
            "binding" => self.binding = Field::Object(vm::Named::default()),
            _ => {}
        }
    }
}
