//! The cluster behind the host's context-aware calls: the objects a policy-server's watch caches
//! would hold, answered as policy-server / kwctl answer them (policy-evaluator's callback handler),
//! on waPC binding `kubewarden`, namespace `kubernetes`:
//! - `get_resource` (`{api_version, kind, name, namespace, disable_cache, field_masks}`): the
//!   object with that `apiVersion`, `kind`, `metadata.name` and namespace (a request namespace
//!   absent or empty matches objects without one), or the error of a missing object,
//!   `Cannot find v1/PersistentVolumeClaim named 'data' inside of namespace 'Some("team-a")'`.
//! - `list_resources_all` (`{api_version, kind, label_selector, field_selector, field_masks}`) and
//!   `list_resources_by_namespace` (the same plus `namespace`): the objects of that `apiVersion`
//!   and `kind`, as the host's list `{"apiVersion": <api_version>, "kind": "<Kind>List",
//!   "metadata": {}, "items": [...]}` — the kind a k8s-openapi `List<T>` demands
//!   (`ListableResource::LIST_KIND`), not a bare `List`.
//! - Label selectors of the equality form (`a=b,c!=d,e,!f`) and field selectors on any dotted
//!   path (`metadata.name=x`) are honoured; set-based label selectors (`in`, `notin`) make the
//!   call fail with an `e2e host:` message rather than answer something a cluster would not.
//!   `field_masks` prune the objects as the host does (dotted paths, arrays traversed).
//! - `can_i` and unknown operations are not served; other capability namespaces (`oci`, `net`,
//!   ...) are not granted.
//!
//! A host error reaches the guest as the waPC host error (the SDK's `Error::HostCall`, shown as
//! `error invoking host capability kubernetes.get_resource: Host error: ...`). Errors of the
//! cluster side (a missing object) read `Callback evaluation failure: <message>`, as
//! policy-evaluator wraps them. The SDK's log lines (`tracing`/`log`) are always answered.
//!
//! This [`Cluster`] records nothing: it is what the plugin ships. The e2e harness's recording
//! cluster, with failure rules (`policy_host::harness`, feature `harness`), answers through the
//! same [`Cluster::serve`].

use std::collections::HashMap;

use serde_json::{Value, json};

mod request;
mod select;
#[cfg(test)]
pub(crate) mod tests;

pub(crate) use request::Request;
use select::{Selector, prune};

/// How policy-evaluator wraps an error of the cluster side (a failure rule, a missing object).
pub const CALLBACK_FAILURE: &str = "Callback evaluation failure: ";

/// What answers the guest's host calls (binding, namespace, operation, payload): a [`Cluster`],
/// or the harness's recording one.
pub trait HostCalls: Send + Sync {
    fn host_call(
        &self,
        binding: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, String>;
}

/// The form of a list answer.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) enum Lists {
    /// `<api_version> <Kind>List`, as policy-server answers.
    #[default]
    Typed,
    /// `v1 List`, kube-rs' `ObjectList` default (the harness's `plain_lists`).
    #[cfg(any(test, feature = "harness"))]
    Plain,
}

/// The objects a case or a preview runs against; answers without recording.
#[derive(Debug, Default)]
pub struct Cluster {
    objects: Vec<Value>,
    /// The places of the objects of each `(apiVersion, kind)`, in order.
    kinds: HashMap<(String, String), Vec<usize>>,
    /// The first object of each `(apiVersion, kind, namespace, name)`: what a get finds.
    named: HashMap<Identity, usize>,
}

/// `(apiVersion, kind, namespace, name)`; `""` for a namespace (or name) it has none of.
type Identity = (String, String, String, String);

/// An object's `apiVersion` and `kind`, when both are strings.
fn kind_of(object: &Value) -> Option<(String, String)> {
    let text = |field: &str| object.get(field).and_then(Value::as_str).map(str::to_owned);
    Some((text("apiVersion")?, text("kind")?))
}

impl Cluster {
    /// A cluster holding these objects (any kind; `apiVersion`, `kind`, `metadata.name` and
    /// `metadata.namespace` are what calls match on). `Cluster::new(vec![])`: an empty cluster,
    /// where lists are empty and every get is not found.
    pub fn new(objects: Vec<Value>) -> Cluster {
        let mut cluster = Cluster::default();
        for (at, object) in objects.iter().enumerate() {
            let Some((api_version, kind)) = kind_of(object) else {
                continue;
            };
            let name = object.pointer("/metadata/name").and_then(Value::as_str);
            if let Some(name) = name {
                let identity = (
                    api_version.clone(),
                    kind.clone(),
                    namespace_of(object).to_owned(),
                    name.to_owned(),
                );
                cluster.named.entry(identity).or_insert(at);
            }
            cluster
                .kinds
                .entry((api_version, kind))
                .or_default()
                .push(at);
        }
        cluster.objects = objects;
        cluster
    }

