//! The drain preview: every VM's drain outcome (the policy's own assessment, the dump as the
//! cluster) beside the policy's verdict on a CREATE of it, judged on the real module as
//! Kubewarden's audit scanner would.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use cluster_model::drain::drain_outcome;
use cluster_model::restart::{Disks, RunStrategy, after_eviction, node_bound};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use policy_host::{Cluster, Evaluation, PolicyHost};
use serde::Deserialize;
use serde_json::{Value, json};
use vm_maintenance_strategy::eviction::Assessment;
use vm_maintenance_strategy::settings::Settings;
use vm_maintenance_strategy::strategy::EvictionStrategy;

use crate::columns::Layout;
use crate::dump_cluster::{DumpCluster, assess, dump_cluster, policy_settings};
use crate::input::{Dump, Source, documents, read_text};
use crate::label_sync::{self, LabelSync};
use crate::maintenance::Extra;
use crate::report::{Prediction, Row, Verdict, VerdictKind};
use crate::running::{Running, Vmi};
use crate::staleness::{self, Labels};

/// A VM as raw JSON (the type the policy crate reads).
type Object = serde_json::Map<String, Value>;

/// Inputs smaller than this get no progress bar.
const PROGRESS_MIN: usize = 200;

/// The user the audit scanner's requests carry.
const AUDIT_USER: &str = "system:serviceaccount:kubewarden:kubewarden-audit-scanner";

/// How to judge and how to answer.
pub struct Options<'a> {
    /// The policy settings as written (`{}` by default).
    pub settings: &'a Value,
    /// Where they were read from, to name them in errors.
    pub settings_path: Option<&'a Path>,
    pub external_controller: bool,
    pub layout: Layout,
    /// Prefix of the notes on stderr (`kubectl-vm_maintenance`).
    pub program: &'a str,
    /// Only the VMs whose VMI runs on this node.
    pub node: Option<&'a str>,
    /// Only the VMs of this namespace.
    pub namespace: Option<&'a str>,
}

/// The preview's text and exit code: 0 when no VM blocks a drain and every VM evicted comes
/// back, 2 when some VM would block it (or could not be judged), 3 when none blocks but some VM
/// evicted without migration may stay off or down after it; `Err` for bad input and for a
/// selection without any VM (exit 1): a node or namespace that matches none, an input without
/// VirtualMachines.
pub fn drain(
    sources: &[Source],
    host: &PolicyHost,
    options: &Options,
) -> Result<(String, u8), String> {
    let Options {
        settings, program, ..
    } = options;
    let dump = Dump::from_sources(sources);
    for note in &dump.notes {
        eprintln!("{program}: note: {note}");
    }
    check_settings(host, settings, options.settings_path)?;
    if let Some(note) = settings_versus_cluster(settings, &dump) {
        eprintln!("{program}: note: {note}");
    }
    let policy = policy_settings(settings).map_err(|e| refused(options.settings_path, &e))?;
    let extra = Extra::from_sources(sources);
    if let Some(note) = extra.missing_disks(&dump) {
        eprintln!("{program}: note: {note}");
    }
    let sync = label_sync::of(
        dump.kubevirts.first(),
        cluster_model::drain::DEFAULT_LABEL_KEY,
        settings
            .pointer("/kubevirt/version")
            .and_then(Value::as_str),
    );
    let view = View {
        sync: &sync,
        policy: &policy,
        dump: &dump_cluster(&dump),
        running: Running::new(&extra),
        disks: Disks::new(&dump.pvcs, &extra.persistent_volumes, &extra.nodes),
        cluster_strategy: dump
            .kubevirts
            .first()
            .and_then(|cr| cr.pointer("/spec/configuration/evictionStrategy"))
            .and_then(Value::as_str),
    };
    let cluster = Arc::new(Cluster::new(
        dump.kubevirts
            .iter()
            .chain(&dump.pvcs)
            .chain(&dump.instancetypes)
            .cloned()
            .collect(),
    ));
    let vms: Vec<(usize, &Value)> = dump
        .vms
        .iter()
        .enumerate()
        .filter(|(_, vm)| selected(vm, &view.running, options))
        .collect();
    if vms.is_empty() {
        return Err(nothing_selected(&dump, &extra, &view.running, options));
    }
    let progress = progress_bar(vms.len());
    let mut rows: Vec<Row> = vms
        .into_iter()
        .map(|(i, vm)| {
            let row = judge(
                vm,
                i,
                host,
                &cluster,
                settings,
                &view,
                options.external_controller,
            );
            progress.inc(1);
            row
        })
        .collect();
    progress.finish_and_clear();
    rows.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));

    let text = match options.layout.data(&rows) {
        Some(text) => text?,
        None => crate::report::table(&rows, &sync, &options.layout),
    };
    Ok((text, exit_code(&rows)))
}

