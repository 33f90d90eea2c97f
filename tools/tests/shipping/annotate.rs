use std::collections::{BTreeMap, BTreeSet};

use policy_tools::annotate::{annotate, read_metadata};
use policy_tools::metadata::{self as m, MetadataFile, SECTION};
use policy_tools::{project, wasm};
use serde_json::Value;

use crate::Error;

/// The section of the annotated module, decoded, against the metadata file, field by field.
#[test]
fn section_holds_the_metadata_field_by_field() -> Result<(), Error> {
    let annotated = project::annotated()?;
    let file = project::metadata_file()?;
    let sections = wasm::custom_sections(&annotated.module, SECTION)?;
    assert_eq!(sections.len(), 1, "exactly one {SECTION} section");
    let raw = sections[0];
    let doc: Value = serde_json::from_slice(raw)?;

    // kwctl's order, compact JSON (serde_json::Value sorts keys: read the raw text for order).
    let order = [
        "protocolVersion",
        "rules",
        "annotations",
        "mutating",
        "backgroundAudit",
        "executionMode",
        "policyType",
        "contextAwareResources",
        "hostCapabilities",
    ];
    let keys: BTreeSet<&str> = doc
        .as_object()
        .ok_or("the section is not a JSON object")?
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, order.iter().copied().collect(), "top-level fields");
    let text = std::str::from_utf8(raw)?;
    assert_eq!(
        serde_json::to_string(&doc)?.len(),
        text.len(),
        "compact JSON"
    );
    // Top-level keys follow a '{' or a ',' right after the previous value; annotation keys
    // never have these names.
    let positions: Vec<usize> = order
        .iter()
        .map(|k| text.find(&format!("\"{k}\":")).unwrap_or(usize::MAX))
        .collect();
    assert!(positions.is_sorted(), "raw field order: {positions:?}");
    assert!(text.starts_with("{\"protocolVersion\":\"v1\",\"rules\":[{\"apiGroups\""));

    assert_eq!(
        doc["protocolVersion"], "v1",
        "from the module's protocol_version"
    );
    assert_eq!(doc["rules"], serde_json::to_value(&file.rules)?);
    assert_eq!(doc["mutating"], file.mutating);
    assert_eq!(doc["backgroundAudit"], file.background_audit);
    assert_eq!(doc["executionMode"], "kubewarden-wapc");
    assert_eq!(doc["policyType"], "kubernetes");
    let resources: BTreeSet<_> = file.context_aware_resources.iter().cloned().collect();
    assert_eq!(
        doc["contextAwareResources"],
        serde_json::to_value(&resources)?
    );
    assert_eq!(
        doc["contextAwareResources"],
        serde_json::json!([
            {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterInstancetype"},
            {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineClusterPreference"},
            {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachineInstancetype"},
            {"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": "VirtualMachinePreference"},
            {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt"},
            {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance"},
            {"apiVersion": "v1", "kind": "PersistentVolumeClaim"}
        ])
    );
    let capabilities: BTreeSet<_> = file.host_capabilities.iter().flatten().collect();
    assert_eq!(
        doc["hostCapabilities"],
        serde_json::to_value(&capabilities)?
    );
    assert!(doc.get("minimumKubewardenVersion").is_none());

    // Annotations: the file's, sorted, plus the usage file; never kwctl's own key.
    let annotations: BTreeMap<String, String> = serde_json::from_value(doc["annotations"].clone())?;
    let mut want = file.annotations.clone();
    want.insert(m::USAGE.to_owned(), project::read_text(project::USAGE)?);
    assert_eq!(annotations, want);
    assert!(!annotations.contains_key(m::KWCTL));
    let sorted: Vec<_> = doc["annotations"]
        .as_object()
        .ok_or("annotations")?
        .keys()
        .cloned()
        .collect();
    let mut expected = sorted.clone();
    expected.sort();
    assert_eq!(sorted, expected, "annotations sorted by key");
    assert_eq!(read_metadata(&annotated.module)?, Some(annotated.metadata));
    Ok(())
}

/// The usage text is the policy's user documentation, not a manual of the project: at most 16 KB,
/// and the file the Makefile embeds (`USAGE`, `USAGE_MAX_BYTES`) is the one these tests check.
#[test]
fn the_usage_text_is_the_makefiles_and_at_most_16_kb() -> Result<(), Error> {
    let usage = project::read_text(project::USAGE)?;
    assert!(
        usage.len() <= project::USAGE_MAX_BYTES,
        "{}: {} bytes, the usage text may have at most {} (`kwctl inspect` and Artifact Hub show it \
         whole): move details to docs/",
        project::USAGE,
        usage.len(),
        project::USAGE_MAX_BYTES
    );
    let makefile = project::read_text("Makefile")?;
    for line in [
        format!("USAGE := {}", project::USAGE),
        format!("USAGE_MAX_BYTES := {}", project::USAGE_MAX_BYTES),
    ] {
        assert!(
            makefile.lines().any(|l| l == line),
            "the Makefile says `{line}`"
        );
    }
    let annotated = project::annotated()?;
    let embedded = annotated
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(m::USAGE))
        .ok_or("no usage annotation")?;
    assert_eq!(embedded, &usage);
    Ok(())
}

/// The module is unchanged but for the section appended at its end, and still runs.
#[test]
fn annotation_appends_one_section_and_keeps_the_module() -> Result<(), Error> {
    let module = project::module()?;
    let annotated = project::annotated()?;
    assert!(annotated.module.starts_with(&module));
    let tail = &annotated.module[module.len()..];
    assert_eq!(tail[0], 0, "a custom section");
    let json = annotated.metadata.to_json();
    assert!(tail.ends_with(&json));
    let host = policy_host::PolicyHost::from_bytes(&annotated.module)?;
    assert_eq!(host.instance()?.call("protocol_version", b"")?, b"\"v1\"");
    Ok(())
}

#[test]
fn an_annotated_module_is_refused() -> Result<(), Error> {
    let annotated = project::annotated()?;
    let again = annotate(
        &annotated.module,
        &project::metadata_file()?,
        None,
        Some(&project::cargo_version()?),
    );
    let error = again.err().ok_or("annotating twice must fail")?.to_string();
    assert!(
        error.contains("already has a io.kubewarden.metadata section"),
        "{error}"
    );
    Ok(())
}

#[test]
fn not_a_module_is_refused() {
    for (bytes, want) in [
        (&b"\0asm\x0d\0\x01\0"[..], "component"),
        (&b"hello"[..], "not a wasm module"),
        (&b""[..], "not a wasm module"),
    ] {
        let error = annotate(bytes, &valid(), None, None)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.contains(want), "{want}: {error}");
    }
}

fn valid() -> MetadataFile {
    project::metadata_file().unwrap_or_else(|e| panic!("{e}"))
}

/// Each broken metadata file gives the expected message (and only the valid one passes).
#[test]
fn metadata_validation_errors() -> Result<(), Error> {
    let base = project::read_text("policy-metadata.yml")?;
    let version = project::cargo_version()?;
    assert_eq!(
        MetadataFile::from_yaml(&base)?.problems(Some(&version)),
        Vec::<String>::new()
    );
    let replace = |from: &str, to: &str| -> String {
        assert!(
            base.contains(from),
            "fixture text {from:?} not in policy-metadata.yml"
        );
        base.replacen(from, to, 1)
    };
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "empty rules",
            format!(
                "rules: []\n{}",
                base.split_once("mutating:")
                    .map(|(_, r)| format!("mutating:{r}"))
                    .unwrap_or_default()
            ),
            "rules: must not be empty",
        ),
        (
            "unknown operation",
            replace(
                "operations: [\"CREATE\", \"UPDATE\"]",
                "operations: [\"CREATE\", \"PATCH\"]",
            ),
            "rules[0].operations[1]: unknown operation \"PATCH\"",
        ),
        (
            "empty resources",
            replace("resources: [\"virtualmachines\"]", "resources: []"),
            "rules[0].resources: must not be empty",
        ),
        (
            "wildcard with others",
            replace("apiVersions: [\"v1\"]", "apiVersions: [\"v1\", \"*\"]"),
            "rules[0].apiVersions: '*' must be the only entry",
        ),
        (
            "title not a name",
            replace("title: vm-maintenance-strategy", "title: VM Maintenance"),
            "annotations.io.kubewarden.policy.title: \"VM Maintenance\" is not a valid Kubernetes name",
        ),
        (
            "version not semver",
            replace("version: 0.1.0", "version: '0.1'"),
            "annotations.io.kubewarden.policy.version: \"0.1\" is not a semantic version",
        ),
        (
            "version not Cargo's",
            replace("version: 0.1.0", "version: 0.2.0"),
            "annotations.io.kubewarden.policy.version: 0.2.0 differs from the version in Cargo.toml (0.1.0)",
        ),
        (
            "ociUrl with tag",
            replace(
                "vm-maintenance-strategy\n  io.kubewarden.policy.category",
                "vm-maintenance-strategy:v0.1.0\n  io.kubewarden.policy.category",
            ),
            "must not carry a tag",
        ),
        (
            "ociUrl with digest",
            replace(
                "vm-maintenance-strategy\n  io.kubewarden.policy.category",
                &format!(
                    "vm-maintenance-strategy@sha256:{}\n  io.kubewarden.policy.category",
                    "a".repeat(64)
                ),
            ),
            "must not carry a digest",
        ),
        (
            "ociUrl with scheme",
            replace("ociUrl: ghcr.io", "ociUrl: registry://ghcr.io"),
            "without a scheme",
        ),
        (
            "ociUrl without registry",
            replace("ociUrl: ghcr.io/", "ociUrl: "),
            "name the registry host",
        ),
        (
            "ociUrl missing",
            replace(
                "  io.kubewarden.policy.ociUrl: ghcr.io/example/policies/vm-maintenance-strategy\n",
                "",
            ),
            "annotations.io.kubewarden.policy.ociUrl: missing",
        ),
        (
            "protocolVersion by hand",
            format!("protocolVersion: v1\n{base}"),
            "protocolVersion: do not write it by hand",
        ),
        (
            "kwctl's annotation",
            replace(
                "  # kubewarden specific\n",
                "  io.kubewarden.kwctl: 1.36.0\n",
            ),
            "annotations.io.kubewarden.kwctl: written by kwctl itself",
        ),
        (
            "unknown host capability",
            replace("- kubernetes/get_resource", "- kubernetes/get_resources"),
            "hostCapabilities[1]: unknown host capability \"kubernetes/get_resources\"",
        ),
        (
            "duplicate host capability",
            replace(
                "- kubernetes/get_resource",
                "- kubernetes/list_resources_all",
            ),
            "hostCapabilities[1]: \"kubernetes/list_resources_all\" is listed twice",
        ),
        (
            "duplicate context-aware resource",
            replace("kind: PersistentVolumeClaim", "kind: KubeVirt").replace(
                "apiVersion: v1\n    kind: KubeVirt",
                "apiVersion: kubevirt.io/v1\n    kind: KubeVirt",
            ),
            "contextAwareResources[6]: kubevirt.io/v1/KubeVirt is listed twice",
        ),
        (
            "bad author",
            replace(
                "developers <vm-maintenance-strategy@example.org>",
                "developers <not an address>",
            ),
            "annotations.io.kubewarden.policy.author:",
        ),
        (
            "bad severity",
            replace("severity: medium", "severity: urgent"),
            "annotations.io.kubewarden.policy.severity: unknown value \"urgent\"",
        ),
        (
            "other execution mode",
            replace("executionMode: kubewarden-wapc", "executionMode: opa"),
            "executionMode: \"opa\" is not supported here",
        ),
        (
            "bad minimum version",
            format!("minimumKubewardenVersion: one\n{base}"),
            "minimumKubewardenVersion: \"one\" is not a semantic version",
        ),
    ];
    let mut failures = Vec::new();
    for (name, text, want) in &cases {
        let problems = match MetadataFile::from_yaml(text) {
            Ok(file) => file.problems(Some(&version)),
            Err(e) => vec![e.to_string()],
        };
        if !problems.iter().any(|p| p.contains(want)) {
            failures.push(format!("{name}: want {want:?}, got {problems:?}"));
        }
    }
    // Errors the YAML shape itself catches.
    for (name, text, want) in [
        (
            "typo in a key",
            replace("hostCapabilities:", "hostCapabilites:"),
            "unknown field `hostCapabilites`",
        ),
        (
            "mutating missing",
            replace("mutating: true\n", ""),
            "missing field `mutating`",
        ),
    ] {
        match MetadataFile::from_yaml(&text) {
            Ok(_) => failures.push(format!("{name}: accepted")),
            Err(e) if !e.to_string().contains(want) => {
                failures.push(format!("{name}: want {want:?}, got {e}"))
            }
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // annotate refuses an invalid file before touching the module, with every problem listed.
    let broken = MetadataFile::from_yaml(
        &replace("severity: medium", "severity: urgent")
            .replace("title: vm-maintenance-strategy", "title: X"),
    )?;
    let error = annotate(&project::module()?, &broken, None, Some(&version))
        .err()
        .ok_or("invalid metadata must be refused")?
        .to_string();
    assert!(error.starts_with("invalid metadata:"), "{error}");
    assert!(
        error.contains("severity") && error.contains("title"),
        "{error}"
    );
    Ok(())
}

/// A module that names the Kubernetes capabilities but whose metadata declares none gets a
/// warning, and a declared capability the module never names gets one too.
#[test]
fn host_capability_warnings() -> Result<(), Error> {
    let module = project::module()?;
    let used = wasm::referenced_host_capabilities(&module)?;
    let annotated = project::annotated()?;
    for capability in project::metadata_file()?.host_capabilities.iter().flatten() {
        let warned = annotated
            .warnings
            .iter()
            .any(|w| w.contains(&format!("declares {capability},")));
        assert_eq!(
            warned,
            !used.contains(&capability.as_str()),
            "{capability}: {:?}",
            annotated.warnings
        );
    }
    Ok(())
}

#[test]
fn host_capability_patterns() {
    for (pattern, ok) in [
        ("kubernetes/get_resource", true),
        ("kubernetes/list_resources_all", true),
        ("kubernetes/*", true),
        ("oci/v1/*", true),
        ("oci/*", true),
        ("*", true),
        ("kubernetes", false),
        ("oci/v1", false),
        ("oci*", false),
        ("kubernetes/get_*", false),
        ("kubernetes/nonexistent", false),
        ("", false),
    ] {
        assert_eq!(m::check_host_capability(pattern).is_ok(), ok, "{pattern:?}");
    }
}

#[test]
fn oci_url_shapes() {
    let digest = format!("@sha256:{}", "a".repeat(64));
    for (url, ok) in [
        ("ghcr.io/example/policies/vm-maintenance-strategy", true),
        ("localhost:5000/policies/x", true),
        ("registry.example.org:443/x", true),
        ("ghcr.io/example/x:v1.0.0", false),
        ("localhost:5000/x:latest", false),
        (&format!("ghcr.io/example/x{digest}"), false),
        ("example/x", false),
        ("registry://ghcr.io/example/x", false),
        ("ghcr.io/Example/X", false),
    ] {
        assert_eq!(
            m::check_oci_url(url).is_ok(),
            ok,
            "{url:?}: {:?}",
            m::check_oci_url(url)
        );
    }
}
