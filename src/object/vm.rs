//! The VirtualMachine as the rules read it: a borrowed view of its text with only the members a
//! rule reads (`view`), and the few writes the mutation rules own. The answer's `mutated_object`
//! is the request's own text with the owned paths spliced in (`splice`), so the view never has to
//! hold what the policy does not know.

use std::borrow::Cow;
use std::ops::Deref;

use crate::object::view::{AsSlot, Field, Later, List, Map, Members, Scalar, Seen, Slot, view};
use crate::strategy::LIVE_MIGRATE;

/// A label or annotation map.
pub(crate) type Labels<'a> = Map<'a, Scalar<'a>>;

view! {
    /// A VirtualMachine (and the old object of an UPDATE).
    Vm<'a> {
        "metadata" => metadata: Field<Metadata<'a>>,
        "spec" => spec: Field<Spec<'a>>,
        "status" => status: Field<Status<'a>>,
    }
}

view! {
    /// `status` of a VM: whether its VMI exists, and the conditions KubeVirt mirrors from it.
    Status<'a> {
        "created" => created: Option<Scalar<'a>>,
        "conditions" => conditions: List<Condition<'a>>,
    }
}

view! {
    /// A condition of a VM's (or a VMI's) `status.conditions`.
    Condition<'a> {
        "type" => kind: Option<Scalar<'a>>,
        "status" => status: Option<Scalar<'a>>,
        "reason" => reason: Option<Scalar<'a>>,
        "message" => message: Option<Scalar<'a>>,
    }
}

view! {
    /// `metadata` of the VM and of its template.
    Metadata<'a> {
        "namespace" => namespace: Option<Scalar<'a>>,
        "labels" => labels: Field<Labels<'a>>,
        "annotations" => annotations: Field<Labels<'a>>,
    }
}

view! {
    Spec<'a> {
        "template" => template: Field<Template<'a>>,
        "dataVolumeTemplates" => data_volume_templates: Later<'a, List<ClaimTemplate<'a>>>,
        /// Any type but `null` counts as naming one.
        "instancetype" => instancetype: Field<Matcher<'a>>,
        "preference" => preference: Field<Matcher<'a>>,
    }
}

view! {
    /// `spec.instancetype` / `spec.preference`.
    Matcher<'a> {
        "name" => name: Option<Scalar<'a>>,
        "kind" => kind: Option<Scalar<'a>>,
    }
}

view! {
    Template<'a> {
        "metadata" => metadata: Field<Metadata<'a>>,
        "spec" => spec: Field<TemplateSpec<'a>>,
    }
}

/// `spec.template.spec`.
#[derive(Debug, Clone, Default)]
pub(crate) struct TemplateSpec<'a> {
    /// `null` is unset.
    pub(crate) eviction_strategy: Option<Scalar<'a>>,
    pub(crate) domain: Later<'a, Field<Domain<'a>>>,
    pub(crate) volumes: Later<'a, List<Volume<'a>>>,
    pub(crate) networks: Later<'a, List<Network<'a>>>,
    pub(crate) architecture: Option<Scalar<'a>>,
}

/// What only V7 reads is read in the first reading when the strategy read before it lets V7 apply,
/// later ([`Vm::load_later`]) otherwise. The API server writes the keys sorted: `domain`
/// before `evictionStrategy`, `networks` and `volumes` after it.
impl<'a> Members<'a> for TemplateSpec<'a> {
    fn slot(&mut self, key: &Cow<'a, str>) -> Slot<'_, 'a> {
        match key.as_ref() {
            "evictionStrategy" => AsSlot::slot(&mut self.eviction_strategy),
            "domain" => AsSlot::slot(&mut self.domain),
            "volumes" => self
                .volumes
                .slot_when(v7_may_apply(self.eviction_strategy.as_ref())),
            "networks" => self
                .networks
                .slot_when(v7_may_apply(self.eviction_strategy.as_ref())),
            "architecture" => AsSlot::slot(&mut self.architecture),
            _ => Slot::Skip,
        }
    }
}

/// Whether V7 may apply to a VM whose own strategy is `own` (`null` is unset): unless it sets
/// one other than `LiveMigrate`, which no mutation changes.
pub(crate) fn v7_may_apply(own: Option<&Scalar>) -> bool {
    own.filter(|v| **v != Scalar::Null)
        .is_none_or(|own| own.as_str() == Some(LIVE_MIGRATE))
}

