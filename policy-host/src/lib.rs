//! A waPC host for `policy.wasm`, built like Kubewarden's policy-server: the module is compiled
//! once, every evaluation gets a fresh instance (a [`Session`] serves request after request on
//! one instance, its settings validated once), settings are validated before `validate` runs,
//! and the policy's answer is turned into the AdmissionResponse the API server would receive.
//! The context-aware calls are answered by an in-memory [`Cluster`] (or anything [`HostCalls`]).
//!
//! The runtime (`admission`, `cluster`, `host`, `session`) is what the plugin ships. The e2e
//! harness (`harness`: a recording cluster with failure rules, kwctl sessions, the workspace's
//! fixtures) is behind the feature `harness`, which the test and bench crates turn on.

pub mod admission;
pub mod cluster;
#[cfg(any(test, feature = "harness"))]
pub mod harness;
pub mod host;
pub mod session;

pub use admission::{AdmissionResponse, Evaluation};
pub use cluster::{Cluster, HostCalls};
#[cfg(any(test, feature = "harness"))]
pub use harness::{Call, FailRule, RecordingCluster, default_module_path, fixture, workspace_dir};
pub use host::{Instance, PolicyHost};
pub use session::Session;
