//! What the policy may read from the cluster, behind one trait (docs/rules.md, "Cluster lookups"):
//! on wasm the answers come from Kubewarden's context-aware host calls; native tests and the tools
//! answer from plain data. The rules never know where an answer came from, and [`Lookups`] makes
//! each call at most once per request.

use std::cell::{OnceCell, RefCell};

use kubewarden_policy_sdk::host_capabilities::kubernetes::{
    GetResourceRequest, ListAllResourcesRequest,
};
use kubewarden_policy_sdk::wapc_guest as guest;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::configuration::{Configuration, WorkloadUpdateStrategy};
use crate::listing::listed;
use crate::object::view::objects::{object, objects, optional_object};

/// What the policy reads of the KubeVirt CR, from one list call: the configuration (with the
/// cluster's eviction strategy) and the release it runs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KubeVirtCr {
    /// `spec.configuration`, as far as the rules read it.
    pub configuration: Configuration,
    /// `status.observedKubeVirtVersion` (`v1.9.0`).
    pub observed_version: Option<String>,
    /// `spec.workloadUpdateStrategy`, as far as the live-update rules read it.
    pub workload_update_strategy: WorkloadUpdateStrategy,
}

/// The API version of instancetypes and preferences.
pub const INSTANCETYPE_API_VERSION: &str = "instancetype.kubevirt.io/v1beta1";

/// The reads the rules may ask for. An `Err` carries why the answer is not known (not granted, no
/// cluster, not found, ...): the rules then fall back to the settings and the spec.
pub trait Cluster {
    /// The first KubeVirt CR (`Ok(None)`: there is none).
    fn kubevirt(&self) -> Result<Option<KubeVirtCr>, String>;

    /// The `spec` of the `instancetype.kubevirt.io/v1beta1` object `kind`/`name`
    /// (`VirtualMachineClusterInstancetype`, `VirtualMachineInstancetype`,
    /// `VirtualMachineClusterPreference`, `VirtualMachinePreference`); `namespace` is `None` for
    /// the cluster-wide kinds. The answer is the spec's JSON text (`null` when it has none).
    fn instancetype_spec(
        &self,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<String, String>;

    /// `spec.accessModes` of the PersistentVolumeClaim `name` in `namespace`.
    fn claim_access_modes(&self, namespace: &str, name: &str) -> Result<Vec<String>, String>;

    /// The JSON text of the running `kubevirt.io/v1` VirtualMachineInstance `name` in `namespace`
    /// (`Ok(None)`: there is none). A cluster that holds no VMIs answers `Ok(None)`.
    fn vmi(&self, namespace: &str, name: &str) -> Result<Option<String>, String> {
        let _ = (namespace, name);
        Ok(None)
    }
}

/// A waPC host call: `(operation, request JSON)` → the answer's bytes, or the host's error text.
pub type HostCall = fn(&str, &[u8]) -> Result<Vec<u8>, String>;

/// The Kubewarden host: `list_resources_all` of `kubevirt.io/v1 KubeVirt`, `get_resource` of the
/// instancetype kinds and of `v1 PersistentVolumeClaim`, exactly as docs/rules.md ("Cluster
/// lookups") documents them for kwctl replay sessions, made through `F` (Kubewarden's
/// `kubernetes` host calls in the module, [`Host::wapc`]; a host's answers natively,
/// [`Host::through`]).
pub struct Host<F = HostCall>(F);

impl Host {
    /// Kubewarden's `kubernetes` host calls, as the SDK makes them.
    pub fn wapc() -> Self {
        Host(|operation, payload| {
            guest::host_call("kubewarden", "kubernetes", operation, payload)
                .map_err(|e| e.to_string())
        })
    }
}

impl<F: Fn(&str, &[u8]) -> Result<Vec<u8>, String>> Host<F> {
    /// The same reads and answers, each call made through `call` (native tests).
    pub fn through(call: F) -> Self {
        Host(call)
    }