view! {
    Domain<'a> {
        "devices" => devices: Field<Devices<'a>>,
        /// Any type but `null` counts as set.
        "launchSecurity" => launch_security: Field<LaunchSecurity<'a>>,
        "cpu" => cpu: Field<Cpu<'a>>,
        "features" => features: Field<Features<'a>>,
    }
}

view! {
    Devices<'a> {
        "interfaces" => interfaces: List<Interface<'a>>,
        "hostDevices" => host_devices: List<Device<'a>>,
        "gpus" => gpus: List<Device<'a>>,
        "disks" => disks: List<Disk<'a>>,
        "autoattachPodInterface" => autoattach_pod_interface: Option<Scalar<'a>>,
    }
}

view! {
    /// An interface: its name and which binding methods it sets (not `null`).
    Interface<'a> {
        "name" => name: Option<Scalar<'a>>,
        "bridge" => bridge: Seen,
        "slirp" => slirp: Seen,
        "masquerade" => masquerade: Seen,
        "sriov" => sriov: Seen,
        "macvtap" => macvtap: Seen,
        "passt" => passt: Seen,
        "passtBinding" => passt_binding: Seen,
        /// A network binding plugin.
        "binding" => binding: Field<Named<'a>>,
    }
}

view! {
    /// A host device or GPU (and a disk, a volume, a network: what `name_of` reads).
    Device<'a> {
        "name" => name: Option<Scalar<'a>>,
        "deviceName" => device_name: Option<Scalar<'a>>,
    }
}

view! {
    Disk<'a> {
        "name" => name: Option<Scalar<'a>>,
        "deviceName" => device_name: Option<Scalar<'a>>,
        "lun" => lun: Field<Lun<'a>>,
    }
}

view! {
    Lun<'a> {
        "reservation" => reservation: Option<Scalar<'a>>,
    }
}

view! {
    Network<'a> {
        "name" => name: Option<Scalar<'a>>,
        "deviceName" => device_name: Option<Scalar<'a>>,
        "pod" => pod: Seen,
    }
}

view! {
    Volume<'a> {
        "name" => name: Option<Scalar<'a>>,
        "deviceName" => device_name: Option<Scalar<'a>>,
        /// Any type but `null` counts as a host disk.
        "hostDisk" => host_disk: Field<HostDisk<'a>>,
        "persistentVolumeClaim" => persistent_volume_claim: Field<ClaimRef<'a>>,
        "dataVolume" => data_volume: Field<Named<'a>>,
    }
}

view! {
    HostDisk<'a> {
        "shared" => shared: Option<Scalar<'a>>,
    }
}

view! {
    ClaimRef<'a> {
        "claimName" => claim_name: Option<Scalar<'a>>,
    }
}

view! {
    /// Anything read only for its `name`.
    Named<'a> {
        "name" => name: Option<Scalar<'a>>,
    }
}

view! {
    /// A DataVolume template of the VM, or a PVC template of Harvester's annotation.
    ClaimTemplate<'a> {
        "metadata" => metadata: Field<Named<'a>>,
        "spec" => spec: Field<ClaimSpec<'a>>,
    }
}

view! {
    /// A DataVolume's `spec` (`pvc`, `storage`) or a PVC's (`accessModes`).
    ClaimSpec<'a> {
        "pvc" => pvc: Field<Modes<'a>>,
        "storage" => storage: Field<Modes<'a>>,
        "accessModes" => access_modes: Option<Scalar<'a>>,
    }
}

view! {
    /// `accessModes` of a DataVolume's `pvc` or `storage`.
    Modes<'a> {
        "accessModes" => access_modes: Option<Scalar<'a>>,
    }
}

view! {
    Cpu<'a> {
        "model" => model: Option<Scalar<'a>>,
        "features" => features: List<CpuFeature<'a>>,
    }
}

view! {
    CpuFeature<'a> {
        "name" => name: Option<Scalar<'a>>,
        "policy" => policy: Option<Scalar<'a>>,
    }
}

view! {
    Features<'a> {
        "hyperv" => hyperv: Field<Hyperv<'a>>,
        "hypervPassthrough" => hyperv_passthrough: Field<Toggle<'a>>,
    }
}

/// `features.hyperv`: each sub-feature by name.
pub(crate) type Hyperv<'a> = Map<'a, Field<Toggle<'a>>>;

view! {
    /// A feature with an `enabled` switch.
    Toggle<'a> {
        "enabled" => enabled: Option<Scalar<'a>>,
    }
}

