//! The project's own files, as the tests and `make` targets use them.

use std::path::PathBuf;

use policy_host::PolicyHost;
use serde_json::Value;

use crate::Error;
use crate::annotate::Annotated;
use crate::metadata::{self, MetadataFile};

pub fn path(name: &str) -> PathBuf {
    crate::workspace_dir().join(name)
}

pub fn read_text(name: &str) -> Result<String, Error> {
    let p = path(name);
    Ok(std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?)
}

pub fn metadata_file() -> Result<MetadataFile, Error> {
    MetadataFile::load(&path("policy-metadata.yml"))
}

pub fn cargo_version() -> Result<String, Error> {
    metadata::cargo_version(&path("Cargo.toml"))
}

/// `$POLICY_WASM`, or `policy.wasm` at the workspace root (built by `make policy.wasm`).
pub fn module_path() -> PathBuf {
    std::env::var_os("POLICY_WASM")
        .map(Into::into)
        .unwrap_or_else(|| path("policy.wasm"))
}

/// The module at [`module_path`].
pub fn module() -> Result<Vec<u8>, Error> {
    let p = module_path();
    Ok(std::fs::read(&p)
        .map_err(|e| format!("{}: {e} (build it with `make policy.wasm`)", p.display()))?)
}

/// The file whose text is the module's usage (`io.kubewarden.policy.usage`): the Makefile's `USAGE`.
pub const USAGE: &str = "README.md";

/// The most the usage text may have (the Makefile's `USAGE_MAX_BYTES`): it ships inside the module,
/// and `kwctl inspect` and Artifact Hub show it whole.
pub const USAGE_MAX_BYTES: usize = 16 * 1024;

/// `policy.wasm` annotated with `policy-metadata.yml` and [`USAGE`], as
/// `make annotated-policy.wasm` does.
pub fn annotated() -> Result<Annotated, Error> {
    crate::annotate::annotate(
        &module()?,
        &metadata_file()?,
        Some(&read_text(USAGE)?),
        Some(&cargo_version()?),
    )
}

/// The module's `validate_settings`: `Ok(Err(message))` when it refuses the settings.
pub fn validate_settings(host: &PolicyHost, settings: &Value) -> Result<Result<(), String>, Error> {
    #[derive(serde::Deserialize)]
    struct Answer {
        valid: bool,
        message: Option<String>,
    }
    let answer: Answer = serde_json::from_slice(
        &host
            .instance()?
            .call("validate_settings", &serde_json::to_vec(settings)?)?,
    )?;
    Ok(if answer.valid {
        Ok(())
    } else {
        Err(answer.message.unwrap_or_default())
    })
}