/// Why no VM is left to judge, and what the input holds instead: a node that is not in it (the
/// nodes read), a node or namespace without a VM (where VMs are), no VirtualMachine at all (and
/// how many objects were ignored for want of `kind` / `apiVersion`).
fn nothing_selected(dump: &Dump, extra: &Extra, running: &Running, options: &Options) -> String {
    let names = |mut names: Vec<String>| {
        names.sort();
        names.dedup();
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    };
    let nodes_of_vms: Vec<String> = dump
        .vms
        .iter()
        .filter(|vm| options.namespace.is_none_or(|n| key(vm).0 == n))
        .filter_map(|vm| {
            let (namespace, name) = key(vm);
            running.vmi(namespace, name)?.node.map(str::to_owned)
        })
        .collect();
    if let Some(node) = options.node {
        let mut known: Vec<String> = extra
            .nodes
            .iter()
            .filter_map(|n| text_at(n, "/metadata/name").map(str::to_owned))
            .collect();
        known.extend(
            extra
                .vmis
                .iter()
                .filter_map(|v| text_at(v, "/status/nodeName").map(str::to_owned)),
        );
        known.extend(nodes_of_vms.iter().cloned());
        if !known.iter().any(|n| n == node) {
            let known = if known.is_empty() {
                "none; add `kubectl get nodes -o json`".to_owned()
            } else {
                names(known)
            };
            return format!("node {node} is not in the input (nodes read: {known})");
        }
        let namespace = options
            .namespace
            .map(|n| format!(" of namespace {n}"))
            .unwrap_or_default();
        return format!(
            "no VirtualMachine{namespace} runs on node {node} (nodes that run one: {})",
            names(nodes_of_vms)
        );
    }
    if let Some(namespace) = options.namespace {
        let namespaces: Vec<String> = dump.vms.iter().map(|vm| key(vm).0.to_owned()).collect();
        return format!(
            "no VirtualMachine in namespace {namespace} (namespaces with one: {})",
            names(namespaces)
        );
    }
    let mut message = "no VirtualMachine in the input".to_owned();
    if dump.untyped > 0 {
        message.push_str(&format!(
            "; {} objects without kind or apiVersion were ignored (a VM needs `apiVersion: kubevirt.io/v1` and `kind: VirtualMachine`)",
            dump.untyped
        ));
    }
    message
}

fn text_at<'v>(value: &'v Value, pointer: &str) -> Option<&'v str> {
    value.pointer(pointer).and_then(Value::as_str)
}

/// A VM's namespace (`default` when it names none) and name.
fn key(vm: &Value) -> (&str, &str) {
    (
        text_at(vm, "/metadata/namespace").unwrap_or("default"),
        text_at(vm, "/metadata/name").unwrap_or_default(),
    )
}

/// 2 when a VM may block the drain, else 3 when one may stay off or down after it, else 0.
fn exit_code(rows: &[Row]) -> u8 {
    if rows.iter().any(Row::may_block) {
        2
    } else if rows.iter().any(Row::may_stay_down) {
        3
    } else {
        0
    }
}

/// The answer on stdout. A closed pipe (`| head`) is not an error of the input.
pub fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// Settings the policy refuses, named by their file (`{}` for the default).
pub fn refused(path: Option<&Path>, message: &str) -> String {
    let shown = path.map_or_else(|| "{}".to_owned(), |p| p.display().to_string());
    format!("{shown}: the policy refuses these settings: {message}")
}

