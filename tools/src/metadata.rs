//! `policy-metadata.yml`: what it may hold, how it is checked, and the JSON document kwctl embeds
//! in the module (`io.kubewarden.metadata`), field for field in kwctl's order.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::Error;
pub use crate::capabilities::HOST_CAPABILITIES;

pub const SECTION: &str = "io.kubewarden.metadata";
pub const TITLE: &str = "io.kubewarden.policy.title";
pub const VERSION: &str = "io.kubewarden.policy.version";
pub const DESCRIPTION: &str = "io.kubewarden.policy.description";
pub const AUTHOR: &str = "io.kubewarden.policy.author";
pub const URL: &str = "io.kubewarden.policy.url";
pub const SOURCE: &str = "io.kubewarden.policy.source";
pub const LICENSE: &str = "io.kubewarden.policy.license";
pub const OCI_URL: &str = "io.kubewarden.policy.ociUrl";
pub const USAGE: &str = "io.kubewarden.policy.usage";
pub const SEVERITY: &str = "io.kubewarden.policy.severity";
pub const CATEGORY: &str = "io.kubewarden.policy.category";
pub const KWCTL: &str = "io.kubewarden.kwctl";
pub const HIDDEN_UI: &str = "io.kubewarden.hidden-ui";
pub const GITHUB_RELEASE_TAG: &str = "com.github.release.tag";
pub const ARTIFACTHUB_DISPLAY_NAME: &str = "io.artifacthub.displayName";
pub const ARTIFACTHUB_RESOURCES: &str = "io.artifacthub.resources";
pub const ARTIFACTHUB_KEYWORDS: &str = "io.artifacthub.keywords";

/// Operations an admission rule may name.
pub const OPERATIONS: [&str; 5] = ["CREATE", "UPDATE", "DELETE", "CONNECT", "*"];
/// PolicyReport severities (`io.kubewarden.policy.severity`).
pub const SEVERITIES: [&str; 5] = ["info", "low", "medium", "high", "critical"];

/// One admission rule, as kwctl serializes it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Rule {
    pub api_groups: Vec<String>,
    pub api_versions: Vec<String>,
    pub resources: Vec<String>,
    pub operations: Vec<String>,
}

/// A Kubernetes resource the policy reads from the cluster. Ordered by `apiVersion`, then `kind`,
/// as kwctl's set orders it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContextAwareResource {
    pub api_version: String,
    pub kind: String,
}

/// The metadata file as written by hand. Unknown keys are refused (a typo such as
/// `hostCapabilites` would otherwise be dropped silently), and so is `protocolVersion`: the
/// annotator asks the module for it.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MetadataFile {
    pub rules: Vec<Rule>,
    pub mutating: bool,
    #[serde(default = "yes")]
    pub background_audit: bool,
    #[serde(default = "wapc")]
    pub execution_mode: String,
    #[serde(default = "kubernetes")]
    pub policy_type: String,
    #[serde(default)]
    pub context_aware_resources: Vec<ContextAwareResource>,
    #[serde(default)]
    pub host_capabilities: Option<Vec<String>>,
    #[serde(default)]
    pub minimum_kubewarden_version: Option<String>,
    #[serde(default)]
    pub annotations: BTreeMap<String, String>,
    #[serde(default)]
    protocol_version: Option<serde_yaml::Value>,
}

fn yes() -> bool {
    true
}
fn wapc() -> String {
    "kubewarden-wapc".to_owned()
}
fn kubernetes() -> String {
    "kubernetes".to_owned()
}

/// The document in the `io.kubewarden.metadata` section. Field order is kwctl's
/// (policy-evaluator's `Metadata`): serde writes fields in declaration order, maps and sets sorted.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    pub protocol_version: String,
    pub rules: Vec<Rule>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
    pub mutating: bool,
    #[serde(default = "yes")]
    pub background_audit: bool,
    #[serde(default = "wapc")]
    pub execution_mode: String,
    #[serde(default = "kubernetes")]
    pub policy_type: String,
    #[serde(default)]
    pub context_aware_resources: BTreeSet<ContextAwareResource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_capabilities: Option<BTreeSet<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minimum_kubewarden_version: Option<semver::Version>,
}

