//! The cluster behind the e2e host's context-aware calls: the objects a policy-server's watch
//! caches would hold, rules that make calls fail, and a record of every call the guest made.
//!
//! It answers what policy-server / kwctl answer (policy-evaluator's callback handler), on waPC
//! binding `kubewarden`, namespace `kubernetes`:
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
//! - `can_i` and unknown operations are not served.
//!
//! A host error reaches the guest as the waPC host error (the SDK's `Error::HostCall`, shown as
//! `error invoking host capability kubernetes.get_resource: Host error: ...`). Errors of the
//! cluster side (a failure rule, a missing object) read `Callback evaluation failure: <message>`,
//! as policy-evaluator wraps them; a policy-server whose `policies.yml` grants no
//! `hostCapabilities` ([`Cluster::deny_all`]) answers every call, before reading it, with
//! `Policy has not been granted access to the 'kubernetes/get_resource' host capability. The
//! violation has been reported.` The SDK's log lines (`tracing`/`log`) are always answered and
//! never recorded.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// One host call the guest made (the SDK's log lines are not recorded).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Call {
    /// `get_resource`, `list_resources_all`, `list_resources_by_namespace`, `can_i`; outside the
    /// `kubernetes` namespace, `namespace/operation` (`oci/v1/verify`).
    pub operation: String,
    /// The request exactly as the guest sent it (the SDK's snake_case fields: `api_version`,
    /// `kind`, `name`, `namespace`, `disable_cache`, `label_selector`, `field_selector`,
    /// `field_masks`); a JSON string when the payload was not JSON.
    pub request: Value,
}

/// Makes the calls it matches fail. Unset fields match anything.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FailRule {
    /// `get_resource`, `list_resources_all`, `list_resources_by_namespace`.
    pub operation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Only `get_resource` requests carry a name: a rule with a name matches no list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `""` matches requests without a namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// What the cluster side says; the guest reads `Callback evaluation failure: <message>`.
    /// Default: [`NO_CLIENT`], what a policy-server without a cluster answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// policy-server started with `--ignore-kubernetes-connection-failure` and no cluster.
pub const NO_CLIENT: &str = "kube::Client was not initialized properly";

impl FailRule {
    /// Every call of this operation fails.
    pub fn new(operation: &str) -> FailRule {
        FailRule {
            operation: operation.to_owned(),
            ..FailRule::default()
        }
    }

    pub fn api_version(mut self, api_version: &str) -> FailRule {
        self.api_version = Some(api_version.to_owned());
        self
    }

    pub fn kind(mut self, kind: &str) -> FailRule {
        self.kind = Some(kind.to_owned());
        self
    }

    pub fn name(mut self, name: &str) -> FailRule {
        self.name = Some(name.to_owned());
        self
    }

    pub fn namespace(mut self, namespace: &str) -> FailRule {
        self.namespace = Some(namespace.to_owned());
        self
    }

    pub fn message(mut self, message: &str) -> FailRule {
        self.message = Some(message.to_owned());
        self
    }

    fn matches(&self, operation: &str, request: &Request) -> bool {
        let (api_version, kind, name, namespace) = request.identity();
        let given = |want: &Option<String>, got: Option<&str>| {
            want.as_deref()
                .is_none_or(|want| want == got.unwrap_or_default())
        };
        self.operation == operation
            && given(&self.api_version, Some(api_version))
            && given(&self.kind, Some(kind))
            && self.name.as_deref().is_none_or(|want| Some(want) == name)
            && given(&self.namespace, namespace)
    }
}

/// The cluster a case runs against. Shared with the host callback through an `Arc`.
#[derive(Debug, Default)]
pub struct Cluster {
    objects: Vec<Value>,
    rules: Vec<FailRule>,
    deny_all: bool,
    plain_lists: bool,
    records: Mutex<Vec<Record>>,
}

#[derive(Debug, Clone)]
struct Record {
    call: Call,
    /// What kwctl's replay proxy would have seen: the calls that pass the capability check and
    /// parse, with the cluster side's answer.
    exchange: Option<(Request, Result<String, String>)>,
}

