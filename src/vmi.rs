//! The VMI KubeVirt builds from a VM, as far as migratability reads it (docs/rules.md, "The VM as
//! KubeVirt runs it"): the template, the default pod interface (`pkg/network/vmispec/defaults.go`),
//! the instancetype (`pkg/instancetype/apply`) and the preference
//! (`pkg/instancetype/preference/apply`), applied in the order of the VM controller's `startVMI`
//! (`pkg/virt-controller/watch/vm/vm.go:1283-1318`). Only the parts the reasons read are copied.

use std::borrow::Cow;

use serde_json::{Value, json};

use crate::configuration::{Configuration, Rules};
use crate::json::{Object, items, member};
use crate::vm;

/// The expanded VMI: every list and field the reasons of `migratability` read. It borrows the
/// VM's (and the instancetype's and preference's) lists and maps, and owns only what expansion
/// changed: a VM with 2,000 disks is not copied.
#[derive(Debug, Default)]
pub(crate) struct Vmi<'a> {
    /// `metadata.annotations`: the template's, then the instancetype's, then the preference's.
    pub(crate) annotations: Cow<'a, Object>,
    pub(crate) interfaces: Cow<'a, [Value]>,
    pub(crate) networks: Cow<'a, [Value]>,
    /// The binding of the default pod interface, when KubeVirt adds it.
    pub(crate) default_interface: Option<String>,
    pub(crate) host_devices: Cow<'a, [Value]>,
    pub(crate) gpus: Cow<'a, [Value]>,
    pub(crate) disks: Cow<'a, [Value]>,
    pub(crate) launch_security: Option<&'a Value>,
    pub(crate) architecture: Option<String>,
    /// `domain.cpu.model` as the VM or its instancetype set it (KubeVirt's own default,
    /// `host-model`, is not recorded: see README "Choices").
    pub(crate) cpu_model: Option<String>,
    pub(crate) cpu_features: Cow<'a, [Value]>,
    /// `domain.features.hyperv`, after the preference's `preferredHyperv`.
    pub(crate) hyperv: Cow<'a, Object>,
    pub(crate) hyperv_passthrough: Option<&'a Value>,
    /// Fields the instancetype sets that the VM sets too: KubeVirt rejects such a VM and applies
    /// neither the instancetype nor the preference (`apply/vmi.go:70-72`).
    pub(crate) conflicts: Vec<&'static str>,
}

/// The instancetype's and preference's `spec`, when the VM names them and they were read.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Sources<'a> {
    pub(crate) instancetype: Option<&'a Value>,
    pub(crate) preference: Option<&'a Value>,
}

fn non_null(value: Option<&Value>) -> Option<&Value> {
    value.filter(|v| !v.is_null())
}

fn string(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// Builds the VMI of `vm` under `config` (`rules`: `preferredLaunchSecurity` exists from v1.9).
pub(crate) fn expand<'a>(
    vm: &'a Object,
    sources: Sources<'a>,
    config: &Configuration,
    rules: Rules,
) -> Vmi<'a> {
    // Without `spec.template.spec` there is no VMI to build (KubeVirt refuses such a VM).
    let Some(spec) = vm::template_spec(vm) else {
        return Vmi::default();
    };
    let spec = Some(spec);
    let domain = vm::domain(vm);
    let devices = member(domain, "devices");
    let list = |value: Option<&'a Value>, key: &str| Cow::Borrowed(items(member(value, key)));
    let map = |value: Option<&'a Value>| {
        value
            .and_then(Value::as_object)
            .map_or_else(|| Cow::Owned(Object::new()), Cow::Borrowed)
    };
    let mut vmi = Vmi {
        annotations: map(vm::template(vm).and_then(|t| member(t.get("metadata"), "annotations"))),
        interfaces: list(devices, "interfaces"),
        networks: Cow::Borrowed(items(spec.and_then(|s| s.get("networks")))),
        host_devices: list(devices, "hostDevices"),
        gpus: list(devices, "gpus"),
        disks: list(devices, "disks"),
        launch_security: non_null(domain.and_then(|d| d.get("launchSecurity"))),
        architecture: string(spec.and_then(|s| s.get("architecture"))),
        cpu_model: string(member(domain, "cpu").and_then(|c| c.get("model"))),
        cpu_features: list(member(domain, "cpu"), "features"),
        hyperv: map(member(member(domain, "features"), "hyperv")),
        hyperv_passthrough: member(member(domain, "features"), "hypervPassthrough"),
        ..Vmi::default()
    };
    let preference = sources.preference;
    let pref_devices = member(preference, "devices");

    // ApplyAutoAttachPreferences, then SetDefaultNetworkInterface (defaults.go:33-58).
    let autoattach = non_null(devices.and_then(|d| d.get("autoattachPodInterface")))
        .or_else(|| non_null(pref_devices.and_then(|d| d.get("preferredAutoattachPodInterface"))));
    let unset = |value: Option<&Value>| non_null(value).is_none_or(|v| v == &json!([]));
    if autoattach != Some(&Value::Bool(false))
        && unset(devices.and_then(|d| d.get("interfaces")))
        && unset(spec.and_then(|s| s.get("networks")))
    {
        let binding = config.default_interface().to_owned();
        vmi.interfaces = Cow::Owned(vec![json!({"name": "default", binding.clone(): {}})]);
        vmi.networks = Cow::Owned(vec![json!({"name": "default", "pod": {}})]);
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
fn conflicts(vmi: &Vmi, instancetype: &Value) -> Vec<&'static str> {
    let mut found = Vec::new();
    if !items(instancetype.get("gpus")).is_empty() && !vmi.gpus.is_empty() {
        found.push("gpus");
    }
    if !items(instancetype.get("hostDevices")).is_empty() && !vmi.host_devices.is_empty() {
        found.push("hostDevices");
    }
    if non_null(instancetype.get("launchSecurity")).is_some() && vmi.launch_security.is_some() {
        found.push("launchSecurity");
    }
    if string(member(instancetype.get("cpu"), "model")).is_some() && vmi.cpu_model.is_some() {
        found.push("cpu.model");
    }
    let differs = instancetype
        .get("annotations")
        .and_then(Value::as_object)
        .is_some_and(|a| {
            a.iter()
                .any(|(k, v)| vmi.annotations.get(k).is_some_and(|own| own != v))
        });
    if differs {
        found.push("annotations");
    }
    found
}