    /// One call: the request serialised, the answer's bytes returned, an error's text cleaned.
    fn call(&self, operation: &str, request: &impl Serialize) -> Result<Vec<u8>, String> {
        let payload = serde_json::to_vec(request).map_err(|e| e.to_string())?;
        (self.0)(operation, &payload).map_err(why_text)
    }
}

impl<F: Fn(&str, &[u8]) -> Result<Vec<u8>, String>> Cluster for Host<F> {
    fn kubevirt(&self) -> Result<Option<KubeVirtCr>, String> {
        let request = ListAllResourcesRequest {
            api_version: KubeVirt::API_VERSION.to_owned(),
            kind: KubeVirt::KIND.to_owned(),
            label_selector: None,
            field_selector: None,
            field_masks: None,
        };
        // Not the SDK's `list_all_resources`: its k8s-openapi `List<T>` refuses any list whose
        // `apiVersion`/`kind` is not `kubevirt.io/v1 KubeVirtList`, and hosts also answer a plain
        // `v1 List` (kube-rs' `ObjectList` default, and so recorded kwctl sessions).
        kubevirt_from_list(&self.call("list_resources_all", &request)?)
    }

    fn instancetype_spec(
        &self,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<String, String> {
        let request = GetResourceRequest {
            api_version: INSTANCETYPE_API_VERSION.to_owned(),
            kind: kind.to_owned(),
            name: name.to_owned(),
            namespace: namespace.map(str::to_owned),
            disable_cache: false,
            field_masks: None,
        };
        let answer = self.call("get_resource", &request)?;
        let object: Option<WithSpec> = serde_json::from_slice(&answer)
            .map_err(|e| format!("error deserializing get resource response: {e}"))?;
        Ok(object
            .and_then(|o| o.spec)
            .map_or_else(|| "null".to_owned(), |spec| spec.get().to_owned()))
    }

    fn claim_access_modes(&self, namespace: &str, name: &str) -> Result<Vec<String>, String> {
        let request = GetResourceRequest {
            api_version: "v1".to_owned(),
            kind: "PersistentVolumeClaim".to_owned(),
            name: name.to_owned(),
            namespace: Some(namespace.to_owned()),
            disable_cache: false,
            field_masks: None,
        };
        let answer = self.call("get_resource", &request)?;
        let claim: Option<Claim> = serde_json::from_slice(&answer)
            .map_err(|e| format!("error deserializing get resource response: {e}"))?;
        Ok(claim
            .and_then(|claim| claim.spec)
            .and_then(|spec| spec.access_modes)
            .unwrap_or_default())
    }

    fn vmi(&self, namespace: &str, name: &str) -> Result<Option<String>, String> {
        let request = GetResourceRequest {
            api_version: KubeVirt::API_VERSION.to_owned(),
            kind: "VirtualMachineInstance".to_owned(),
            name: name.to_owned(),
            namespace: Some(namespace.to_owned()),
            disable_cache: false,
            field_masks: None,
        };
        let answer = self.call("get_resource", &request)?;
        let text = std::str::from_utf8(&answer)
            .map_err(|e| format!("error deserializing get resource response: {e}"))?;
        let object: Option<&RawValue> = serde_json::from_str(text)
            .map_err(|e| format!("error deserializing get resource response: {e}"))?;
        Ok(object.map(|o| o.get().to_owned()))
    }
}

/// A host error's text without waPC's prefixes, and without the stack backtrace a host running
/// with `RUST_BACKTRACE=1` appends to it (anyhow's `\n\nStack backtrace:` and its frames).
fn why_text(text: String) -> String {
    let text = text.strip_prefix("Host error: ").unwrap_or(&text);
    let text = text
        .strip_prefix("Callback evaluation failure: ")
        .unwrap_or(text);
    // A byte search: a `str` pattern would bring core's two-way searcher for this one use.
    const BACKTRACE: &[u8] = b"\n\nStack backtrace:";
    let end = text
        .as_bytes()
        .windows(BACKTRACE.len())
        .position(|w| w == BACKTRACE)
        .unwrap_or(text.len());
    text.get(..end).unwrap_or(text).to_owned()
}

/// Reads an answer through the deserializer the settings are read with (serde_path_to_error over
/// text), the path dropped: the configuration's reader, which the `kubevirt.configuration`
/// setting shares with the CR's `spec.configuration`, is then compiled once, not once a reader.
fn read_as_settings<'a, T: serde::Deserialize<'a>>(answer: &'a [u8]) -> Result<T, String> {
    let text = std::str::from_utf8(answer).map_err(|e| e.to_string())?;
    let deserializer = &mut serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut *deserializer)
        .map_err(|e| e.into_inner().to_string())?;
    deserializer.end().map_err(|e| e.to_string())?;
    Ok(value)
}

/// The first KubeVirt CR of a `list_resources_all` answer (`Ok(None)`: the list is empty). The
/// list's own `apiVersion` and `kind` are not checked: hosts answer `kubevirt.io/v1 KubeVirtList`
/// or a plain `v1 List`.
pub fn kubevirt_from_list(answer: &[u8]) -> Result<Option<KubeVirtCr>, String> {
    let list = read_as_settings::<Option<Items>>(answer)
        .map_err(|e| format!("list all resources response: {e}"))?
        .unwrap_or_default();
    Ok(list
        .items
        .into_iter()
        .flatten()
        .next()
        .map(KubeVirt::into_cr))
}

/// One KubeVirt CR object, read as [`kubevirt_from_list`] reads a list's items (for tools that hold
/// the cluster's objects, such as a dump).
pub fn kubevirt_from_object(object: &Value) -> Result<KubeVirtCr, String> {
    match Option::<KubeVirt>::deserialize(object) {
        Ok(cr) => Ok(cr.unwrap_or_default().into_cr()),
        Err(e) => Err(format!("KubeVirt CR: {e}")),
    }
}

/// A list answer as far as the policy reads it: its `items`, whatever the list's own
/// `apiVersion`/`kind` (`v1 List` or `kubevirt.io/v1 KubeVirtList`).
#[derive(Deserialize, Default)]
#[serde(default, expecting = "a Kubernetes list")]
struct Items {
    items: Option<Vec<KubeVirt>>,
}

/// The KubeVirt CR, read-only and only as far as the policy reads it.
#[derive(Deserialize, Clone, Default)]
#[serde(default, expecting = "a KubeVirt CR")]
struct KubeVirt {
    #[serde(deserialize_with = "object")]
    spec: KubeVirtSpec,
    #[serde(deserialize_with = "object")]
    status: KubeVirtStatus,
}

#[derive(Deserialize, Clone, Default)]
#[serde(default)]
#[serde(rename_all = "camelCase")]
struct KubeVirtSpec {
    #[serde(deserialize_with = "object")]
    configuration: Configuration,
    #[serde(deserialize_with = "object")]
    workload_update_strategy: WorkloadUpdateStrategy,
}

#[derive(Deserialize, Clone, Default)]
#[serde(default, rename_all = "camelCase")]
struct KubeVirtStatus {
    observed_kube_virt_version: Option<String>,
}

/// An instancetype or preference: only its `spec`, kept as JSON text for the expansion.
#[derive(Deserialize)]
#[serde(expecting = "a Kubernetes object")]
struct WithSpec<'a> {
    #[serde(borrow, default)]
    spec: Option<&'a RawValue>,
}