view! {
    LaunchSecurity<'a> {
        "sev" => sev: Seen,
        "snp" => snp: Seen,
        "tdx" => tdx: Seen,
    }
}

impl<'a> Vm<'a> {
    /// `metadata.namespace` when it is a string.
    pub(crate) fn namespace(&self) -> Option<&str> {
        self.metadata.get()?.namespace.as_ref()?.as_str()
    }

    /// `metadata.labels`, when an object.
    pub(crate) fn labels(&self) -> Option<&Labels<'a>> {
        self.metadata.get()?.labels.get()
    }

    /// Whether the VM's VMI exists (`status.created: true`, `vm.go:2461-2462`).
    pub(crate) fn running(&self) -> bool {
        self.status
            .get()
            .and_then(|s| s.created.as_ref())
            .is_some_and(|c| *c == Scalar::Bool(true))
    }

    /// The condition `kind` of `status.conditions`.
    pub(crate) fn condition(&self, kind: &str) -> Option<&Condition<'a>> {
        let status = self.status.get()?;
        status
            .conditions
            .items
            .iter()
            .find(|c| c.kind.as_ref().and_then(Scalar::as_str) == Some(kind))
    }

    /// `spec` when it is an object.
    pub(crate) fn spec(&self) -> Option<&Spec<'a>> {
        self.spec.get()
    }

    /// `spec.template` when `spec` and `template` are objects; anything else means "no template".
    pub(crate) fn template(&self) -> Option<&Template<'a>> {
        self.spec()?.template.get()
    }

    pub(crate) fn template_mut(&mut self) -> Option<&mut Template<'a>> {
        self.spec.get_mut()?.template.get_mut()
    }

    /// `spec.template.metadata.labels`, when an object.
    pub(crate) fn template_labels(&self) -> Option<&Labels<'a>> {
        self.template()?.metadata.get()?.labels.get()
    }

    /// `metadata.labels[key]`.
    pub(crate) fn label(&self, key: &str) -> Option<&Scalar<'a>> {
        self.labels()?.get(key)
    }

    /// `spec.template.metadata.labels[key]`.
    pub(crate) fn template_label(&self, key: &str) -> Option<&Scalar<'a>> {
        self.template_labels()?.get(key)
    }

    /// `spec.template.spec` when it is an object.
    pub(crate) fn template_spec(&self) -> Option<&TemplateSpec<'a>> {
        self.template()?.spec.get()
    }

    /// The VM's own eviction strategy, `spec.template.spec.evictionStrategy` (`null` = unset).
    pub(crate) fn eviction_strategy(&self) -> Option<&Scalar<'a>> {
        self.template_spec()?
            .eviction_strategy
            .as_ref()
            .filter(|v| **v != Scalar::Null)
    }

    /// Sets `spec.template.spec.evictionStrategy`; `false` when the VM has no `spec.template.spec`
    /// object (it is never created).
    pub(crate) fn set_eviction_strategy(&mut self, value: &str) -> bool {
        let Some(spec) = self.template_mut().and_then(|t| t.spec.get_mut()) else {
            return false;
        };
        spec.eviction_strategy = Some(Scalar::str(value.to_owned()));
        true
    }

    /// `metadata.annotations[key]`.
    pub(crate) fn annotation(&self, key: &str) -> Option<&Scalar<'a>> {
        self.metadata.get()?.annotations.get()?.get(key)
    }

    /// Reads what only V7 reads (`spec.dataVolumeTemplates`, and `domain`, `volumes` and
    /// `networks` of `spec.template.spec`), and gives the VM with them ([`Whole`]).
    pub(crate) fn load_later(&mut self) -> Result<Whole<'_, 'a>, String> {
        if let Some(spec) = self.spec.get_mut() {
            spec.data_volume_templates.load()?;
            if let Some(template) = spec.template.get_mut().and_then(|t| t.spec.get_mut()) {
                template.domain.load()?;
                template.volumes.load()?;
                template.networks.load()?;
            }
        }
        Ok(Whole(self))
    }

    /// The VM with what only V7 reads, once [`Vm::load_later`] has read it: `None` before.
    pub(crate) fn whole(&self) -> Option<Whole<'_, 'a>> {
        let Some(spec) = self.spec() else {
            return Some(Whole(self));
        };
        spec.data_volume_templates.read()?;
        if let Some(template) = self.template_spec() {
            template.domain.read()?;
            template.volumes.read()?;
            template.networks.read()?;
        }
        Some(Whole(self))
    }
}