/// Settings from a file: the document itself, or a policy manifest's `spec.settings`. A value
/// of the wrong type is reported at the file's own line and column (the policy's settings read
/// from the file's text, YAML or JSON), not at a position in the JSON the module is given.
pub fn read_settings(path: &Path) -> Result<Value, String> {
    let text = read_text(path)?;
    let mut documents = documents(&text, path)?;
    if documents.len() != 1 {
        return Err(format!(
            "{}: expected one settings document, found {}",
            path.display(),
            documents.len()
        ));
    }
    let document = documents.remove(0);
    let kind = document.get("kind").and_then(Value::as_str);
    let api_version = document.get("apiVersion").and_then(Value::as_str);
    let policy = api_version.is_some_and(|v| v.starts_with("policies.kubewarden.io/"))
        && matches!(kind, Some("ClusterAdmissionPolicy" | "AdmissionPolicy"));
    let settings = if policy {
        document
            .pointer("/spec/settings")
            .cloned()
            .unwrap_or_else(|| json!({}))
    } else {
        document
    };
    if !settings.is_object() {
        return Err(format!(
            "{}: settings must be an object (or a policy manifest with spec.settings)",
            path.display()
        ));
    }
    typed_settings(&text, policy).map_err(|e| refused(Some(path), &e))?;
    Ok(settings)
}

/// A policy manifest, read only for the errors of its settings.
#[derive(Deserialize)]
#[expect(dead_code, reason = "read for its errors only")]
struct Manifest {
    spec: Option<ManifestSpec>,
}

#[derive(Deserialize)]
#[expect(dead_code, reason = "read for its errors only")]
struct ManifestSpec {
    settings: Option<Settings>,
}

/// The settings read from the file's text into the policy's own type, so that an error carries
/// the file's line and column: `evictionStrategy.nonMigratable: unknown variant ... at line 4
/// column 18`. The consistency checks follow in [`check_settings`].
fn typed_settings(text: &str, manifest: bool) -> Result<(), String> {
    let json = text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with(['{', '[']);
    // The path is written relative to the settings, as the policy names fields.
    let relative = |message: String| match message.strip_prefix("spec.settings.") {
        Some(rest) => rest.to_owned(),
        None => message,
    };
    if json {
        // serde_json's errors name no field: serde_path_to_error adds it, as the policy does.
        let deserializer = &mut serde_json::Deserializer::from_str(text);
        let named = |path: String, error: String| match path.as_str() {
            "." | "?" | "spec" | "spec.settings" => error,
            _ => relative(format!("{path}: {error}")),
        };
        if manifest {
            serde_path_to_error::deserialize::<_, Manifest>(deserializer)
                .map(drop)
                .map_err(|e| named(e.path().to_string(), e.inner().to_string()))
        } else {
            serde_path_to_error::deserialize::<_, Option<Settings>>(deserializer)
                .map(drop)
                .map_err(|e| named(e.path().to_string(), e.inner().to_string()))
        }
    } else {
        // serde_yaml's errors name the field themselves.
        let read = if manifest {
            serde_yaml::from_str::<Manifest>(text).map(drop)
        } else {
            serde_yaml::from_str::<Option<Settings>>(text).map(drop)
        };
        read.map_err(|e| relative(e.to_string()))
    }
}

/// `validate_settings` once, as policy-server does at start-up.
pub fn check_settings(
    host: &PolicyHost,
    settings: &Value,
    path: Option<&Path>,
) -> Result<(), String> {
    let payload = serde_json::to_vec(settings).map_err(|e| e.to_string())?;
    let answer = host
        .instance()
        .and_then(|instance| instance.call("validate_settings", &payload))
        .map_err(|e| format!("validate_settings: {e}"))?;
    let answer: Value = serde_json::from_slice(&answer).map_err(|e| e.to_string())?;
    if answer.get("valid") == Some(&Value::Bool(true)) {
        return Ok(());
    }
    let message = answer.get("message").and_then(Value::as_str);
    Err(refused(path, message.unwrap_or("(no message)")))
}

/// A settings `clusterDefault` that disagrees with the dump's KubeVirt CR: KubeVirt itself uses
/// the CR's value, the preview follows the settings (as the policy does).
fn settings_versus_cluster(settings: &Value, dump: &Dump) -> Option<String> {
    let ours = settings.pointer("/evictionStrategy/clusterDefault")?;
    let theirs = dump
        .kubevirts
        .first()?
        .pointer("/spec/configuration/evictionStrategy")
        .unwrap_or(&Value::Null);
    (ours != theirs).then(|| {
        format!(
            "settings evictionStrategy.clusterDefault {ours} differs from the KubeVirt CR's {theirs}; \
             VMs without their own strategy are judged with the settings' value"
        )
    })
}