/// The requests the host parses, with the SDK's field names. The variant names are kwctl's YAML
/// tags.
#[allow(clippy::enum_variant_names)]
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Request {
    /// kwctl's `CallbackRequestType::KubernetesListResourceNamespace`.
    KubernetesListResourceNamespace {
        api_version: String,
        kind: String,
        namespace: String,
        label_selector: Option<String>,
        field_selector: Option<String>,
        field_masks: Option<BTreeSet<String>>,
    },
    /// `CallbackRequestType::KubernetesListResourceAll`.
    KubernetesListResourceAll {
        api_version: String,
        kind: String,
        label_selector: Option<String>,
        field_selector: Option<String>,
        field_masks: Option<BTreeSet<String>>,
    },
    /// `CallbackRequestType::KubernetesGetResource`.
    KubernetesGetResource {
        api_version: String,
        kind: String,
        name: String,
        namespace: Option<String>,
        disable_cache: bool,
        field_masks: Option<BTreeSet<String>>,
    },
}

#[derive(Deserialize)]
struct ListByNamespace {
    api_version: String,
    kind: String,
    namespace: String,
    label_selector: Option<String>,
    field_selector: Option<String>,
    field_masks: Option<BTreeSet<String>>,
}

#[derive(Deserialize)]
struct ListAll {
    api_version: String,
    kind: String,
    label_selector: Option<String>,
    field_selector: Option<String>,
    field_masks: Option<BTreeSet<String>>,
}

#[derive(Deserialize)]
struct Get {
    api_version: String,
    kind: String,
    name: String,
    namespace: Option<String>,
    disable_cache: bool,
    field_masks: Option<BTreeSet<String>>,
}

impl Request {
    fn parse(operation: &str, payload: &[u8]) -> Option<Result<Request, String>> {
        let parsed = match operation {
            "list_resources_by_namespace" => serde_json::from_slice::<ListByNamespace>(payload)
                .map(|r| Request::KubernetesListResourceNamespace {
                    api_version: r.api_version,
                    kind: r.kind,
                    namespace: r.namespace,
                    label_selector: r.label_selector,
                    field_selector: r.field_selector,
                    field_masks: r.field_masks,
                }),
            "list_resources_all" => serde_json::from_slice::<ListAll>(payload).map(|r| {
                Request::KubernetesListResourceAll {
                    api_version: r.api_version,
                    kind: r.kind,
                    label_selector: r.label_selector,
                    field_selector: r.field_selector,
                    field_masks: r.field_masks,
                }
            }),
            "get_resource" => {
                serde_json::from_slice::<Get>(payload).map(|r| Request::KubernetesGetResource {
                    api_version: r.api_version,
                    kind: r.kind,
                    name: r.name,
                    namespace: r.namespace,
                    disable_cache: r.disable_cache,
                    field_masks: r.field_masks,
                })
            }
            _ => return None,
        };
        Some(parsed.map_err(|e| e.to_string()))
    }

    /// `(api_version, kind, name, namespace)`.
    fn identity(&self) -> (&str, &str, Option<&str>, Option<&str>) {
        match self {
            Request::KubernetesListResourceNamespace {
                api_version,
                kind,
                namespace,
                ..
            } => (api_version, kind, None, Some(namespace)),
            Request::KubernetesListResourceAll {
                api_version, kind, ..
            } => (api_version, kind, None, None),
            Request::KubernetesGetResource {
                api_version,
                kind,
                name,
                namespace,
                ..
            } => (api_version, kind, Some(name), namespace.as_deref()),
        }
    }
}

impl Cluster {
    /// A cluster holding these objects (any kind; `apiVersion`, `kind`, `metadata.name` and
    /// `metadata.namespace` are what calls match on). `Cluster::new(vec![])`: an empty cluster,
    /// where lists are empty and every get is not found.
    pub fn new(objects: Vec<Value>) -> Cluster {
        Cluster {
            objects,
            ..Cluster::default()
        }
    }

    /// Calls matching `rule` fail (the first matching rule gives the message).
    pub fn fail(mut self, rule: FailRule) -> Cluster {
        self.rules.push(rule);
        self
    }