impl MetadataFile {
    pub fn from_yaml(text: &str) -> Result<MetadataFile, Error> {
        serde_yaml::from_str(text).map_err(|e| format!("metadata: {e}").into())
    }

    pub fn load(path: &Path) -> Result<MetadataFile, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::from_yaml(&text).map_err(|e| format!("{}: {e}", path.display()).into())
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.get(key).map(String::as_str)
    }

    /// Every problem in the file, one message each (empty: the file is fine). `cargo_version` is
    /// the crate's version, which `io.kubewarden.policy.version` must equal.
    pub fn problems(&self, cargo_version: Option<&str>) -> Vec<String> {
        let mut problems = Vec::new();
        if self.protocol_version.is_some() {
            problems.push(
                "protocolVersion: do not write it by hand; annotate asks the module".to_owned(),
            );
        }
        if self.rules.is_empty() {
            problems.push("rules: must not be empty".to_owned());
        }
        for (i, rule) in self.rules.iter().enumerate() {
            rule_problems(&format!("rules[{i}]"), rule, &mut problems);
        }
        if self.execution_mode != "kubewarden-wapc" {
            problems.push(format!(
                "executionMode: {:?} is not supported here (kubewarden-wapc only)",
                self.execution_mode
            ));
        }
        if !matches!(self.policy_type.as_str(), "kubernetes" | "raw") {
            problems.push(format!(
                "policyType: unknown value {:?} (valid: kubernetes, raw)",
                self.policy_type
            ));
        }
        let mut seen = BTreeSet::new();
        for (i, resource) in self.context_aware_resources.iter().enumerate() {
            let field = format!("contextAwareResources[{i}]");
            if resource.api_version.is_empty() {
                problems.push(format!("{field}.apiVersion: must not be empty"));
            }
            if resource.kind.is_empty() {
                problems.push(format!("{field}.kind: must not be empty"));
            }
            if !seen.insert(resource) {
                problems.push(format!(
                    "{field}: {}/{} is listed twice",
                    resource.api_version, resource.kind
                ));
            }
        }
        if let Some(capabilities) = &self.host_capabilities {
            let mut seen = BTreeSet::new();
            for (i, capability) in capabilities.iter().enumerate() {
                if let Err(e) = check_host_capability(capability) {
                    problems.push(format!("hostCapabilities[{i}]: {e}"));
                }
                if !seen.insert(capability) {
                    problems.push(format!(
                        "hostCapabilities[{i}]: {capability:?} is listed twice"
                    ));
                }
            }
        }
        if let Some(version) = &self.minimum_kubewarden_version
            && let Err(e) = semver::Version::parse(version)
        {
            problems.push(format!(
                "minimumKubewardenVersion: {version:?} is not a semantic version: {e}"
            ));
        }
        self.annotation_problems(cargo_version, &mut problems);
        problems
    }

    fn annotation_problems(&self, cargo_version: Option<&str>, problems: &mut Vec<String>) {
        let a = &self.annotations;
        for (key, value) in a {
            if value.trim().is_empty() {
                problems.push(format!("annotations.{key}: must not be empty"));
            }
        }
        if a.contains_key(KWCTL) {
            problems.push(format!(
                "annotations.{KWCTL}: written by kwctl itself, leave it out"
            ));
        }
        for key in [TITLE, VERSION, DESCRIPTION, OCI_URL] {
            if !a.contains_key(key) {
                problems.push(format!("annotations.{key}: missing"));
            }
        }
        if let Some(title) = a.get(TITLE)
            && !is_dns_label(title)
        {
            problems.push(format!(
                "annotations.{TITLE}: {title:?} is not a valid Kubernetes name (lowercase letters, digits and '-', at most 63, starting and ending alphanumeric); it is the default policy name"
            ));
        }
        if let Some(version) = a.get(VERSION) {
            match semver::Version::parse(version) {
                Err(e) => problems.push(format!(
                    "annotations.{VERSION}: {version:?} is not a semantic version: {e}"
                )),
                Ok(_) => {
                    if let Some(cargo) = cargo_version.filter(|c| *c != version.as_str()) {
                        problems.push(format!(
                            "annotations.{VERSION}: {version} differs from the version in Cargo.toml ({cargo})"
                        ));
                    }
                }
            }
        }
        if let Some(oci) = a.get(OCI_URL)
            && let Err(e) = check_oci_url(oci)
        {
            problems.push(format!("annotations.{OCI_URL}: {e}"));
        }
        for key in [URL, SOURCE] {
            if let Some(value) = a.get(key)
                && let Err(e) = url::Url::parse(value)
            {
                problems.push(format!("annotations.{key}: {value:?} is not a URL: {e}"));
            }
        }
        if let Some(author) = a.get(AUTHOR)
            && let Err(e) = crate::authors::maintainers(author)
        {
            problems.push(format!("annotations.{AUTHOR}: {e}"));
        }
        if let Some(severity) = a.get(SEVERITY)
            && !SEVERITIES.contains(&severity.as_str())
        {
            problems.push(format!(
                "annotations.{SEVERITY}: unknown value {severity:?} (valid: {})",
                SEVERITIES.join(", ")
            ));
        }
        if let Some(keywords) = a.get(ARTIFACTHUB_KEYWORDS)
            && keywords.split(',').any(|k| k.trim().is_empty())
        {
            problems.push(format!(
                "annotations.{ARTIFACTHUB_KEYWORDS}: a comma-separated list without empty entries"
            ));
        }
        if let Some(hidden) = a.get(HIDDEN_UI)
            && !matches!(hidden.as_str(), "true" | "false")
        {
            problems.push(format!(
                "annotations.{HIDDEN_UI}: must be 'true' or 'false'"
            ));
        }
    }

    /// Fails with all problems at once.
    pub fn validate(&self, cargo_version: Option<&str>) -> Result<(), Error> {
        let problems = self.problems(cargo_version);
        if problems.is_empty() {
            return Ok(());
        }
        Err(format!("invalid metadata:\n  {}", problems.join("\n  ")).into())
    }

    /// The embedded document: the file plus the module's protocol version and the usage text.
    pub fn to_metadata(&self, protocol_version: &str, usage: Option<&str>) -> Metadata {
        let mut annotations = self.annotations.clone();
        if let Some(usage) = usage {
            annotations.insert(USAGE.to_owned(), usage.to_owned());
        }
        Metadata {
            protocol_version: protocol_version.to_owned(),
            rules: self.rules.clone(),
            annotations: (!annotations.is_empty()).then_some(annotations),
            mutating: self.mutating,
            background_audit: self.background_audit,
            execution_mode: self.execution_mode.clone(),
            policy_type: self.policy_type.clone(),
            context_aware_resources: self.context_aware_resources.iter().cloned().collect(),
            host_capabilities: self
                .host_capabilities
                .as_ref()
                .map(|c| c.iter().cloned().collect()),
            minimum_kubewarden_version: self
                .minimum_kubewarden_version
                .as_ref()
                .and_then(|v| semver::Version::parse(v).ok()),
        }
    }
}

