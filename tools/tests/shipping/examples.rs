//! examples/: every ClusterAdmissionPolicy and the policy-server policies.yml parse, their settings
//! pass the module's validate_settings, and their rules, mutation and grants agree with the metadata.

use std::collections::BTreeSet;
use std::path::PathBuf;

use policy_host::{Evaluation, PolicyHost};
use policy_tools::metadata::{ContextAwareResource, MetadataFile, OCI_URL};
use policy_tools::project::{self, validate_settings};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::Error;

/// The setting that switches the cluster reads (and so the grants) off.
const LOOKUPS: &str = "clusterLookups";

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct Cap {
    api_version: String,
    kind: String,
    metadata: Value,
    spec: CapSpec,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CapSpec {
    module: String,
    mutating: bool,
    mode: Option<String>,
    failure_policy: Option<String>,
    timeout_seconds: Option<u32>,
    background_audit: Option<bool>,
    namespace_selector: Option<Value>,
    rules: Vec<CapRule>,
    #[serde(default)]
    context_aware_resources: Vec<ContextAwareResource>,
    #[serde(default)]
    settings: Value,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CapRule {
    api_groups: Vec<String>,
    api_versions: Vec<String>,
    resources: Vec<String>,
    operations: Vec<String>,
}

#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ServerPolicy {
    module: String,
    policy_mode: Option<String>,
    allowed_to_mutate: Option<bool>,
    #[serde(default)]
    settings: Value,
    #[serde(default)]
    context_aware_resources: Vec<ContextAwareResource>,
    #[serde(default)]
    host_capabilities: Vec<String>,
}

/// (group, version, resource, operation) tuples a set of rules matches.
fn matches(
    rules: impl IntoIterator<Item = (Vec<String>, Vec<String>, Vec<String>, Vec<String>)>,
) -> BTreeSet<[String; 4]> {
    let mut out = BTreeSet::new();
    for (groups, versions, resources, operations) in rules {
        for g in &groups {
            for v in &versions {
                for r in &resources {
                    for o in &operations {
                        out.insert([g.clone(), v.clone(), r.clone(), o.clone()]);
                    }
                }
            }
        }
    }
    out
}

/// The module's validate_settings, as policy-server calls it at start-up.
fn settings_ok(host: &PolicyHost, settings: &Value, what: &str) -> Result<Value, Error> {
    validate_settings(host, settings)?.map_err(|m| format!("{what}: settings refused: {m}"))?;
    Ok(settings.clone())
}

fn caps() -> Result<Vec<(PathBuf, Cap)>, Error> {
    let dir = project::path("examples");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let text = std::fs::read_to_string(&path)?;
            let cap: Cap =
                serde_yaml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            out.push((path, cap));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

fn metadata_matches(file: &MetadataFile) -> BTreeSet<[String; 4]> {
    matches(file.rules.iter().map(|r| {
        (
            r.api_groups.clone(),
            r.api_versions.clone(),
            r.resources.clone(),
            r.operations.clone(),
        )
    }))
}

#[test]
fn cluster_admission_policies() -> Result<(), Error> {
    let host = PolicyHost::load(&policy_tools::project::module_path())?;
    let file = project::metadata_file()?;
    let allowed = metadata_matches(&file);
    let grants: BTreeSet<_> = file.context_aware_resources.iter().cloned().collect();
    let module = format!(
        "registry://{}:v{}",
        file.annotation(OCI_URL).ok_or("ociUrl")?,
        project::cargo_version()?
    );
    let caps = caps()?;
    let names: Vec<_> = caps
        .iter()
        .filter_map(|(p, _)| p.file_name()?.to_str().map(str::to_owned))
        .collect();
    assert_eq!(
        names,
        [
            "audit-profile.yaml",
            "harvester-defaults.yaml",
            "kubevirt-cr-guard.yaml",
            "strict-cluster.yaml",
            "validate-only.yaml"
        ]
    );
    let mut failures = Vec::new();
    let mut fail = |p: &PathBuf, m: String| failures.push(format!("{}: {m}", p.display()));
    for (path, cap) in &caps {
        let spec = &cap.spec;
        if cap.api_version != "policies.kubewarden.io/v1" || cap.kind != "ClusterAdmissionPolicy" {
            fail(path, format!("{} {}", cap.api_version, cap.kind));
        }
        if cap.metadata["name"]
            .as_str()
            .is_none_or(|n| !policy_tools::metadata::is_dns_label(n))
        {
            fail(path, "metadata.name".to_owned());
        }
        if spec.module != module {
            fail(path, format!("module {} (want {module})", spec.module));
        }
        if !matches!(spec.failure_policy.as_deref(), Some("Fail" | "Ignore")) {
            fail(
                path,
                "failurePolicy must be set (Fail or Ignore)".to_owned(),
            );
        }
        if spec.timeout_seconds.is_none_or(|t| !(1..=30).contains(&t)) {
            fail(path, "timeoutSeconds must be set, 1..30".to_owned());
        }
        let mode = spec.mode.as_deref().unwrap_or("protect");
        if !matches!(mode, "protect" | "monitor") {
            fail(path, format!("mode {mode}"));
        }
        let rules = matches(spec.rules.iter().map(|r| {
            (
                r.api_groups.clone(),
                r.api_versions.clone(),
                r.resources.clone(),
                r.operations.clone(),
            )
        }));
        for extra in rules.difference(&allowed) {
            fail(
                path,
                format!("rule {extra:?} is not in the metadata's rules"),
            );
        }
        if spec.mutating && !file.mutating {
            fail(
                path,
                "mutating, but the metadata says the policy never mutates".to_owned(),
            );
        }
        let settings = match settings_ok(&host, &spec.settings, &path.display().to_string()) {
            Ok(s) => s,
            Err(e) => {
                fail(path, e.to_string());
                continue;
            }
        };
        let mutate = spec.settings["mutate"].as_bool().unwrap_or(true);
        if mutate != spec.mutating {
            fail(
                path,
                format!(
                    "mutating: {} with settings mutate: {mutate} (the host rejects every mutation of a non-mutating policy; a mutating webhook that never mutates only costs)",
                    spec.mutating
                ),
            );
        }
        if spec.background_audit.unwrap_or(true) && spec.mutating {
            fail(path, "backgroundAudit on a mutating policy: the audit scanner ignores patches, every unlabelled VM would pass".to_owned());
        }
        let lookups = spec.settings[LOOKUPS].as_bool().unwrap_or(true);
        let granted: BTreeSet<_> = spec.context_aware_resources.iter().cloned().collect();
        if !granted.is_subset(&grants) {
            fail(
                path,
                format!("contextAwareResources beyond the metadata's: {granted:?}"),
            );
        }
        if lookups && granted != grants {
            fail(
                path,
                "cluster lookups are on: grant every contextAwareResource of the metadata"
                    .to_owned(),
            );
        }
        if !lookups && !granted.is_empty() {
            fail(
                path,
                "clusterLookups: false, yet it grants cluster reads".to_owned(),
            );
        }
        let _ = (&spec.namespace_selector, settings);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

fn vm_create(fixture: &str) -> Result<Value, Error> {
    let text = project::read_text(&format!("fixtures/{fixture}.yaml"))?;
    let object: Value = serde_yaml::from_str(&text)?;
    Ok(json!({
        "uid": "example",
        "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
        "resource": {"group": "kubevirt.io", "version": "v1", "resource": "virtualmachines"},
        "requestKind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
        "requestResource": {"group": "kubevirt.io", "version": "v1", "resource": "virtualmachines"},
        "name": object["metadata"]["name"],
        "namespace": object["metadata"]["namespace"],
        "operation": "CREATE",
        "userInfo": {"username": "audit-scanner"},
        "object": object,
        "dryRun": false,
    }))
}

/// The audit story: the mutating profile passes an unlabelled VM (the scanner ignores the patch),
/// the audit profile fails it, so its PolicyReport lists the VM.
#[test]
fn audit_profile_fails_what_the_mutating_profile_passes() -> Result<(), Error> {
    let host = PolicyHost::load(&policy_tools::project::module_path())?;
    let caps = caps()?;
    let settings_of = |name: &str| -> Result<Value, Error> {
        let (path, cap) = caps
            .iter()
            .find(|(p, _)| p.ends_with(name))
            .ok_or(format!("examples/{name}"))?;
        settings_ok(&host, &cap.spec.settings, &path.display().to_string())
    };
    let request = vm_create("legacy-01-unlabelled")?;
    let allowed = |settings: &Value| -> Result<(bool, bool), Error> {
        match host.evaluate(&request, settings)? {
            Evaluation::Answered(answer) => Ok((answer.response.allowed, answer.patch.is_some())),
            Evaluation::SettingsRefused(m) => Err(m.into()),
        }
    };
    assert_eq!(
        allowed(&settings_of("harvester-defaults.yaml")?)?,
        (true, true),
        "mutating: allowed, patched"
    );
    assert!(
        !allowed(&settings_of("audit-profile.yaml")?)?.0,
        "audit: the unlabelled VM fails"
    );
    assert!(
        !allowed(&settings_of("validate-only.yaml")?)?.0,
        "validate-only: the missing label is refused"
    );
    Ok(())
}

#[test]
fn policy_server_policies() -> Result<(), Error> {
    let host = PolicyHost::load(&policy_tools::project::module_path())?;
    let file = project::metadata_file()?;
    let grants: BTreeSet<_> = file.context_aware_resources.iter().cloned().collect();
    let declared: BTreeSet<String> = file.host_capabilities.iter().flatten().cloned().collect();
    let text = project::read_text("examples/policies.yml")?;
    let policies: std::collections::BTreeMap<String, ServerPolicy> = serde_yaml::from_str(&text)?;
    assert!(policies.len() >= 2);
    let mut failures = Vec::new();
    for (id, p) in &policies {
        if !(p.module.starts_with("registry://") || p.module.starts_with("file:///")) {
            failures.push(format!("{id}: module {}", p.module));
        }
        if let Err(e) = settings_ok(&host, &p.settings, id) {
            failures.push(e.to_string());
            continue;
        }
        let mutate = p.settings["mutate"].as_bool().unwrap_or(true);
        if p.allowed_to_mutate.unwrap_or(false) != mutate {
            failures.push(format!(
                "{id}: allowedToMutate {:?} with mutate {mutate}",
                p.allowed_to_mutate
            ));
        }
        if !matches!(
            p.policy_mode.as_deref().unwrap_or("protect"),
            "protect" | "monitor"
        ) {
            failures.push(format!("{id}: policyMode"));
        }
        let lookups = p.settings[LOOKUPS].as_bool().unwrap_or(true);
        let granted: BTreeSet<_> = p.context_aware_resources.iter().cloned().collect();
        let capabilities: BTreeSet<String> = p.host_capabilities.iter().cloned().collect();
        if lookups && (granted != grants || capabilities != declared) {
            failures.push(format!("{id}: cluster lookups on: grant the metadata's contextAwareResources and hostCapabilities"));
        }
        let grants_any = !granted.is_empty() || !capabilities.is_empty();
        if !lookups && grants_any {
            failures.push(format!("{id}: clusterLookups false, yet grants"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}