    /// The policy is granted no host capability: every `kubernetes` call is refused.
    pub fn deny_all(mut self) -> Cluster {
        self.deny_all = true;
        self
    }

    /// Lists are answered as a plain `{"apiVersion": "v1", "kind": "List"}` (kube-rs'
    /// `ObjectList` default) instead of `<api_version> <Kind>List`.
    pub fn plain_lists(mut self) -> Cluster {
        self.plain_lists = true;
        self
    }

    pub fn objects(&self) -> &[Value] {
        &self.objects
    }

    /// Every call made so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.lock().iter().map(|r| r.call.clone()).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Record>> {
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Answers one waPC host call the way policy-server does, and records it.
    pub fn host_call(
        &self,
        binding: &str,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, String> {
        if binding != "kubewarden" {
            return Err(format!("unknown binding: {binding}"));
        }
        if namespace == "tracing" {
            return match operation {
                "log" => Ok(Vec::new()),
                other => Err(format!("unknown operation: {other}")),
            };
        }
        let request = serde_json::from_slice(payload)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(payload).into_owned()));
        let call = Call {
            operation: if namespace == "kubernetes" {
                operation.to_owned()
            } else {
                format!("{namespace}/{operation}")
            },
            request,
        };
        let (result, exchange) = self.respond(namespace, operation, payload);
        self.lock().push(Record { call, exchange });
        result.map(String::into_bytes)
    }

    #[allow(clippy::type_complexity)]
    fn respond(
        &self,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> (
        Result<String, String>,
        Option<(Request, Result<String, String>)>,
    ) {
        // This host offers the `kubernetes` capabilities only.
        if self.deny_all || namespace != "kubernetes" {
            return (
                Err(format!(
                    "Policy has not been granted access to the '{namespace}/{operation}' host capability. The violation has been reported."
                )),
                None,
            );
        }
        let request = match Request::parse(operation, payload) {
            None if operation == "can_i" => {
                return (
                    Err("Callback evaluation failure: the e2e host does not serve can_i".into()),
                    None,
                );
            }
            None => return (Err(format!("unknown operation: {operation}")), None),
            Some(Err(e)) => return (Err(e), None),
            Some(Ok(request)) => request,
        };
        let answer = match self.rules.iter().find(|r| r.matches(operation, &request)) {
            Some(rule) => Err(rule.message.clone().unwrap_or_else(|| NO_CLIENT.to_owned())),
            None => self.serve(&request),
        };
        let result = answer
            .clone()
            .map_err(|message| format!("Callback evaluation failure: {message}"));
        (result, Some((request, answer)))
    }

    /// The cluster side's answer: the JSON payload, or its error message.
    fn serve(&self, request: &Request) -> Result<String, String> {
        let (api_version, kind, name, namespace) = request.identity();
        let of_kind = self.objects.iter().filter(|o| {
            o["apiVersion"].as_str() == Some(api_version) && o["kind"].as_str() == Some(kind)
        });
        let answer = match request {
            Request::KubernetesGetResource { field_masks, .. } => {
                let found = of_kind
                    .filter(|o| o.pointer("/metadata/name").and_then(Value::as_str) == name)
                    .find(|o| namespace_of(o) == namespace.unwrap_or_default());
                match found {
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
                let items: Vec<Value> = of_kind
                    .filter(|o| namespace.is_none_or(|ns| namespace_of(o) == ns))
                    .filter(|o| labels.as_ref().is_none_or(|s| s.matches_labels(o)))
                    .filter(|o| fields.as_ref().is_none_or(|s| s.matches_fields(o)))
                    .map(|o| prune(o, field_masks.as_ref()))
                    .collect();
                let (api_version, kind) = match self.plain_lists {
                    true => ("v1".to_owned(), "List".to_owned()),
                    false => (api_version.to_owned(), format!("{kind}List")),
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

    /// A kwctl session (`kwctl run --allow-context-aware --replay-host-capabilities-interactions
    /// FILE`) replaying the calls recorded so far: each request as kwctl's tagged YAML
    /// (`!KubernetesGetResource ...`), each answer `type: Success` with the JSON `payload` or
    /// `type: Error` with the cluster side's `message`. Calls refused before they reach the
    /// cluster (denied capability, unreadable request) are not part of a session.
    pub fn session_yaml(&self) -> Result<String, serde_yaml::Error> {
        let mut exchanges = Vec::new();
        for record in self.lock().iter() {
            if let Some((request, answer)) = &record.exchange {
                exchanges.push(Exchange {
                    request: serde_yaml::to_string(request)?,
                    response: match answer {
                        Ok(payload) => Response::Success {
                            payload: payload.clone(),
                        },
                        Err(message) => Response::Error {
                            message: message.clone(),
                        },
                    },
                });
            }
        }
        serde_yaml::to_string(&exchanges)
    }
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(tag = "type")]
struct Exchange {
    request: String,
    response: Response,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(tag = "type")]
enum Response {
    Success { payload: String },
    Error { message: String },
}

fn namespace_of(object: &Value) -> &str {
    object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Keeps only the fields named by the masks (dotted paths; arrays are traversed), as the host
/// prunes objects for `field_masks`. No masks, or an empty set: the whole object.
fn prune(object: &Value, masks: Option<&BTreeSet<String>>) -> Value {
    #[derive(Default)]
    struct Node(BTreeMap<String, Node>);
    fn keep(value: &Value, node: &Node) -> Value {
        if node.0.is_empty() {
            return value.clone();
        }
        match value {
            Value::Object(fields) => Value::Object(
                fields
                    .iter()
                    .filter_map(|(k, v)| node.0.get(k).map(|child| (k.clone(), keep(v, child))))
                    .collect::<Map<String, Value>>(),
            ),
            Value::Array(items) => Value::Array(items.iter().map(|v| keep(v, node)).collect()),
            other => other.clone(),
        }
    }
    let Some(masks) = masks.filter(|m| !m.is_empty()) else {
        return object.clone();
    };
    let mut root = Node::default();
    for mask in masks {
        let mut node = &mut root;
        for part in mask.split('.') {
            node = node.0.entry(part.to_owned()).or_default();
        }
    }
    keep(object, &root)
}

/// An equality-based selector: `key=value`, `key==value`, `key!=value`, `key`, `!key`.
struct Selector(Vec<Requirement>);

enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    Exists(String),
    Absent(String),
}

impl Selector {
    fn parse(text: &str, what: &str) -> Result<Selector, String> {
        let mut requirements = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let unsupported = part.contains(' ') || part.contains('(');
            if unsupported {
                return Err(format!(
                    "e2e host: unsupported {what} selector {text:?} (only a=b, a==b, a!=b, a, !a)"
                ));
            }
            requirements.push(if let Some((k, v)) = part.split_once("!=") {
                Requirement::NotEquals(k.to_owned(), v.to_owned())
            } else if let Some((k, v)) = part.split_once("==").or_else(|| part.split_once('=')) {
                Requirement::Equals(k.to_owned(), v.to_owned())
            } else if let Some(k) = part.strip_prefix('!') {
                Requirement::Absent(k.to_owned())
            } else {
                Requirement::Exists(part.to_owned())
            });
        }
        Ok(Selector(requirements))
    }

    fn labels(text: &str) -> Result<Selector, String> {
        Selector::parse(text, "label")
    }

    fn fields(text: &str) -> Result<Selector, String> {
        Selector::parse(text, "field")
    }

    fn matches(&self, lookup: impl Fn(&str) -> Option<String>) -> bool {
        self.0.iter().all(|r| match r {
            Requirement::Equals(k, v) => lookup(k).as_ref() == Some(v),
            Requirement::NotEquals(k, v) => lookup(k).as_ref() != Some(v),
            Requirement::Exists(k) => lookup(k).is_some(),
            Requirement::Absent(k) => lookup(k).is_none(),
        })
    }

    fn matches_labels(&self, object: &Value) -> bool {
        let labels = object.pointer("/metadata/labels");
        self.matches(|key| {
            labels
                .and_then(|l| l.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
    }

    fn matches_fields(&self, object: &Value) -> bool {
        self.matches(|path| {
            let mut value = object;
            for part in path.split('.') {
                value = value.get(part)?;
            }
            Some(match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kubevirt() -> Value {
        json!({
            "apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt", "labels": {"app": "kv"}},
            "spec": {"configuration": {"evictionStrategy": "LiveMigrate"}},
        })
    }

    fn pvc(name: &str, namespace: &str, mode: &str) -> Value {
        json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"accessModes": [mode]},
        })
    }

    fn node(name: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    }

    fn sample() -> Cluster {
        Cluster::new(vec![
            kubevirt(),
            pvc("data", "team-a", "ReadWriteOnce"),
            pvc("data", "team-b", "ReadWriteMany"),
            pvc("logs", "team-a", "ReadWriteMany"),
            node("n1"),
        ])
    }

    fn list_all(api_version: &str, kind: &str) -> Value {
        json!({"api_version": api_version, "kind": kind, "label_selector": null,
               "field_selector": null, "field_masks": null})
    }

    fn get(kind: &str, name: &str, namespace: Option<&str>) -> Value {
        let api_version = if kind == "KubeVirt" {
            "kubevirt.io/v1"
        } else {
            "v1"
        };
        json!({"api_version": api_version, "kind": kind, "name": name,
               "namespace": namespace, "disable_cache": false, "field_masks": null})
    }

    fn call(cluster: &Cluster, operation: &str, request: &Value) -> Result<Value, String> {
        let bytes = serde_json::to_vec(request).map_err(|e| e.to_string())?;
        cluster
            .host_call("kubewarden", "kubernetes", operation, &bytes)
            .map(|answer| serde_json::from_slice(&answer).unwrap_or(Value::Null))
    }

    fn names(list: &Value) -> Vec<String> {
        list["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|o| {
                format!(
                    "{}/{}",
                    namespace_of(o),
                    o["metadata"]["name"].as_str().unwrap_or("?")
                )
            })
            .collect()
    }

    #[test]
    fn list_answers() {
        let with = |fields: Value| {
            let mut request = list_all("v1", "PersistentVolumeClaim");
            if let (Some(r), Some(f)) = (request.as_object_mut(), fields.as_object()) {
                r.extend(f.clone());
            }
            request
        };
        let table: Vec<(&str, Value, Vec<&str>)> = vec![
            (
                "kubevirt",
                list_all("kubevirt.io/v1", "KubeVirt"),
                vec!["kubevirt/kubevirt"],
            ),
            (
                "claims",
                list_all("v1", "PersistentVolumeClaim"),
                vec!["team-a/data", "team-b/data", "team-a/logs"],
            ),
            (
                "wrong version",
                list_all("kubevirt.io/v1alpha3", "KubeVirt"),
                vec![],
            ),
            ("no such kind", list_all("v1", "Secret"), vec![]),
            ("cluster-scoped", list_all("v1", "Node"), vec!["/n1"]),
            (
                "field selector",
                with(json!({"field_selector": "metadata.namespace=team-a"})),
                vec!["team-a/data", "team-a/logs"],
            ),
            (
                "field selector !=",
                with(json!({"field_selector": "metadata.name!=data"})),
                vec!["team-a/logs"],
            ),
            (
                "label selector",
                with(json!({"label_selector": "app"})),
                vec![],
            ),
        ];
        let cluster = sample();
        for (what, request, want) in table {
            let list = call(&cluster, "list_resources_all", &request).unwrap_or_default();
            assert_eq!(names(&list), want, "{what}");
            let kind = request["kind"].as_str().unwrap_or_default();
            assert_eq!(list["kind"], json!(format!("{kind}List")), "{what}");
            assert_eq!(list["apiVersion"], request["api_version"], "{what}");
            assert_eq!(list["metadata"], json!({}), "{what}");
        }
        let by_namespace = json!({"api_version": "v1", "kind": "PersistentVolumeClaim",
            "namespace": "team-b", "label_selector": null, "field_selector": null, "field_masks": null});
        let list = call(&cluster, "list_resources_by_namespace", &by_namespace);
        assert_eq!(names(&list.unwrap_or_default()), vec!["team-b/data"]);
    }

    #[test]
    fn label_selectors() {
        let cluster = Cluster::new(vec![kubevirt()]);
        let table = [
            ("app=kv", Ok(1)),
            ("app==kv", Ok(1)),
            ("app!=kv", Ok(0)),
            ("app", Ok(1)),
            ("!app", Ok(0)),
            ("app=kv,tier", Ok(0)),
            ("app in (kv)", Err(())),
        ];
        for (selector, want) in table {
            let mut request = list_all("kubevirt.io/v1", "KubeVirt");
            request["label_selector"] = json!(selector);
            let got = call(&cluster, "list_resources_all", &request)
                .map(|list| names(&list).len())
                .map_err(|e| assert!(e.contains("e2e host: unsupported label selector"), "{e}"));
            assert_eq!(got, want, "{selector}");
        }
    }

    #[test]
    fn get_answers() {
        let cluster = sample();
        let table: Vec<(Value, Result<Value, &str>)> = vec![
            (
                get("PersistentVolumeClaim", "data", Some("team-a")),
                Ok(pvc("data", "team-a", "ReadWriteOnce")),
            ),
            (
                get("PersistentVolumeClaim", "data", Some("team-b")),
                Ok(pvc("data", "team-b", "ReadWriteMany")),
            ),
            (get("Node", "n1", None), Ok(node("n1"))),
            (get("Node", "n1", Some("")), Ok(node("n1"))),
            (
                get("PersistentVolumeClaim", "data", Some("team-c")),
                Err(
                    "Callback evaluation failure: Cannot find v1/PersistentVolumeClaim named 'data' inside of namespace 'Some(\"team-c\")'",
                ),
            ),
            (
                get("PersistentVolumeClaim", "data", None),
                Err(
                    "Callback evaluation failure: Cannot find v1/PersistentVolumeClaim named 'data' inside of namespace 'None'",
                ),
            ),
            (
                get("KubeVirt", "other", Some("kubevirt")),
                Err(
                    "Callback evaluation failure: Cannot find kubevirt.io/v1/KubeVirt named 'other' inside of namespace 'Some(\"kubevirt\")'",
                ),
            ),
        ];
        for (request, want) in table {
            let got = call(&cluster, "get_resource", &request);
            assert_eq!(got, want.map_err(str::to_owned), "{request}");
        }
    }

    #[test]
    fn field_masks_prune() {
        let cluster = sample();
        let mut request = get("KubeVirt", "kubevirt", Some("kubevirt"));
        request["field_masks"] = json!(["metadata.name", "spec.configuration.evictionStrategy"]);
        assert_eq!(
            call(&cluster, "get_resource", &request),
            Ok(json!({"metadata": {"name": "kubevirt"},
                      "spec": {"configuration": {"evictionStrategy": "LiveMigrate"}}}))
        );
        let mut request = list_all("v1", "PersistentVolumeClaim");
        request["field_masks"] = json!(["spec.accessModes"]);
        let list = call(&cluster, "list_resources_all", &request).unwrap_or_default();
        assert_eq!(
            list["items"][0],
            json!({"spec": {"accessModes": ["ReadWriteOnce"]}})
        );
    }

    #[test]
    fn failure_rules() {
        let cluster = sample()
            .fail(
                FailRule::new("get_resource")
                    .kind("PersistentVolumeClaim")
                    .name("data")
                    .namespace("team-a")
                    .message("timeout"),
            )
            .fail(FailRule::new("list_resources_all").api_version("kubevirt.io/v1"));
        let table: Vec<(&str, Value, Result<(), &str>)> = vec![
            (
                "get_resource",
                get("PersistentVolumeClaim", "data", Some("team-a")),
                Err("Callback evaluation failure: timeout"),
            ),
            (
                "get_resource",
                get("PersistentVolumeClaim", "data", Some("team-b")),
                Ok(()),
            ),
            (
                "get_resource",
                get("PersistentVolumeClaim", "logs", Some("team-a")),
                Ok(()),
            ),
            (
                "list_resources_all",
                list_all("kubevirt.io/v1", "KubeVirt"),
                Err("Callback evaluation failure: kube::Client was not initialized properly"),
            ),
            (
                "list_resources_all",
                list_all("v1", "PersistentVolumeClaim"),
                Ok(()),
            ),
        ];
        for (operation, request, want) in table {
            let got = call(&cluster, operation, &request).map(|_| ());
            assert_eq!(got, want.map_err(str::to_owned), "{operation} {request}");
        }
        // A rule with a name never matches a list; one with namespace "" matches no namespace.
        let cluster = sample()
            .fail(FailRule::new("list_resources_all").name("kubevirt"))
            .fail(FailRule::new("get_resource").namespace(""));
        assert!(
            call(
                &cluster,
                "list_resources_all",
                &list_all("kubevirt.io/v1", "KubeVirt")
            )
            .is_ok()
        );
        assert!(call(&cluster, "get_resource", &get("Node", "n1", None)).is_err());
        assert!(
            call(
                &cluster,
                "get_resource",
                &get("PersistentVolumeClaim", "logs", Some("team-a"))
            )
            .is_ok()
        );
    }

    #[test]
    fn deny_all_refuses_everything_and_records_it() {
        let cluster = sample().deny_all();
        for (operation, request) in [
            ("list_resources_all", list_all("kubevirt.io/v1", "KubeVirt")),
            (
                "get_resource",
                get("PersistentVolumeClaim", "data", Some("team-a")),
            ),
            ("get_resource", json!("not even a request")),
        ] {
            assert_eq!(
                call(&cluster, operation, &request),
                Err(format!(
                    "Policy has not been granted access to the 'kubernetes/{operation}' host capability. The violation has been reported."
                )),
            );
        }
        assert_eq!(cluster.calls().len(), 3);
        assert_eq!(cluster.session_yaml().ok().as_deref(), Some("[]\n"));
        assert_eq!(
            cluster.host_call("kubewarden", "tracing", "log", b"{}"),
            Ok(Vec::new())
        );
    }

    #[test]
    fn other_calls() {
        let cluster = sample();
        let table = [
            (
                "other",
                "kubernetes",
                "get_resource",
                "unknown binding: other",
            ),
            (
                "kubewarden",
                "oci",
                "v1/verify",
                "Policy has not been granted access to the 'oci/v1/verify' host capability. The violation has been reported.",
            ),
            (
                "kubewarden",
                "kubernetes",
                "watch",
                "unknown operation: watch",
            ),
            (
                "kubewarden",
                "kubernetes",
                "can_i",
                "Callback evaluation failure: the e2e host does not serve can_i",
            ),
            (
                "kubewarden",
                "kubernetes",
                "get_resource",
                "missing field `name` at line 1 column 34",
            ),
        ];
        for (binding, namespace, operation, want) in table {
            let got = cluster.host_call(
                binding,
                namespace,
                operation,
                br#"{"api_version":"v1","kind":"Node"}"#,
            );
            assert_eq!(
                got,
                Err(want.to_owned()),
                "{binding}/{namespace}/{operation}"
            );
        }
        let operations: Vec<String> = cluster.calls().into_iter().map(|c| c.operation).collect();
        assert_eq!(
            operations,
            ["oci/v1/verify", "watch", "can_i", "get_resource"],
            "every call but another binding's is recorded"
        );
    }

    #[test]
    fn records_every_call_in_order_with_the_request_as_sent() {
        let cluster = Cluster::new(vec![kubevirt()])
            .fail(FailRule::new("get_resource").name("broken").message("boom"));
        let payloads: [(&str, &[u8]); 5] = [
            ("list_resources_all", br#"{"api_version":"kubevirt.io/v1","kind":"KubeVirt","label_selector":null,"field_selector":null,"field_masks":null}"#),
            ("get_resource", br#"{"api_version":"v1","kind":"PersistentVolumeClaim","name":"data","namespace":"team-a","disable_cache":false,"field_masks":null,"extra":1}"#),
            ("get_resource", br#"{"api_version":"v1","kind":"PersistentVolumeClaim","name":"broken","namespace":"team-a","disable_cache":true}"#),
            ("get_resource", b"not json"),
            ("list_resources_all", br#"{"api_version":"kubevirt.io/v1","kind":"KubeVirt"}"#),
        ];
        for (operation, payload) in payloads {
            let _ = cluster.host_call("kubewarden", "kubernetes", operation, payload);
            let _ = cluster.host_call("kubewarden", "tracing", "log", b"{\"msg\":\"x\"}");
        }
        let calls = cluster.calls();
        assert_eq!(calls.len(), payloads.len(), "log lines are not recorded");
        for (call, (operation, payload)) in calls.iter().zip(payloads) {
            assert_eq!(call.operation, operation);
            let want = serde_json::from_slice(payload)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(payload).into()));
            assert_eq!(call.request, want);
        }
        let text = serde_json::to_string(&calls[0]).unwrap_or_default();
        assert_eq!(
            serde_json::from_str::<Call>(&text).ok().as_ref(),
            Some(&calls[0])
        );
    }

    /// The session in kwctl's own format, read back the way kwctl's replay proxy reads it.
    #[test]
    fn session_for_kwctl() {
        let cluster = Cluster::new(vec![kubevirt()]).fail(
            FailRule::new("get_resource")
                .name("broken")
                .message("timeout"),
        );
        let _ = call(
            &cluster,
            "list_resources_all",
            &list_all("kubevirt.io/v1", "KubeVirt"),
        );
        let _ = call(
            &cluster,
            "get_resource",
            &get("PersistentVolumeClaim", "data", Some("team-a")),
        );
        let _ = call(
            &cluster,
            "get_resource",
            &get("PersistentVolumeClaim", "broken", Some("team-a")),
        );
        let _ = cluster.host_call("kubewarden", "kubernetes", "get_resource", b"{}");
        let yaml = cluster.session_yaml().unwrap_or_default();
        let want_start = "- type: Exchange\n  request: |\n    !KubernetesListResourceAll\n    api_version: kubevirt.io/v1\n    kind: KubeVirt\n    label_selector: null\n    field_selector: null\n    field_masks: null\n  response:\n    type: Success\n    payload: '";
        assert!(yaml.starts_with(want_start), "{yaml}");
        let exchanges: Vec<Exchange> = serde_yaml::from_str(&yaml).unwrap_or_default();
        assert_eq!(
            exchanges.len(),
            3,
            "the unreadable request never reaches kwctl's proxy"
        );
        let requests: Vec<Request> = exchanges
            .iter()
            .filter_map(|e| serde_yaml::from_str(&e.request).ok())
            .collect();
        assert_eq!(
            requests[1],
            Request::KubernetesGetResource {
                api_version: "v1".into(),
                kind: "PersistentVolumeClaim".into(),
                name: "data".into(),
                namespace: Some("team-a".into()),
                disable_cache: false,
                field_masks: None,
            }
        );
        let Response::Success { payload } = &exchanges[0].response else {
            panic!("want a success: {yaml}");
        };
        assert_eq!(
            serde_json::from_str::<Value>(payload).ok(),
            Some(
                json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirtList", "metadata": {}, "items": [kubevirt()]})
            )
        );
        assert_eq!(
            exchanges[1].response,
            Response::Error {
                message: "Cannot find v1/PersistentVolumeClaim named 'data' inside of namespace 'Some(\"team-a\")'".into()
            }
        );
        assert_eq!(
            exchanges[2].response,
            Response::Error {
                message: "timeout".into()
            }
        );
        // kwctl's own recorded sessions omit `field_masks` (older versions): still the same request.
        let old: Request = serde_yaml::from_str(
            "!KubernetesGetResource\napi_version: v1\nkind: Namespace\nname: test-policy\nnamespace: null\ndisable_cache: false\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            old.identity(),
            ("v1", "Namespace", Some("test-policy"), None)
        );
    }
}