fn progress_bar(len: usize) -> ProgressBar {
    if len < PROGRESS_MIN || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{prefix} {wide_bar} {pos}/{len} VMs, {eta} left")
    {
        bar.set_style(style);
    }
    bar.set_prefix("evaluating");
    bar
}

/// What the assessment reads: the settings as the policy reads them, the dump as the cluster;
/// and what runs.
struct View<'a> {
    /// What the KubeVirt CR does with Harvester's label (K4).
    sync: &'a LabelSync,
    policy: &'a Settings,
    dump: &'a DumpCluster<'a>,
    running: Running<'a>,
    /// Claims, PersistentVolumes and Nodes: a disk only the drained node can mount (R10).
    disks: Disks<'a>,
    /// The KubeVirt CR's `spec.configuration.evictionStrategy`.
    cluster_strategy: Option<&'a str>,
}

/// Whether the options keep a VM: its namespace, and the node its VMI runs on.
fn selected(vm: &Value, running: &Running, options: &Options) -> bool {
    let namespace = vm
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("default");
    let name = vm
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    options.namespace.is_none_or(|n| n == namespace)
        && options.node.is_none_or(|node| {
            running
                .vmi(namespace, name)
                .is_some_and(|vmi| vmi.node == Some(node))
        })
}

/// One VM: its drain outcome and the policy's verdict. Never fails: what cannot be judged is
/// said in the row.
fn judge(
    vm: &Value,
    index: usize,
    host: &PolicyHost,
    cluster: &Arc<Cluster>,
    settings: &Value,
    view: &View,
    external_controller: bool,
) -> Row {
    let empty = Object::new();
    let object = vm.as_object().unwrap_or(&empty);
    let metadata = object.get("metadata");
    let namespace = metadata
        .and_then(|m| m.get("namespace"))
        .and_then(Value::as_str)
        .unwrap_or("default")
        .to_owned();
    let name = metadata.and_then(|m| m.get("name")).and_then(Value::as_str);
    let mut row = Row::new(
        namespace.clone(),
        name.map_or_else(|| format!("(unnamed VM #{})", index + 1), str::to_owned),
    );
    let label = |labels: Option<&Value>| {
        labels
            .and_then(|l| l.get(cluster_model::drain::DEFAULT_LABEL_KEY))
            .cloned()
    };
    row.label = label(metadata.and_then(|m| m.get("labels")));
    let template_labels = object
        .get("spec")
        .and_then(|s| s.pointer("/template/metadata/labels"));
    row.template_label = label(template_labels);
    row.verdict = Some(verdict(vm, &namespace, name, host, cluster, settings));

    if name.is_none() {
        row.error = Some("metadata.name: missing".to_owned());
        return row;
    }
    let template_labels = match template_labels {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(map)) => map,
        Some(_) => {
            row.error = Some(
                "spec.template.metadata.labels: not a map, the labels of its Pod are unknown"
                    .to_owned(),
            );
            return row;
        }
    };
    let mut assessment = assess(vm, view.policy, view.dump);
    row.notes = std::mem::take(&mut assessment.warnings);
    let run_strategy = RunStrategy::of(Some(vm));
    match view.running.vmi(&namespace, name.unwrap_or_default()) {
        Some(vmi) => judge_vmi(
            vm,
            &mut row,
            &vmi,
            assessment,
            template_labels,
            view,
            external_controller,
            run_strategy,
        ),
        None => judge_stopped(
            &mut row,
            assessment,
            template_labels,
            external_controller,
            run_strategy,
        ),
    }
    row
}

