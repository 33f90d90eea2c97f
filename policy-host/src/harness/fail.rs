//! What the guest asked ([`Call`]) and the rules that make calls fail ([`FailRule`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cluster::Request;

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

impl Call {
    /// The call as the guest made it: `operation`, or `namespace/operation` outside `kubernetes`;
    /// the payload as JSON, or as a JSON string when it is not JSON.
    pub(super) fn of(namespace: &str, operation: &str, payload: &[u8]) -> Call {
        let request = serde_json::from_slice(payload)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(payload).into_owned()));
        let operation = match namespace {
            "kubernetes" => operation.to_owned(),
            _ => format!("{namespace}/{operation}"),
        };
        Call { operation, request }
    }
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

    pub(super) fn matches(&self, operation: &str, request: &Request) -> bool {
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
