//! Loading the module and calling its waPC functions.

use std::path::Path;
use std::sync::Arc;

use wapc::{HostCallback, WapcHost, WasiParams};
use wasmtime_provider::{WasmtimeEngineProviderBuilder, WasmtimeEngineProviderPre};

use crate::cluster::HostCalls;

pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// The compiled module, ready to be instantiated many times.
pub struct PolicyHost {
    pre: WasmtimeEngineProviderPre,
}

/// One instance of the module.
pub struct Instance {
    host: WapcHost,
}

impl PolicyHost {
    pub fn load(path: &Path) -> Result<PolicyHost, Error> {
        let bytes = std::fs::read(path)
            .map_err(|e| format!("{}: {e} (build it with `make policy.wasm`)", path.display()))?;
        Self::from_bytes(&bytes)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<PolicyHost, Error> {
        let pre = WasmtimeEngineProviderBuilder::new()
            .module_bytes(bytes)
            .wasi_params(WasiParams::default())
            .build_pre()?;
        Ok(PolicyHost { pre })
    }

    /// A fresh instance, as policy-server makes for every request.
    pub fn instance(&self) -> Result<Instance, Error> {
        self.instance_calling(Box::new(|_id, binding, namespace, operation, _payload| {
            Ok(plain_host_call(binding, namespace, operation)?)
        }))
    }

    /// A fresh instance whose host calls (`kubewarden`/`kubernetes`/..., the log call) `cluster`
    /// answers.
    pub fn instance_with_cluster(&self, cluster: Arc<dyn HostCalls>) -> Result<Instance, Error> {
        self.instance_calling(Box::new(
            move |_id, binding, namespace, operation, payload| {
                Ok(cluster.host_call(binding, namespace, operation, payload)?)
            },
        ))
    }

    /// A fresh instance whose host calls `callback` answers.
    pub(crate) fn instance_calling(&self, callback: Box<HostCallback>) -> Result<Instance, Error> {
        let engine = self.pre.rehydrate(None)?;
        let host = WapcHost::new(Box::new(engine), Some(callback))?;
        Ok(Instance { host })
    }
}

/// What an instance without a cluster answers: the SDK's `KubewardenDrain` logs through
/// `kubewarden`/`tracing`/`log`; nothing else is offered.
pub(crate) fn plain_host_call(
    binding: &str,
    namespace: &str,
    operation: &str,
) -> Result<Vec<u8>, String> {
    if (binding, namespace, operation) == ("kubewarden", "tracing", "log") {
        return Ok(Vec::new());
    }
    Err(format!(
        "host capability {binding}/{namespace}/{operation} is not offered"
    ))
}

impl Instance {
    /// Calls a waPC function of the guest.
    pub fn call(&self, function: &str, payload: &[u8]) -> Result<Vec<u8>, Error> {
        Ok(self.host.call(function, payload)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{FailRule, RecordingCluster};
    use serde_json::{Value, json};

    /// A waPC guest whose every function forwards its payload to the host operation of the same
    /// name on `kubewarden`/`kubernetes`, and answers with the host's response or error.
    const FORWARDER: &str = r#"(module
      (import "wapc" "__guest_request" (func $guest_request (param i32 i32)))
      (import "wapc" "__guest_response" (func $guest_response (param i32 i32)))
      (import "wapc" "__guest_error" (func $guest_error (param i32 i32)))
      (import "wapc" "__host_call" (func $host_call (param i32 i32 i32 i32 i32 i32 i32 i32) (result i32)))
      (import "wapc" "__host_response" (func $host_response (param i32)))
      (import "wapc" "__host_response_len" (func $host_response_len (result i32)))
      (import "wapc" "__host_error" (func $host_error (param i32)))
      (import "wapc" "__host_error_len" (func $host_error_len (result i32)))
      (memory (export "memory") 4)
      (data (i32.const 64) "kubewarden")
      (data (i32.const 80) "kubernetes")
      (func (export "__guest_call") (param $op_len i32) (param $req_len i32) (result i32)
        (call $guest_request (i32.const 0) (i32.const 1024))
        (if (result i32)
          (call $host_call (i32.const 64) (i32.const 10) (i32.const 80) (i32.const 10)
                           (i32.const 0) (local.get $op_len) (i32.const 1024) (local.get $req_len))
          (then
            (call $host_response (i32.const 131072))
            (call $guest_response (i32.const 131072) (call $host_response_len))
            (i32.const 1))
          (else
            (call $host_error (i32.const 131072))
            (call $guest_error (i32.const 131072) (call $host_error_len))
            (i32.const 0)))))"#;

    #[test]
    fn the_guest_sees_the_cluster_through_wapc() {
        let host = PolicyHost::from_bytes(FORWARDER.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        let claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                           "metadata": {"name": "data", "namespace": "team-a"}});
        let cluster = Arc::new(
            RecordingCluster::new(vec![claim.clone()])
                .fail(FailRule::new("list_resources_all").message("timeout")),
        );
        let instance = host
            .instance_with_cluster(cluster.clone())
            .unwrap_or_else(|e| panic!("{e}"));
        let get = json!({"api_version": "v1", "kind": "PersistentVolumeClaim", "name": "data",
                         "namespace": "team-a", "disable_cache": false, "field_masks": null});
        let answer = instance
            .call("get_resource", get.to_string().as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(serde_json::from_slice::<Value>(&answer).ok(), Some(claim));
        let list = json!({"api_version": "kubevirt.io/v1", "kind": "KubeVirt"});
        let error = instance
            .call("list_resources_all", list.to_string().as_bytes())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            error.contains("Callback evaluation failure: timeout"),
            "the host error reaches the guest: {error}"
        );
        let calls = cluster.calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(
            (calls[0].operation.as_str(), &calls[0].request),
            ("get_resource", &get)
        );
        assert_eq!(
            (calls[1].operation.as_str(), &calls[1].request),
            ("list_resources_all", &list)
        );

        // The plain instance still refuses every context-aware call.
        let plain = host.instance().unwrap_or_else(|e| panic!("{e}"));
        let error = plain
            .call("get_resource", get.to_string().as_bytes())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            error.contains("host capability kubewarden/kubernetes/get_resource is not offered"),
            "{error}"
        );
    }
}