/// A VM whose every member the rules read has been read ([`Vm::whole`], [`Vm::load_later`]):
/// the only way to what only V7 reads.
#[derive(Clone, Copy)]
pub(crate) struct Whole<'v, 'a>(&'v Vm<'a>);

impl<'a> Deref for Whole<'_, 'a> {
    type Target = Vm<'a>;
    fn deref(&self) -> &Vm<'a> {
        self.0
    }
}

impl<'v, 'a> Whole<'v, 'a> {
    /// A VM with no members.
    pub(crate) fn empty() -> Self {
        Whole(&EMPTY)
    }

    pub(crate) fn vm(self) -> &'v Vm<'a> {
        self.0
    }

    /// `spec.template.spec.domain`, when an object.
    pub(crate) fn domain(self) -> Option<&'v Domain<'a>> {
        self.0.template_spec()?.domain.read()?.get()
    }

    /// `spec.template.spec.volumes`.
    pub(crate) fn volumes(self) -> &'v [Volume<'a>] {
        let volumes = self.0.template_spec().and_then(|s| s.volumes.read());
        volumes.map_or(&[], |v| &v.items)
    }

    /// `spec.template.spec.networks`.
    pub(crate) fn networks(self) -> Option<&'v List<Network<'a>>> {
        self.0.template_spec()?.networks.read()
    }

    /// `spec.dataVolumeTemplates`.
    pub(crate) fn data_volume_templates(self) -> &'v [ClaimTemplate<'a>] {
        let templates = self.0.spec().and_then(|s| s.data_volume_templates.read());
        templates.map_or(&[], |t| &t.items)
    }
}

/// A VM read whole, every member loaded (the tools' reading; admission loads only what its
/// rules need); `null` reads as an empty VM.
pub(crate) fn parse_whole(text: &str) -> Result<Vm<'_>, String> {
    let mut vm = crate::object::view::parse::<Vm>(text)?.unwrap_or_default();
    vm.load_later()?;
    Ok(vm)
}

/// A VM with no members: what a VM that cannot be read reads as in the tools.
static EMPTY: Vm<'static> = Vm {
    metadata: Field::Absent,
    spec: Field::Absent,
    status: Field::Absent,
    _text: std::marker::PhantomData,
};

/// Sets `metadata.labels[key] = value` of a VM or a template, creating `metadata` and `labels`
/// when absent or `null` (the shape checks ruled out other types).
pub(crate) fn set_label<'a>(metadata: &mut Field<Metadata<'a>>, key: &str, value: Scalar<'a>) {
    if let Some(labels) = metadata
        .get_or_create()
        .and_then(|m| m.labels.get_or_create())
    {
        labels.insert(Cow::Owned(key.to_owned()), value);
    }
}

/// The name of a list item as a message shows it (`deviceName` for devices without one).
pub(crate) fn name_of(name: &Option<Scalar>, device_name: &Option<Scalar>) -> String {
    match name.as_ref().or(device_name.as_ref()) {
        Some(Scalar::Str(name)) => name.as_ref().to_owned(),
        Some(other) => crate::object::view::shown(Some(other)),
        None => "(unnamed)".to_owned(),
    }
}

/// Every path a mutation may write: the label, its template copy, the eviction strategy.
pub(crate) struct OwnedPaths<'k> {
    label: [&'k str; 3],
    template_label: [&'k str; 5],
}

const EVICTION_STRATEGY: [&str; 4] = ["spec", "template", "spec", "evictionStrategy"];

impl<'k> OwnedPaths<'k> {
    pub(crate) fn new(key: &'k str) -> OwnedPaths<'k> {
        OwnedPaths {
            label: ["metadata", "labels", key],
            template_label: ["spec", "template", "metadata", "labels", key],
        }
    }

    pub(crate) fn all(&self) -> [&[&'k str]; 3] {
        [&self.label, &self.template_label, &EVICTION_STRATEGY]
    }
}

/// The values at every owned path (`None` where a step is missing or not an object), to tell
/// what a mutation changed.
pub(crate) fn owned_values<'a>(vm: &Vm<'a>, key: &str) -> [Option<Scalar<'a>>; 3] {
    [
        vm.label(key).cloned(),
        vm.template_label(key).cloned(),
        vm.template_spec().and_then(|s| s.eviction_strategy.clone()),
    ]
}