objects! {
    KubeVirtSpec => "struct KubeVirtSpec",
    KubeVirtStatus => "struct KubeVirtStatus",
    ClaimSpec => "struct ClaimSpec",
}

impl KubeVirt {
    const API_VERSION: &str = "kubevirt.io/v1";
    const KIND: &str = "KubeVirt";

    fn into_cr(self) -> KubeVirtCr {
        KubeVirtCr {
            configuration: self.spec.configuration,
            observed_version: self.status.observed_kube_virt_version,
            workload_update_strategy: self.spec.workload_update_strategy,
        }
    }
}

/// What the rules use when the KubeVirt CR cannot be read, as the failure warning says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CrFallback {
    /// `treated as None`: no CR (V7's cluster eviction strategy, the live-update facts).
    AsNone,
    /// `KubeVirt's defaults and v1.9 rules used` (V7's migratability reasons).
    Defaults,
}

impl CrFallback {
    fn words(self) -> &'static str {
        match self {
            CrFallback::AsNone => "treated as None",
            CrFallback::Defaults => "KubeVirt's defaults and v1.9 rules used",
        }
    }
}

/// One request's view of the cluster: every lookup made at most once, failures remembered for the
/// one warning that says what could not be checked.
pub(crate) struct Lookups<'a> {
    cluster: &'a dyn Cluster,
    kubevirt: OnceCell<Option<KubeVirtCr>>,
    instancetypes: RefCell<Vec<(String, Option<String>)>>,
    claims: RefCell<Vec<(String, Option<Vec<String>>)>>,
    vmi: OnceCell<Option<String>>,
    failures: RefCell<Vec<String>>,
}

