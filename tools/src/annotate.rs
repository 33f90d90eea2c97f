//! `kwctl annotate` without kwctl: validates the metadata, asks the module for its protocol
//! version through the e2e waPC host, and appends the `io.kubewarden.metadata` section.

use policy_host::PolicyHost;

use crate::Error;
use crate::metadata::{Metadata, MetadataFile, SECTION};

/// Protocol versions a waPC policy may answer (the SDK's `ProtocolVersion`, serialized).
pub const PROTOCOL_VERSIONS: [&str; 1] = ["v1"];

/// The result of annotating a module.
pub struct Annotated {
    pub module: Vec<u8>,
    pub metadata: Metadata,
    /// Differences between the declared `hostCapabilities` and what the module references.
    pub warnings: Vec<String>,
}

/// Calls the module's `protocol_version` on a fresh instance, as kwctl does.
pub fn protocol_version(module: &[u8]) -> Result<String, Error> {
    let host = PolicyHost::from_bytes(module)
        .map_err(|e| format!("cannot load the module in the waPC host: {e}"))?;
    let answer = host
        .instance()?
        .call("protocol_version", b"")
        .map_err(|e| format!("the module's protocol_version failed: {e}"))?;
    let version: String = serde_json::from_slice(&answer).map_err(|e| {
        format!(
            "protocol_version answered {:?}, not a JSON string: {e}",
            String::from_utf8_lossy(&answer)
        )
    })?;
    if !PROTOCOL_VERSIONS.contains(&version.as_str()) {
        return Err(format!("protocol_version answered an unknown version {version:?}").into());
    }
    Ok(version)
}

/// Annotates `module` with `metadata` (already validated by the caller or not: it is validated
/// here again) and the usage text (`io.kubewarden.policy.usage`, the README).
pub fn annotate(
    module: &[u8],
    metadata: &MetadataFile,
    usage: Option<&str>,
    cargo_version: Option<&str>,
) -> Result<Annotated, Error> {
    if !crate::wasm::custom_sections(module, SECTION)?.is_empty() {
        return Err(format!(
            "the module already has a {SECTION} section; annotate the unannotated policy.wasm (readers keep the first section, so a second one would be ignored)"
        )
        .into());
    }
    metadata.validate(cargo_version)?;
    let protocol = protocol_version(module)?;
    let metadata = metadata.to_metadata(&protocol, usage);
    let annotated = crate::wasm::append_custom_section(module, SECTION, &metadata.to_json())?;
    let warnings = capability_warnings(module, &metadata)?;
    Ok(Annotated {
        module: annotated,
        metadata,
        warnings,
    })
}

/// What kwctl warns about: capabilities the module references but the metadata does not
/// declare, and declared ones the module never names.
fn capability_warnings(module: &[u8], metadata: &Metadata) -> Result<Vec<String>, Error> {
    let used = crate::wasm::referenced_host_capabilities(module)?;
    let declared: Vec<&str> = metadata
        .host_capabilities
        .iter()
        .flatten()
        .map(String::as_str)
        .collect();
    let covers = |pattern: &str, capability: &str| {
        pattern == "*"
            || pattern == capability
            || pattern
                .strip_suffix('*')
                .is_some_and(|prefix| capability.starts_with(prefix))
    };
    let mut warnings = Vec::new();
    for capability in &used {
        if !declared.iter().any(|d| covers(d, capability)) {
            warnings.push(format!(
                "the module references host capability {capability}, which hostCapabilities does not declare"
            ));
        }
    }
    for pattern in &declared {
        if !used.iter().any(|c| covers(pattern, c)) {
            warnings.push(format!(
                "hostCapabilities declares {pattern}, which the module does not reference"
            ));
        }
    }
    Ok(warnings)
}

/// The first `io.kubewarden.metadata` section of a module, decoded.
pub fn read_metadata(module: &[u8]) -> Result<Option<Metadata>, Error> {
    let sections = crate::wasm::custom_sections(module, SECTION)?;
    let Some(first) = sections.first() else {
        return Ok(None);
    };
    let metadata = serde_json::from_slice(first)
        .map_err(|e| format!("the {SECTION} section is not valid metadata: {e}"))?;
    Ok(Some(metadata))
}
