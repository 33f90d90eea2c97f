//! policy.spdx.json (`make policy.spdx.json`, cargo-sbom): an SPDX 2.3 document of the module's
//! crate and its dependencies, each at the version Cargo.lock holds.

use policy_tools::project;
use serde_json::Value;

use crate::Error;

#[test]
fn the_sbom_lists_the_module_dependencies_at_their_locked_versions() -> Result<(), Error> {
    let text = project::read_text("policy.spdx.json")
        .map_err(|e| format!("{e} (make policy.spdx.json writes it; make test does)"))?;
    let sbom: Value = serde_json::from_str(&text)?;
    assert_eq!(sbom["spdxVersion"], "SPDX-2.3");
    let creators = sbom["creationInfo"]["creators"].to_string();
    assert!(creators.contains("cargo-sbom"), "{creators}");
    let lock: toml::Value = toml::from_str(&project::read_text("Cargo.lock")?)?;
    let locked = |name: &str| -> Vec<String> {
        lock["package"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["name"].as_str() == Some(name))
            .filter_map(|p| p["version"].as_str().map(str::to_owned))
            .collect()
    };
    let packages = sbom["packages"].as_array().cloned().unwrap_or_default();
    let version_of = |name: &str| {
        packages
            .iter()
            .find(|p| p["name"] == name)
            .and_then(|p| p["versionInfo"].as_str())
            .map(str::to_owned)
    };
    let direct = [
        "vm-maintenance-strategy",
        "kubewarden-policy-sdk",
        "serde",
        "serde_json",
        "k8s-openapi",
        "wapc-guest",
    ];
    for name in direct {
        let version = version_of(name).ok_or_else(|| format!("{name}: not in the SBOM"))?;
        assert!(
            locked(name).contains(&version),
            "{name} {version}: not the locked {:?}",
            locked(name)
        );
    }
    // Only the module's graph: no tool or test crate.
    for absent in ["wasmtime", "kube", "proptest", "criterion"] {
        assert!(
            version_of(absent).is_none(),
            "{absent} is not a dependency of the module"
        );
    }
    Ok(())
}
