//! The host calls the guest sends, parsed with the SDK's field names (kwctl's YAML tags).

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// The requests the host parses, with the SDK's field names. The variant names are kwctl's YAML
/// tags.
#[allow(clippy::enum_variant_names)]
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub(crate) enum Request {
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
    pub(crate) fn identity(&self) -> (&str, &str, Option<&str>, Option<&str>) {
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

impl Request {
    /// The request of a `kubernetes` call, or the error the host answers: `can_i` is not
    /// served, other operations are unknown, a request that does not parse says why.
    pub(crate) fn of_call(operation: &str, payload: &[u8]) -> Result<Request, String> {
        match Request::parse(operation, payload) {
            None if operation == "can_i" => Err(format!(
                "{}the e2e host does not serve can_i",
                super::CALLBACK_FAILURE
            )),
            None => Err(format!("unknown operation: {operation}")),
            Some(parsed) => parsed,
        }
    }
}