/// `pkg/instancetype/apply/vmi.go:46-78`: gpus, hostDevices, launchSecurity, cpu.model and
/// annotations, each only where the VM sets none (a conflict was ruled out before).
fn apply_instancetype<'a>(vmi: &mut Vmi<'a>, instancetype: &'a Value) {
    if vmi.gpus.is_empty() {
        vmi.gpus = Cow::Borrowed(items(instancetype.get("gpus")));
    }
    if vmi.host_devices.is_empty() {
        vmi.host_devices = Cow::Borrowed(items(instancetype.get("hostDevices")));
    }
    if vmi.launch_security.is_none() {
        vmi.launch_security = non_null(instancetype.get("launchSecurity"));
    }
    if vmi.cpu_model.is_none() {
        vmi.cpu_model = string(member(instancetype.get("cpu"), "model"));
    }
    add_annotations(vmi, instancetype);
}

/// Keys of `source.annotations` the VMI does not have yet.
fn add_annotations(vmi: &mut Vmi, source: &Value) {
    if let Some(annotations) = source.get("annotations").and_then(Value::as_object) {
        for (key, value) in annotations {
            if !vmi.annotations.contains_key(key) {
                vmi.annotations.to_mut().insert(key.clone(), value.clone());
            }
        }
    }
}

/// `pkg/instancetype/preference/apply/vmi.go:34-54`: every field only where the VMI leaves it unset.
fn apply_preference<'a>(vmi: &mut Vmi<'a>, preference: &'a Value, rules: Rules) {
    // devices.preferredInterfaceMasquerade (interface.go:28-53): an interface without any binding
    // on the pod network gets masquerade.
    let masquerade = member(preference.get("devices"), "preferredInterfaceMasquerade").is_some();
    if masquerade {
        let pod_networks: Vec<Value> = vmi
            .networks
            .iter()
            .filter(|n| non_null(n.get("pod")).is_some())
            .filter_map(|n| n.get("name").cloned())
            .collect();
        let gets_masquerade = |interface: &Value| {
            let on_pod = interface
                .get("name")
                .is_some_and(|name| pod_networks.contains(name));
            on_pod && binding_of(interface).is_none()
        };
        if vmi.interfaces.iter().any(gets_masquerade) {
            for interface in vmi.interfaces.to_mut() {
                if gets_masquerade(interface) {
                    if let Some(map) = interface.as_object_mut() {
                        map.insert("masquerade".to_owned(), json!({}));
                    }
                }
            }
        }
    }
    // features.preferredHyperv (features.go:62-123): each sub-feature the VMI leaves unset.
    if let Some(hyperv) =
        member(preference.get("features"), "preferredHyperv").and_then(Value::as_object)
    {
        for (key, value) in hyperv {
            if non_null(vmi.hyperv.get(key)).is_none() {
                vmi.hyperv.to_mut().insert(key.clone(), value.clone());
            }
        }
    }
    // cpu.preferredCPUFeatures (cpu.go:26-40): features of names the VMI does not list.
    for feature in items(member(preference.get("cpu"), "preferredCPUFeatures")) {
        let name = feature.get("name");
        if !vmi.cpu_features.iter().any(|f| f.get("name") == name) {
            vmi.cpu_features.to_mut().push(feature.clone());
        }
    }
    // preferredLaunchSecurity (launchsecurity.go:26-32), v1.9.0 on.
    if rules >= Rules::V1_9 && vmi.launch_security.is_none() {
        vmi.launch_security = non_null(preference.get("preferredLaunchSecurity"));
    }
    // preferredArchitecture (architecture.go:26-34).
    if vmi.architecture.is_none() {
        vmi.architecture = string(preference.get("preferredArchitecture"));
    }
    add_annotations(vmi, preference);
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

/// The binding an interface sets (the first of [`BINDINGS`] that is present and not `null`).
pub(crate) fn binding_of(interface: &Value) -> Option<&'static str> {
    BINDINGS
        .into_iter()
        .find(|b| non_null(interface.get(*b)).is_some())
}