impl Metadata {
    /// Compact JSON, the bytes of the custom section.
    pub fn to_json(&self) -> Vec<u8> {
        // Serializing plain strings, booleans, maps and sets cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.as_ref()?.get(key).map(String::as_str)
    }
}

fn rule_problems(field: &str, rule: &Rule, problems: &mut Vec<String>) {
    for (name, list) in [
        ("apiGroups", &rule.api_groups),
        ("apiVersions", &rule.api_versions),
        ("resources", &rule.resources),
        ("operations", &rule.operations),
    ] {
        if list.is_empty() {
            problems.push(format!("{field}.{name}: must not be empty"));
        }
        if list.len() > 1 && list.iter().any(|v| v == "*") {
            problems.push(format!(
                "{field}.{name}: '*' must be the only entry when it is used"
            ));
        }
    }
    for (i, op) in rule.operations.iter().enumerate() {
        if !OPERATIONS.contains(&op.as_str()) {
            problems.push(format!(
                "{field}.operations[{i}]: unknown operation {op:?} (valid: {})",
                OPERATIONS.join(", ")
            ));
        }
    }
    for (i, resource) in rule.resources.iter().enumerate() {
        if resource.is_empty() {
            problems.push(format!("{field}.resources[{i}]: must not be empty"));
        }
    }
    for (i, version) in rule.api_versions.iter().enumerate() {
        if version.is_empty() {
            problems.push(format!("{field}.apiVersions[{i}]: must not be empty"));
        }
    }
}

