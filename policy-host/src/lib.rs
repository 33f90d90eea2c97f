//! A waPC host for `policy.wasm`, built like Kubewarden's policy-server: the module is compiled
//! once, every evaluation gets a fresh instance (a [`Session`] serves request after request on
//! one instance, its settings validated once), settings are validated before `validate` runs,
//! and the policy's answer is turned into the AdmissionResponse the API server would receive.
//! The context-aware calls are answered by an in-memory [`Cluster`] that logs every call.

pub mod admission;
pub mod cluster;
pub mod host;
pub mod session;

pub use admission::{AdmissionResponse, Evaluation};
pub use cluster::{Call, Cluster, FailRule};
pub use host::{Instance, PolicyHost};
pub use session::Session;

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
pub fn fixture(name: &str) -> Result<serde_json::Value, host::Error> {
    let path = workspace_dir()
        .join("fixtures")
        .join(format!("{name}.yaml"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(serde_yaml::from_str(&text)?)
}
