//! Shipping the policy the Kubewarden way without kwctl: the metadata section (`annotate`),
//! OCI push and pull (`oci`), and the Artifact Hub package file (`artifacthub`). The binaries
//! in `src/bin/` are thin command lines over these modules; the tests call them directly.

pub mod annotate;
pub mod artifacthub;
pub mod authors;
pub mod capabilities;
pub mod metadata;
pub mod oci;
pub mod project;
pub mod signing;
pub mod wasm;

pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// The workspace root, where the project's files are (`make` runs there).
pub fn workspace_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default()
}