    /// The objects of this `apiVersion` and `kind`, in order.
    fn of_kind<'a>(&'a self, api_version: &str, kind: &str) -> impl Iterator<Item = &'a Value> {
        let key = (api_version.to_owned(), kind.to_owned());
        let places = self.kinds.get(&key).map(Vec::as_slice).unwrap_or_default();
        places.iter().filter_map(|&at| self.objects.get(at))
    }

    pub fn objects(&self) -> &[Value] {
        &self.objects
    }

    /// The cluster side's answer: the JSON payload, or its error message.
    pub(crate) fn serve(&self, request: &Request, lists: Lists) -> Result<String, String> {
        let (api_version, kind, name, namespace) = request.identity();
        let answer = match request {
            Request::KubernetesGetResource { field_masks, .. } => {
                let identity = (
                    api_version.to_owned(),
                    kind.to_owned(),
                    namespace.unwrap_or_default().to_owned(),
                    name.unwrap_or_default().to_owned(),
                );
                match self
                    .named
                    .get(&identity)
                    .and_then(|&at| self.objects.get(at))
                {
                    Some(object) => prune(object, field_masks.as_ref()),
                    None => {
                        return Err(format!(
                            "Cannot find {api_version}/{kind} named '{}' inside of namespace '{:?}'",
                            name.unwrap_or_default(),
                            namespace
                        ));
                    }
                }
            }
            Request::KubernetesListResourceAll {
                label_selector,
                field_selector,
                field_masks,
                ..
            }
            | Request::KubernetesListResourceNamespace {
                label_selector,
                field_selector,
                field_masks,
                ..
            } => {
                let labels = label_selector
                    .as_deref()
                    .map(Selector::labels)
                    .transpose()?;
                let fields = field_selector
                    .as_deref()
                    .map(Selector::fields)
                    .transpose()?;
                let items: Vec<Value> = self
                    .of_kind(api_version, kind)
                    .filter(|o| namespace.is_none_or(|ns| namespace_of(o) == ns))
                    .filter(|o| labels.as_ref().is_none_or(|s| s.matches_labels(o)))
                    .filter(|o| fields.as_ref().is_none_or(|s| s.matches_fields(o)))
                    .map(|o| prune(o, field_masks.as_ref()))
                    .collect();
                let (api_version, kind) = match lists {
                    #[cfg(any(test, feature = "harness"))]
                    Lists::Plain => ("v1".to_owned(), "List".to_owned()),
                    Lists::Typed => (api_version.to_owned(), format!("{kind}List")),
                };
                json!({
                    "apiVersion": api_version,
                    "kind": kind,
                    "metadata": {},
                    "items": items,
                })
            }
        };
        Ok(answer.to_string())
    }
}

impl HostCalls for Cluster {
    /// Answers one waPC host call the way policy-server does.
    fn host_call(
        &self,
        binding: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, String> {
        if let Some(answer) = not_a_cluster_call(binding, namespace, operation) {
            return answer;
        }
        // This host offers the `kubernetes` capabilities only.
        if namespace != "kubernetes" {
            return Err(not_granted(namespace, operation));
        }
        let request = Request::of_call(operation, payload)?;
        self.serve(&request, Lists::Typed)
            .map(String::into_bytes)
            .map_err(|message| format!("{CALLBACK_FAILURE}{message}"))
    }
}

/// The answer to a call that never reaches the cluster: another binding than `kubewarden`, or
/// the SDK's log line (`tracing`); `None` for every other call.
pub(crate) fn not_a_cluster_call(
    binding: &str,
    namespace: &str,
    operation: &str,
) -> Option<Result<Vec<u8>, String>> {
    match (binding, namespace, operation) {
        ("kubewarden", "tracing", "log") => Some(Ok(Vec::new())),
        ("kubewarden", "tracing", other) => Some(Err(format!("unknown operation: {other}"))),
        ("kubewarden", _, _) => None,
        (other, _, _) => Some(Err(format!("unknown binding: {other}"))),
    }
}

/// policy-server's answer to a capability the policy was not granted.
pub(crate) fn not_granted(namespace: &str, operation: &str) -> String {
    format!(
        "Policy has not been granted access to the '{namespace}/{operation}' host capability. The violation has been reported."
    )
}

fn namespace_of(object: &Value) -> &str {
    object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
}