/// `namespace/operation`, a prefix wildcard (`kubernetes/*`) or `*`, for a capability
/// policy-server offers.
pub fn check_host_capability(pattern: &str) -> Result<(), String> {
    if pattern == "*" {
        return Ok(());
    }
    if let Some(prefix) = pattern.strip_suffix("/*") {
        let prefix = format!("{prefix}/");
        if !prefix.contains('*') && HOST_CAPABILITIES.iter().any(|c| c.starts_with(&prefix)) {
            return Ok(());
        }
    } else if HOST_CAPABILITIES.contains(&pattern) {
        return Ok(());
    }
    Err(format!(
        "unknown host capability {pattern:?} (valid: {}, a prefix such as kubernetes/*, or *)",
        HOST_CAPABILITIES.join(", ")
    ))
}

/// `io.kubewarden.policy.ociUrl`: a repository reference without tag or digest (the release
/// adds `:v<version>`).
pub fn check_oci_url(value: &str) -> Result<(), String> {
    if value.contains("://") {
        return Err(format!(
            "{value:?}: write the repository without a scheme (e.g. ghcr.io/ORG/policies/NAME)"
        ));
    }
    let reference: oci_client::Reference = value
        .parse()
        .map_err(|e| format!("{value:?} is not an OCI reference: {e}"))?;
    if value.contains('@') || reference.digest().is_some() {
        return Err(format!("{value:?}: must not carry a digest"));
    }
    // The parser adds `latest` when there is none; a tag written by hand follows the last ':'
    // after the last '/'.
    let last = value.rsplit('/').next().unwrap_or(value);
    if last.contains(':') {
        return Err(format!(
            "{value:?}: must not carry a tag (the release pushes :v<version>)"
        ));
    }
    if !value.contains('/') || reference.registry() != value.split('/').next().unwrap_or("") {
        return Err(format!(
            "{value:?}: name the registry host explicitly (e.g. ghcr.io/ORG/policies/NAME)"
        ));
    }
    Ok(())
}

/// RFC 1123 label: what a ClusterAdmissionPolicy name may safely be.
pub fn is_dns_label(name: &str) -> bool {
    let b = name.as_bytes();
    let ok = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty()
        && b.len() <= 63
        && ok(&b[0])
        && ok(&b[b.len() - 1])
        && b.iter().all(|c| ok(c) || *c == b'-')
}

/// `[package] version` of a Cargo.toml.
pub fn cargo_version(path: &Path) -> Result<String, Error> {
    #[derive(Deserialize)]
    struct Manifest {
        package: Package,
    }
    #[derive(Deserialize)]
    struct Package {
        version: String,
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let manifest: Manifest =
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(manifest.package.version)
}