impl<'a> Lookups<'a> {
    pub(crate) fn new(cluster: &'a dyn Cluster) -> Self {
        Lookups {
            cluster,
            kubevirt: OnceCell::new(),
            instancetypes: RefCell::new(Vec::new()),
            claims: RefCell::new(Vec::new()),
            vmi: OnceCell::new(),
            failures: RefCell::new(Vec::new()),
        }
    }

    /// Whether the KubeVirt CR has been asked for already (answered or failed).
    pub(crate) fn kubevirt_read(&self) -> bool {
        self.kubevirt.get().is_some()
    }

    /// The KubeVirt CR when it has been asked for already, without a lookup.
    pub(crate) fn kubevirt_if_read(&self) -> Option<&KubeVirtCr> {
        self.kubevirt.get()?.as_ref()
    }

    /// The KubeVirt CR; `None` when there is none or it cannot be read. `fallback` says, in the
    /// failure warning, what the rules use instead (the first lookup's: it is made once).
    pub(crate) fn kubevirt(&self, fallback: CrFallback) -> Option<&KubeVirtCr> {
        self.kubevirt
            .get_or_init(|| match self.cluster.kubevirt() {
                Ok(cr) => cr,
                Err(why) => {
                    self.fail(format!("KubeVirt CR ({why}), {}", fallback.words()));
                    None
                }
            })
            .as_ref()
    }

    /// The `spec` of an instancetype or preference; `None` when it cannot be read.
    pub(crate) fn instancetype_spec(
        &self,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<String> {
        let key = format!(
            "{kind} {}{name}",
            namespace.map(|n| format!("{n}/")).unwrap_or_default()
        );
        if let Some((_, spec)) = self.instancetypes.borrow().iter().find(|(k, _)| *k == key) {
            return spec.clone();
        }
        let spec = match self.cluster.instancetype_spec(kind, namespace, name) {
            Ok(spec) => Some(spec),
            Err(why) => {
                self.fail(format!("{key} ({why}), not applied"));
                None
            }
        };
        self.instancetypes.borrow_mut().push((key, spec.clone()));
        spec
    }

    /// A claim's access modes; `None` when it cannot be read.
    pub(crate) fn claim_access_modes(&self, namespace: &str, name: &str) -> Option<Vec<String>> {
        if let Some((_, modes)) = self.claims.borrow().iter().find(|(n, _)| n == name) {
            return modes.clone();
        }
        let modes = match self.cluster.claim_access_modes(namespace, name) {
            Ok(modes) => Some(modes),
            Err(why) => {
                self.fail(format!("PVC {namespace}/{name} ({why}), not checked"));
                None
            }
        };
        self.claims
            .borrow_mut()
            .push((name.to_owned(), modes.clone()));
        modes
    }

    /// The text of the VM's running VMI (one per request: the VM's own); `None` when there is
    /// none or it cannot be read.
    pub(crate) fn vmi(&self, namespace: &str, name: &str) -> Option<&str> {
        self.vmi
            .get_or_init(|| match self.cluster.vmi(namespace, name) {
                Ok(vmi) => vmi,
                Err(why) => {
                    self.fail(format!("VMI {namespace}/{name} ({why}), not read"));
                    None
                }
            })
            .as_deref()
    }

    fn fail(&self, what: String) {
        self.failures.borrow_mut().push(what);
    }

    /// The one warning about the lookups that failed, if any did.
    pub(crate) fn warning(&self) -> Option<String> {
        let failures = self.failures.borrow();
        (!failures.is_empty())
            .then(|| format!("cluster lookup failed: {}", listed(&failures, "; ")))
    }
}

/// A PersistentVolumeClaim as far as the policy reads it.
#[derive(Deserialize, Default)]
#[serde(default, expecting = "a Kubernetes object")]
struct Claim {
    #[serde(deserialize_with = "optional_object")]
    spec: Option<ClaimSpec>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct ClaimSpec {
    access_modes: Option<Vec<String>>,
}