/// A VM that does not run: the policy's reading of its object decides, as if it ran.
fn judge_stopped(
    row: &mut Row,
    assessment: Assessment,
    template_labels: &Object,
    external_controller: bool,
    run_strategy: RunStrategy,
) {
    let strategy = assessment
        .eviction_strategy
        .unwrap_or(EvictionStrategy::None);
    let decision = drain_outcome(
        template_labels,
        &strategy,
        &assessment.reasons,
        external_controller,
        &after_eviction(&run_strategy, None),
    );
    row.run_strategy = Some(run_strategy);
    row.eviction_strategy = Some(strategy);
    row.eviction_strategy_source = Some(assessment.source.as_str());
    row.reasons = assessment.reasons.iter().map(ToString::to_string).collect();
    row.outcome = Some(decision.outcome);
    row.why = Some(decision.reason);
}

/// A running VM: KubeVirt judges its VMI (its own strategy, its `LiveMigratable` condition, its
/// Pod's labels); the policy's reading of the VM is shown beside it.
#[expect(
    clippy::too_many_arguments,
    reason = "one call site; the VM and its row are judged together"
)]
fn judge_vmi(
    vm: &Value,
    row: &mut Row,
    vmi: &Vmi,
    assessment: Assessment,
    template_labels: &Object,
    view: &View,
    external_controller: bool,
    run_strategy: RunStrategy,
) {
    let (strategy, source) = vmi.eviction_strategy(view.cluster_strategy);
    let reasons = vmi.not_migratable();
    let labels = vmi.pod_labels.unwrap_or(template_labels);
    let bound = vmi
        .node
        .and_then(|node| node_bound(vmi.vmi, node, &view.disks));
    let evicted = after_eviction(&run_strategy, bound.as_deref());
    let decision = drain_outcome(labels, &strategy, &reasons, external_controller, &evicted);
    row.run_strategy = Some(run_strategy);
    row.running = true;
    row.node = vmi.node.map(str::to_owned);
    row.eviction_strategy = Some(strategy);
    row.eviction_strategy_source = Some(source);
    row.reasons = reasons;
    row.outcome = Some(decision.outcome);
    row.why = Some(decision.reason);
    let labels = Labels {
        key: cluster_model::drain::DEFAULT_LABEL_KEY,
        sync: view.sync,
    };
    row.staleness = Some(staleness::of(
        Some(vm),
        vmi,
        view.cluster_strategy,
        Some(&labels),
    ));
    row.prediction = Some(Prediction {
        eviction_strategy: assessment.eviction_strategy,
        eviction_strategy_source: assessment.source.as_str(),
        reasons: assessment.reasons,
    });
}

/// The policy's answer to a CREATE of the VM, as the audit scanner asks it.
fn verdict(
    vm: &Value,
    namespace: &str,
    name: Option<&str>,
    host: &PolicyHost,
    cluster: &Arc<Cluster>,
    settings: &Value,
) -> Verdict {
    let gvk = json!({"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"});
    let gvr = json!({"group": "kubevirt.io", "version": "v1", "resource": "virtualmachines"});
    let request = json!({
        "uid": format!("vm-maintenance-{namespace}-{}", name.unwrap_or_default()),
        "kind": gvk,
        "resource": gvr,
        "requestKind": gvk,
        "requestResource": gvr,
        "name": name.unwrap_or_default(),
        "namespace": namespace,
        "operation": "CREATE",
        "userInfo": {"username": AUDIT_USER, "groups": ["system:serviceaccounts", "system:authenticated"]},
        "object": vm,
        "dryRun": false,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
    });
    match host.evaluate_with_cluster(&request, settings, Arc::clone(cluster)) {
        Err(error) => Verdict::error(format!("the host failed: {error}")),
        Ok(Evaluation::SettingsRefused(message)) => {
            Verdict::error(format!("settings refused: {message}"))
        }
        Ok(Evaluation::Answered(answer)) => {
            let response = &answer.response;
            let warnings = response.warnings.clone().unwrap_or_default();
            if !response.allowed {
                let status = response.status.as_ref();
                return Verdict {
                    kind: VerdictKind::Rejected,
                    message: status.and_then(|s| s.message.clone()),
                    code: status.and_then(|s| s.code),
                    warnings,
                    patch: None,
                };
            }
            let patch = answer
                .patch
                .as_ref()
                .and_then(|p| serde_json::to_value(p).ok());
            Verdict {
                kind: if patch.is_some() {
                    VerdictKind::Mutated
                } else {
                    VerdictKind::Allowed
                },
                message: None,
                code: None,
                warnings,
                patch,
            }
        }
    }
}
