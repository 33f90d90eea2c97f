//! K4 (docs/rules.md): the KubeVirt CR should make virt-controller sync the policy's label to
//! running VMIs and their launcher Pods (`--additional-launcher-labels-sync`, from KubeVirt
//! v1.7.0; `prefix*` patterns from v1.9.0), set through `spec.customizeComponents`: the
//! controller's `flags` or a `patches` entry on the `virt-controller` Deployment. Only what
//! virt-operator applies counts; a patch it cannot apply is a finding.

use crate::admission::verdict::Verdict;
use crate::configuration::parse_version;
use crate::listing::listed;
use crate::object::view::{self, Field, List, Map, Scalar, view};
use crate::settings::Mode;

const FIELD: &str = "spec.customizeComponents";
const FLAG: &str = "additional-launcher-labels-sync";
const AFTER: &str =
    "a changed label reaches running VMIs and launcher Pods only when the VM restarts";

view! {
    /// `spec.customizeComponents` of the KubeVirt CR.
    Customize<'a> {
        "flags" => flags: Field<Flags<'a>>,
        "patches" => patches: List<Patch<'a>>,
    }
}

view! {
    /// A KubeVirt CR as far as [`syncs_label`] reads it.
    SyncedCr<'a> {
        "spec" => spec: Field<SyncedSpec<'a>>,
        "status" => status: Field<SyncedStatus<'a>>,
    }
}

view! {
    SyncedSpec<'a> {
        "customizeComponents" => customize_components: Field<Customize<'a>>,
    }
}

view! {
    SyncedStatus<'a> {
        "observedKubeVirtVersion" => observed_version: Option<Scalar<'a>>,
    }
}

view! {
    Flags<'a> {
        "controller" => controller: Field<Map<'a, Scalar<'a>>>,
    }
}

view! {
    Patch<'a> {
        "resourceName" => resource_name: Option<Scalar<'a>>,
        "resourceType" => resource_type: Option<Scalar<'a>>,
        "patch" => patch: Option<Scalar<'a>>,
        "type" => kind: Option<Scalar<'a>>,
    }
}

view! {
    /// One operation of a JSON patch.
    Operation<'a> {
        "op" => op: Option<Scalar<'a>>,
        "path" => path: Option<Scalar<'a>>,
        "value" => value: Option<Scalar<'a>>,
    }
}

view! {
    /// A strategic-merge or merge patch of a Deployment, as far as its containers.
    Deployment<'a> {
        "spec" => spec: Field<DeploymentSpec<'a>>,
    }
}

view! {
    DeploymentSpec<'a> {
        "template" => template: Field<PodTemplate<'a>>,
    }
}

view! {
    PodTemplate<'a> {
        "spec" => spec: Field<PodSpec<'a>>,
    }
}

view! {
    PodSpec<'a> {
        "containers" => containers: List<Container<'a>>,
    }
}

view! {
    Container<'a> {
        "name" => name: Option<Scalar<'a>>,
        "command" => command: Option<Scalar<'a>>,
        "args" => args: Option<Scalar<'a>>,
    }
}

/// K4 on a KubeVirt CR as JSON, for the tools: `Ok` when virt-controller syncs `key`, else K4's
/// messages. `version` is the settings' `kubevirt.version`, read before the CR's
/// `status.observedKubeVirtVersion`; a CR that is not an object syncs nothing.
pub fn syncs_label(
    cr: &serde_json::Value,
    key: &str,
    version: Option<&str>,
) -> Result<(), Vec<String>> {
    let text = cr.to_string();
    let cr: Option<SyncedCr> = view::parse(&text).ok().flatten();
    let status = cr.as_ref().and_then(|cr| cr.status.get());
    let observed = status.and_then(|s| s.observed_version.as_ref()?.as_str());
    let release = version.or(observed).and_then(parse_version);
    let spec = cr.as_ref().and_then(|cr| cr.spec.get());
    let customize = spec.and_then(|s| s.customize_components.get());
    let mut verdict = Verdict::default();
    validate(customize, key, release, Mode::Warn, &mut verdict);
    match verdict.warnings.is_empty() {
        true => Ok(()),
        false => Err(verdict.warnings),
    }
}

