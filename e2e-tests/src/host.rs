//! Loading the module and calling its waPC functions.

use std::path::Path;
use std::sync::Arc;

use wapc::{WapcHost, WasiParams};
use wasmtime_provider::{WasmtimeEngineProviderBuilder, WasmtimeEngineProviderPre};

use crate::cluster::Cluster;

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
        let engine = self.pre.rehydrate(None)?;
        let host = WapcHost::new(
            Box::new(engine),
            Some(Box::new(|_id, binding, namespace, operation, _payload| {
                // The SDK's `KubewardenDrain` logs through this call; nothing else is offered.
                if (binding, namespace, operation) == ("kubewarden", "tracing", "log") {
                    return Ok(Vec::new());
                }
                Err(
                    format!("host capability {binding}/{namespace}/{operation} is not offered")
                        .into(),
                )
            })),
        )?;
        Ok(Instance { host })
    }

    /// A fresh instance whose context-aware calls (`kubewarden`/`kubernetes`/...) `cluster`
    /// answers and records; the log call is answered too.
    pub fn instance_with_cluster(&self, cluster: Arc<Cluster>) -> Result<Instance, Error> {
        let engine = self.pre.rehydrate(None)?;
        let host = WapcHost::new(
            Box::new(engine),
            Some(Box::new(
                move |_id, binding, namespace, operation, payload| {
                    Ok(cluster.host_call(binding, namespace, operation, payload)?)
                },
            )),
        )?;
        Ok(Instance { host })
    }
}

impl Instance {
    /// Calls a waPC function of the guest.
    pub fn call(&self, function: &str, payload: &[u8]) -> Result<Vec<u8>, Error> {
        Ok(self.host.call(function, payload)?)
    }
}
