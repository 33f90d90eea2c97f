//! drain-preview: before a maintenance window, what a node drain will do with every VM of a
//! cluster dump (`kubectl get vm,kubevirt,pvc -A -o json`), and what the policy says about each
//! VM today, judged on the real `policy.wasm` as Kubewarden's audit scanner would.
//!
//! Exit code: 0 when no VM blocks a drain, 2 when some VM would block one (or could not be
//! judged), 1 on bad input (a file that cannot be read or parsed, settings the policy refuses).

mod dump_cluster;
mod input;
mod maintenance;
mod report;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, ValueEnum};
use cluster_model::drain::drain_outcome;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use policy_host::{Cluster, Evaluation, PolicyHost, default_module_path};
use serde_json::{Value, json};
/// A VM as raw JSON (the type the policy crate reads).
type Object = serde_json::Map<String, Value>;

use crate::dump_cluster::{DumpCluster, assess, dump_cluster, policy_settings};
use crate::input::{Dump, read_documents};
use crate::report::{Row, Verdict, VerdictKind};
use vm_maintenance_strategy::settings::Settings;
use vm_maintenance_strategy::strategy::EvictionStrategy;

/// What a node drain will do with every VM of a cluster dump, and what the policy says today.
///
/// Input: the output of `kubectl get vm,kubevirt,pvc -A -o json` (or `-o yaml`), one or more
/// files; other kinds are ignored. Exit code: 0 when no VM blocks a drain, 2 when some would
/// (or could not be judged), 1 on bad input.
#[derive(Parser, Debug)]
#[command(name = "drain-preview", version)]
struct Args {
    /// Cluster dumps: a List of mixed kinds or single objects, JSON or YAML.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,

    /// Policy settings (JSON or YAML), or a ClusterAdmissionPolicy / AdmissionPolicy manifest
    /// whose `spec.settings` are used. Default: `{}`.
    #[arg(long, value_name = "FILE")]
    settings: Option<PathBuf>,

    /// An external controller evacuates VMIs with the `External` eviction strategy.
    #[arg(long)]
    external_controller: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    output: Format,

    /// Table width in columns. Default: the terminal's, else 120.
    #[arg(long, value_name = "COLUMNS")]
    width: Option<u16>,

    /// The policy module. Default: `$POLICY_WASM`, else `policy.wasm` at the workspace root.
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,

    /// Preview Harvester's maintenance mode on NODE instead (needs the dump's nodes, vmi, pods
    /// and Longhorn volumes/replicas). Exit code: 0 completes, 2 refused or never completes.
    #[arg(long, value_name = "NODE")]
    maintenance: Option<String>,

    /// With --maintenance: the maintenance dialog's "Force" checkbox.
    #[arg(long, requires = "maintenance")]
    force: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Table,
    Json,
}

/// Inputs smaller than this get no progress bar.
const PROGRESS_MIN: usize = 200;

/// The user the audit scanner's requests carry.
const AUDIT_USER: &str = "system:serviceaccount:kubewarden:kubewarden-audit-scanner";

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("drain-preview: {message}");
            ExitCode::from(1)
        }
    }
}

fn run(args: &Args) -> Result<ExitCode, String> {
    let settings = match &args.settings {
        Some(path) => read_settings(path)?,
        None => json!({}),
    };
    let policy = policy_settings(&settings).map_err(|e| refused(args.settings.as_deref(), &e));
    if let Some(node) = &args.maintenance {
        let request = maintenance::Request {
            node,
            force: args.force,
            settings: &policy?,
            external_controller: args.external_controller,
            json: args.output == Format::Json,
            width: table_width(args.width),
        };
        let (text, code) = maintenance::run(&args.files, &request)?;
        print(&text);
        return Ok(ExitCode::from(code));
    }
    let dump = Dump::read(&args.files)?;
    for note in &dump.notes {
        eprintln!("drain-preview: note: {note}");
    }
    let module = args.policy.clone().unwrap_or_else(default_module_path);
    let host = PolicyHost::load(&module).map_err(|e| e.to_string())?;
    check_settings(&host, &settings, args.settings.as_deref())?;
    if let Some(note) = settings_versus_cluster(&settings, &dump) {
        eprintln!("drain-preview: note: {note}");
    }

    let policy = policy?;
    let view = View {
        policy: &policy,
        dump: &dump_cluster(&dump),
    };
    let cluster = Arc::new(Cluster::new(
        dump.kubevirts
            .iter()
            .chain(&dump.pvcs)
            .chain(&dump.instancetypes)
            .cloned()
            .collect(),
    ));
    let progress = progress_bar(dump.vms.len());
    let mut rows: Vec<Row> = dump
        .vms
        .iter()
        .enumerate()
        .map(|(i, vm)| {
            let row = judge(
                vm,
                i,
                &host,
                &cluster,
                &settings,
                &view,
                args.external_controller,
            );
            progress.inc(1);
            row
        })
        .collect();
    progress.finish_and_clear();
    rows.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));

    let text = match args.output {
        Format::Json => {
            let mut text = serde_json::to_string_pretty(&rows).map_err(|e| e.to_string())?;
            text.push('\n');
            text
        }
        Format::Table => report::table(&rows, table_width(args.width)),
    };
    print(&text);

    let blocks = rows.iter().any(Row::may_block);
    Ok(ExitCode::from(if blocks { 2 } else { 0 }))
}

/// The answer on stdout. A closed pipe (`| head`) is not an error of the input.
fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

/// Settings the policy refuses, named by their file (`{}` for the default).
fn refused(path: Option<&Path>, message: &str) -> String {
    let shown = path.map_or_else(|| "{}".to_owned(), |p| p.display().to_string());
    format!("{shown}: the policy refuses these settings: {message}")
}

/// Settings from a file: the document itself, or a policy manifest's `spec.settings`.
fn read_settings(path: &Path) -> Result<Value, String> {
    let mut documents = read_documents(path)?;
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
    Ok(settings)
}

/// `validate_settings` once, as policy-server does at start-up.
fn check_settings(host: &PolicyHost, settings: &Value, path: Option<&Path>) -> Result<(), String> {
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

fn table_width(given: Option<u16>) -> u16 {
    given
        .or_else(|| {
            let term = console::Term::stdout();
            term.is_term()
                .then(|| term.size_checked().map(|(_, cols)| cols))
                .flatten()
        })
        .unwrap_or(120)
}

/// What the assessment reads: the settings as the policy reads them, the dump as the cluster.
struct View<'a> {
    policy: &'a Settings,
    dump: &'a DumpCluster<'a>,
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
    let assessment = assess(vm, view.policy, view.dump);
    let strategy = assessment
        .eviction_strategy
        .unwrap_or(EvictionStrategy::None);
    let decision = drain_outcome(
        template_labels,
        &strategy,
        &assessment.reasons,
        external_controller,
    );
    row.eviction_strategy = Some(strategy);
    row.eviction_strategy_source = Some(assessment.source);
    row.reasons = assessment.reasons;
    row.notes = assessment.warnings;
    row.outcome = Some(decision.outcome);
    row.why = Some(decision.reason);
    row
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
        "uid": format!("drain-preview-{namespace}-{}", name.unwrap_or_default()),
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