/// K4, for the label `key` on KubeVirt `release` (`None`: the newest rules).
pub(crate) fn validate(
    customize: Option<&Customize>,
    key: &str,
    release: Option<(u64, u64)>,
    mode: Mode,
    verdict: &mut Verdict,
) {
    if mode == Mode::Ignore {
        return;
    }
    let newest = release.unwrap_or((1, 9));
    if newest < (1, 7) {
        // Nothing the CR can do: a warning whatever the mode.
        verdict.warn(format!(
            "{FIELD}: KubeVirt {} has no --{FLAG} (from v1.7.0): a changed label {key} reaches running VMIs and launcher Pods only when the VM restarts",
            shown_release(newest)
        ));
        return;
    }
    let found = Found::of(customize, newest);
    let mut findings = found.problems.clone();
    if !found.patterns.iter().any(|p| covers(p, key, newest)) {
        findings.push(not_covered(&found.patterns, key, newest));
    }
    for finding in findings {
        match mode {
            Mode::Reject => verdict.reject(finding),
            _ => verdict.warn(finding),
        }
    }
}

/// Why the label is not synced.
fn not_covered(patterns: &[String], key: &str, release: (u64, u64)) -> String {
    if patterns.is_empty() {
        return format!(
            "{FIELD}: virt-controller does not sync label {key} (no --{FLAG}); {AFTER}"
        );
    }
    if let Some(pattern) = patterns.iter().find(|p| covers(p, key, (1, 9))) {
        return format!(
            "{FIELD}: --{FLAG} pattern {pattern} covers label {key} only from KubeVirt v1.9.0 ({} matches exact keys); {AFTER}",
            shown_release(release)
        );
    }
    format!(
        "{FIELD}: --{FLAG} {} does not cover label {key}; {AFTER}",
        listed(patterns, ",")
    )
}

/// Whether virt-controller's pattern covers `key`: an exact key, or from v1.9.0 a prefix ending in
/// `*` (a bare `*` is ignored).
fn covers(pattern: &str, key: &str, release: (u64, u64)) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) if release >= (1, 9) => !prefix.is_empty() && key.starts_with(prefix),
        _ => pattern == key,
    }
}

fn shown_release((major, minor): (u64, u64)) -> String {
    format!("v{major}.{minor}")
}

/// What the CR passes virt-controller as `--additional-launcher-labels-sync`, and the
/// customizations virt-operator cannot apply.
#[derive(Default)]
struct Found {
    patterns: Vec<String>,
    problems: Vec<String>,
}

impl Found {
    fn of(customize: Option<&Customize>, release: (u64, u64)) -> Found {
        let mut found = Found::default();
        let Some(customize) = customize else {
            return found;
        };
        if let Some(flags) = customize.flags.get().and_then(|f| f.controller.get()) {
            found.flags(flags, release);
        }
        for (index, patch) in customize.patches.items.iter().enumerate() {
            if let Err(why) = found.patch(patch) {
                found.problems.push(format!(
                    "{FIELD}.patches[{index}]: {why}; virt-operator cannot apply it and deploys no customization, --{FLAG} included"
                ));
            }
        }
        found
    }

    /// `flags.controller`: virt-operator passes `--KEY VALUE`, the key lower-cased (and from
    /// v1.8.0 the value too), an empty value as `--KEY` alone.
    fn flags(&mut self, flags: &Map<Scalar>, release: (u64, u64)) {
        for (name, value) in flags.entries() {
            if !name.eq_ignore_ascii_case(FLAG) {
                continue;
            }
            match value.as_str() {
                Some("") => self.problems.push(format!(
                    "{FIELD}.flags.controller.{name}: empty; virt-operator passes --{FLAG} without a value and virt-controller does not start"
                )),
                Some(text) if release >= (1, 8) => self.add(&text.to_ascii_lowercase()),
                Some(text) => self.add(text),
                None => {}
            }
        }
    }

