//! The e2e harness (feature `harness`; always in policy-host's own tests): a
//! [`RecordingCluster`] that answers as the runtime [`Cluster`] does and also records every call,
//! makes calls fail by rule ([`FailRule`]), refuses every capability ([`RecordingCluster::deny_all`])
//! or answers plain lists; a kwctl session of what it recorded; the workspace's fixtures and
//! module. The plugin ships none of it.
//!
//! What a recording cluster adds to the runtime's answers:
//! - a [`FailRule`] that matches a call makes it fail with the rule's message, as the cluster
//!   side's error (`Callback evaluation failure: <message>`);
//! - a cluster made with [`RecordingCluster::deny_all`] is a policy-server whose `policies.yml`
//!   grants no `hostCapabilities`: every call is answered, before it is read, with `Policy has not
//!   been granted access to the 'kubernetes/get_resource' host capability. The violation has been
//!   reported.`;
//! - every call but the SDK's log lines (and calls on another binding) is recorded, in order.

use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::Value;

use crate::cluster::{
    CALLBACK_FAILURE, Cluster, HostCalls, Lists, Request, not_a_cluster_call, not_granted,
};

mod fail;
mod replay;
#[cfg(test)]
mod tests;

pub use fail::{Call, FailRule, NO_CLIENT};

/// A [`Cluster`] that records every call and fails some by rule. Shared with the host callback
/// through an `Arc`.
#[derive(Debug, Default)]
pub struct RecordingCluster {
    cluster: Cluster,
    rules: Vec<FailRule>,
    deny_all: bool,
    lists: Lists,
    records: Mutex<Vec<Record>>,
}

#[derive(Debug, Clone)]
struct Record {
    call: Call,
    /// What kwctl's replay proxy would have seen: the calls that pass the capability check and
    /// parse, with the cluster side's answer.
    exchange: Option<(Request, Result<String, String>)>,
}

impl RecordingCluster {
    /// A cluster holding these objects, as [`Cluster::new`].
    pub fn new(objects: Vec<Value>) -> RecordingCluster {
        RecordingCluster {
            cluster: Cluster::new(objects),
            ..RecordingCluster::default()
        }
    }

    /// Calls matching `rule` fail (the first matching rule gives the message).
    pub fn fail(mut self, rule: FailRule) -> RecordingCluster {
        self.rules.push(rule);
        self
    }

    /// The policy is granted no host capability: every `kubernetes` call is refused.
    pub fn deny_all(mut self) -> RecordingCluster {
        self.deny_all = true;
        self
    }

    /// Lists are answered as a plain `{"apiVersion": "v1", "kind": "List"}` (kube-rs'
    /// `ObjectList` default) instead of `<api_version> <Kind>List`.
    pub fn plain_lists(mut self) -> RecordingCluster {
        self.lists = Lists::Plain;
        self
    }

    pub fn objects(&self) -> &[Value] {
        self.cluster.objects()
    }

    /// Every call made so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.lock().iter().map(|r| r.call.clone()).collect()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Record>> {
        self.records.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The answer to a recorded call, and what kwctl's replay proxy would have seen of it.
    fn respond(
        &self,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> (Record, Result<String, String>) {
        let call = Call::of(namespace, operation, payload);
        let unread = |call, error| {
            let record = Record {
                call,
                exchange: None,
            };
            (record, Err(error))
        };
        if self.deny_all || namespace != "kubernetes" {
            return unread(call, not_granted(namespace, operation));
        }
        let request = match Request::of_call(operation, payload) {
            Ok(request) => request,
            Err(error) => return unread(call, error),
        };
        let answer = match self.rules.iter().find(|r| r.matches(operation, &request)) {
            Some(rule) => Err(rule.message.clone().unwrap_or_else(|| NO_CLIENT.to_owned())),
            None => self.cluster.serve(&request, self.lists),
        };
        let result = answer
            .clone()
            .map_err(|message| format!("{CALLBACK_FAILURE}{message}"));
        let record = Record {
            call,
            exchange: Some((request, answer)),
        };
        (record, result)
    }
}

impl HostCalls for RecordingCluster {
    /// Answers one waPC host call as [`Cluster`] does (or as its rules say), and records it.
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
        let (record, result) = self.respond(namespace, operation, payload);
        self.lock().push(record);
        result.map(String::into_bytes)
    }
}

/// The workspace root (where `make policy.wasm` puts the module and the fixtures live).
pub fn workspace_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default()
}

/// `$POLICY_WASM`, or `policy.wasm` at the workspace root.
pub fn default_module_path() -> std::path::PathBuf {
    std::env::var_os("POLICY_WASM")
        .map(Into::into)
        .unwrap_or_else(|| workspace_dir().join("policy.wasm"))
}

/// A manifest of the workspace's `fixtures/` folder (`fixture("vm-basic")`), as JSON.
pub fn fixture(name: &str) -> Result<Value, crate::host::Error> {
    let path = workspace_dir()
        .join("fixtures")
        .join(format!("{name}.yaml"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(serde_yaml::from_str(&text)?)
}
