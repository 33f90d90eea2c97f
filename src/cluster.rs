//! What the policy may read from the cluster, behind one trait (docs/rules.md, "Cluster lookups"):
//! on wasm the answers come from Kubewarden's context-aware host calls; native tests and the tools
//! answer from plain data. The rules never know where an answer came from, and [`Lookups`] makes
//! each call at most once per request.

use std::cell::{OnceCell, RefCell};

use kubewarden_policy_sdk::host_capabilities::kubernetes::{
    GetResourceRequest, ListAllResourcesRequest, get_resource, list_all_resources,
};
use serde::Deserialize;

/// The reads the rules may ask for. An `Err` carries why the answer is not known (not granted, no
/// cluster, not found, ...): the rules then fall back to the settings and the spec.
pub trait Cluster {
    /// The cluster-wide eviction strategy: the first KubeVirt CR's
    /// `spec.configuration.evictionStrategy` (`Ok(None)`: no CR, or the CR sets none).
    fn kubevirt_eviction_strategy(&self) -> Result<Option<String>, String>;

    /// `spec.accessModes` of the PersistentVolumeClaim `name` in `namespace`.
    fn claim_access_modes(&self, namespace: &str, name: &str) -> Result<Vec<String>, String>;
}

/// The Kubewarden host: `list_resources_all` of `kubevirt.io/v1 KubeVirt` and `get_resource` of
/// `v1 PersistentVolumeClaim`, exactly as the README documents them for kwctl replay sessions.
pub struct Host;

impl Cluster for Host {
    fn kubevirt_eviction_strategy(&self) -> Result<Option<String>, String> {
        let request = ListAllResourcesRequest {
            api_version: KubeVirt::API_VERSION.to_owned(),
            kind: KubeVirt::KIND.to_owned(),
            label_selector: None,
            field_selector: None,
            field_masks: None,
        };
        let list = list_all_resources::<KubeVirt>(&request).map_err(why)?;
        Ok(list
            .items
            .into_iter()
            .next()
            .and_then(|cr| cr.spec.configuration.eviction_strategy))
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
        let claim: Claim = get_resource(&request).map_err(why)?;
        Ok(claim
            .spec
            .and_then(|spec| spec.access_modes)
            .unwrap_or_default())
    }
}

/// Why a host call failed, in the host's words: the SDK's and waPC's wrappers left out.
fn why(error: kubewarden_policy_sdk::error::Error) -> String {
    let text = match error {
        kubewarden_policy_sdk::error::Error::HostCall { source, .. } => source.to_string(),
        other => other.to_string(),
    };
    let text = text.strip_prefix("Host error: ").unwrap_or(&text);
    text.strip_prefix("Callback evaluation failure: ")
        .unwrap_or(text)
        .to_owned()
}

/// The KubeVirt CR, read-only and only as far as the policy reads it.
#[derive(Deserialize, Clone, Default)]
#[serde(default)]
struct KubeVirt {
    spec: KubeVirtSpec,
}

#[derive(Deserialize, Clone, Default)]
#[serde(default)]
struct KubeVirtSpec {
    configuration: KubeVirtConfiguration,
}

#[derive(Deserialize, Clone, Default)]
#[serde(default, rename_all = "camelCase")]
struct KubeVirtConfiguration {
    eviction_strategy: Option<String>,
}

impl KubeVirt {
    const API_VERSION: &str = "kubevirt.io/v1";
    const KIND: &str = "KubeVirt";
}

impl k8s_openapi::Resource for KubeVirt {
    const API_VERSION: &'static str = KubeVirt::API_VERSION;
    const GROUP: &'static str = "kubevirt.io";
    const KIND: &'static str = KubeVirt::KIND;
    const VERSION: &'static str = "v1";
    const URL_PATH_SEGMENT: &'static str = "kubevirts";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::ListableResource for KubeVirt {
    const LIST_KIND: &'static str = "KubeVirtList";
}

/// One request's view of the cluster: every lookup made at most once, failures remembered for the
/// one warning that says what could not be checked.
pub(crate) struct Lookups<'a> {
    cluster: &'a dyn Cluster,
    kubevirt: OnceCell<Option<String>>,
    claims: RefCell<Vec<(String, Option<Vec<String>>)>>,
    failures: RefCell<Vec<String>>,
}

impl<'a> Lookups<'a> {
    pub(crate) fn new(cluster: &'a dyn Cluster) -> Self {
        Lookups {
            cluster,
            kubevirt: OnceCell::new(),
            claims: RefCell::new(Vec::new()),
            failures: RefCell::new(Vec::new()),
        }
    }

    /// The KubeVirt CR's eviction strategy; `None` when it sets none or cannot be read.
    pub(crate) fn kubevirt_eviction_strategy(&self) -> Option<String> {
        self.kubevirt
            .get_or_init(|| match self.cluster.kubevirt_eviction_strategy() {
                Ok(strategy) => strategy,
                Err(why) => {
                    self.fail(format!("KubeVirt CR ({why}), treated as None"));
                    None
                }
            })
            .clone()
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

    fn fail(&self, what: String) {
        self.failures.borrow_mut().push(what);
    }

    /// The one warning about the lookups that failed, if any did.
    pub(crate) fn warning(&self) -> Option<String> {
        let failures = self.failures.borrow();
        (!failures.is_empty()).then(|| format!("cluster lookup failed: {}", failures.join("; ")))
    }
}

/// A PersistentVolumeClaim as far as the policy reads it.
#[derive(Deserialize, Clone)]
struct Claim {
    spec: Option<ClaimSpec>,
}

#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase")]
struct ClaimSpec {
    access_modes: Option<Vec<String>>,
}