    /// One patch: decoded as virt-operator decodes it; the arguments it gives virt-controller.
    fn patch(&mut self, patch: &Patch) -> Result<(), String> {
        let text = patch.patch.as_ref().and_then(Scalar::as_str).unwrap_or("");
        let kind = patch.kind.as_ref().and_then(Scalar::as_str).unwrap_or("");
        let targets = matches(&patch.resource_type, "Deployment")
            && matches(&patch.resource_name, "virt-controller");
        let arguments = match kind {
            "json" => view::parse_array::<Operation>(text)
                .map_err(|_| "a json patch must be a JSON array of operations".to_owned())
                .map(|ops| operation_arguments(&ops))?,
            "strategic" | "merge" => match view::parse::<Deployment>(text) {
                Ok(Some(deployment)) => container_arguments(&deployment),
                _ => return Err(format!("a {kind} patch must be a JSON object")),
            },
            other => {
                return Err(format!(
                    "unknown type {other:?} (valid: json, strategic, merge)"
                ));
            }
        };
        if targets {
            self.arguments(&arguments);
        }
        Ok(())
    }

    /// `--FLAG=VALUE`, or `--FLAG` then `VALUE`.
    fn arguments(&mut self, arguments: &[String]) {
        let flag = format!("--{FLAG}");
        for (index, argument) in arguments.iter().enumerate() {
            if let Some(value) = argument.strip_prefix(&format!("{flag}=")) {
                self.add(value);
            } else if *argument == flag
                && let Some(value) = arguments.get(index + 1)
            {
                self.add(value);
            }
        }
    }

    /// pflag's string slice: one comma-separated list.
    fn add(&mut self, value: &str) {
        self.patterns.extend(
            value
                .split(',')
                .filter(|p| !p.is_empty())
                .map(str::to_owned),
        );
    }
}

/// virt-operator matches a patch's resource type and name case-insensitively, `*` any.
fn matches(value: &Option<Scalar>, wanted: &str) -> bool {
    value
        .as_ref()
        .and_then(Scalar::as_str)
        .is_some_and(|v| v == "*" || v.eq_ignore_ascii_case(wanted))
}

/// The strings a JSON patch adds to or puts in a container's `args` or `command`, in order.
fn operation_arguments(operations: &[Operation]) -> Vec<String> {
    let mut arguments = Vec::new();
    for operation in operations {
        let op = operation.op.as_ref().and_then(Scalar::as_str);
        let path = operation
            .path
            .as_ref()
            .and_then(Scalar::as_str)
            .unwrap_or("");
        let into_container = path.starts_with("/spec/template/spec/containers/")
            && (path.contains("/args") || path.contains("/command"));
        if matches!(op, Some("add" | "replace")) && into_container {
            strings(operation.value.as_ref(), &mut arguments);
        }
    }
    arguments
}

/// The `command` and `args` of the patch's `virt-controller` container.
fn container_arguments(deployment: &Deployment) -> Vec<String> {
    let mut arguments = Vec::new();
    let containers = deployment
        .spec
        .get()
        .and_then(|s| s.template.get())
        .and_then(|t| t.spec.get())
        .map_or(&[][..], |s| &s.containers.items);
    for container in containers {
        if container.name.as_ref().and_then(Scalar::as_str) == Some("virt-controller") {
            strings(container.command.as_ref(), &mut arguments);
            strings(container.args.as_ref(), &mut arguments);
        }
    }
    arguments
}

/// A string, or the strings of an array.
fn strings(value: Option<&Scalar>, out: &mut Vec<String>) {
    match value {
        Some(Scalar::Str(text)) => out.push(text.to_string()),
        Some(Scalar::Array(items)) => {
            out.extend(items.iter().filter_map(Scalar::as_str).map(str::to_owned))
        }
        _ => {}
    }
}
