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

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::{Mutex, PoisonError};

mod fail;
mod request;
mod select;
#[cfg(test)]
mod tests;

pub use fail::{Call, FailRule, NO_CLIENT};
use request::Request;
use select::{Selector, prune};

/// How policy-evaluator wraps an error of the cluster side (a failure rule, a missing object).
pub const CALLBACK_FAILURE: &str = "Callback evaluation failure: ";

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
                    Err(format!(
                        "{CALLBACK_FAILURE}the e2e host does not serve can_i"
                    )),
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
            .map_err(|message| format!("{CALLBACK_FAILURE}{message}"));
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
