//! `kubectl vm-maintenance`: the drain, Harvester maintenance and KubeVirt upgrade previews as one
//! kubectl plugin, on the live cluster (read, never written) or on saved objects (`-f FILE`,
//! `-f -`); and `sync`, which brings the live cluster's VMs, VMIs and launcher Pods in line with
//! the policy (a plan unless `--apply`).
//!
//! Exit code of the previews: 0 when nothing blocks (the drain, the maintenance, the upgrade's
//! update completes) and every VM evicted comes back; 2 when a VM would block the drain, the
//! maintenance is refused or never completes, or the update never completes; 3 when nothing
//! blocks but a VM evicted without migration may stay off or down after it (docs/rules.md
//! R1-R10); 1 on bad input (a command line clap refuses, a file, a kubeconfig, an unreachable or
//! refusing API server, settings the policy refuses) and when there is nothing to judge (a node
//! or namespace without any VM, an input without VMs). Of `sync`: 0 nothing to do or every write
//! done; 2 a plan not applied, or a write that did not succeed; 1 bad input, an unreachable
//! cluster, or a write refused with 401/403 (the run stops there).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args as ClapArgs, Parser, Subcommand, ValueEnum};
use kubectl_vm_maintenance::columns::{Layout, MIN_WIDTH, Output, explanation_width};
use kubectl_vm_maintenance::dump_cluster::policy_settings;
use kubectl_vm_maintenance::input::{Source, read_sources};
use kubectl_vm_maintenance::label_sync;
use kubectl_vm_maintenance::live::{self, Target};
use kubectl_vm_maintenance::maintenance;
use kubectl_vm_maintenance::preview::{self, Options, print};
use kubectl_vm_maintenance::settings::{read_settings, refused};
use kubectl_vm_maintenance::store::Store;
use kubectl_vm_maintenance::{apply, sync};
use policy_host::PolicyHost;
use serde_json::json;

/// The module built into this binary (empty when it was built before `make policy.wasm`).
const EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/policy.wasm"));

const PROGRAM: &str = "kubectl-vm_maintenance";

const AFTER_HELP: &str = "\
Exit codes:
  0  nothing blocks, and every VM evicted without migration comes back
  2  a VM blocks the drain, the maintenance is refused or never completes, or the update never
     completes (or a VM could not be judged)
  3  nothing blocks, but a VM evicted without migration may stay off or down afterwards
  1  bad input: a command line, file, kubeconfig, API server or settings error, or nothing to
     judge (a node or namespace without any VM, an input without VMs)
Exit codes of sync:
  0  nothing to do, or every write done
  2  a plan that was not applied (no --apply), or a write that did not succeed (a conflict,
     a refusal, a skipped write)
  1  bad input, an unreachable cluster, or a write refused with 401/403 (nothing more is sent)

Examples:
  kubectl vm-maintenance drain harvester-node-2
  kubectl vm-maintenance drain -o wide -f cluster.json
  kubectl vm-maintenance maintenance harvester-node-1 --force
  kubectl vm-maintenance upgrade -o json
  kubectl vm-maintenance sync
  kubectl vm-maintenance sync --apply --restart-stale --batch-size 5 --batch-interval 2m
  kubectl get vm,vmi,pods,nodes,pvc,pv,kubevirt -A -o json | kubectl vm-maintenance drain -f -

Documentation: https://github.com/example/vm-maintenance-strategy/blob/main/docs/kubectl-vm-maintenance.md";

/// Before a maintenance window: what a node drain, Harvester's maintenance mode or a KubeVirt
/// upgrade will do with every VM, judged as KubeVirt and Harvester judge them, and what the
/// vm-maintenance-strategy policy says about each VM.
#[derive(Parser, Debug)]
#[command(
    name = "kubectl vm-maintenance",
    bin_name = "kubectl vm-maintenance",
    version,
    after_help = AFTER_HELP
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    common: Common,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// What a node drain does with every VM (with NODE: only the VMs running there).
    Drain {
        /// Only the VMs whose VMI runs on this node.
        node: Option<String>,
    },
    /// What Harvester's maintenance mode does on NODE: refused, completes, never completes.
    Maintenance {
        /// The node to put in maintenance mode (every namespace is read, as Harvester does).
        node: String,
        /// The maintenance dialog's "Force" checkbox.
        #[arg(long)]
        force: bool,
    },
    /// What KubeVirt's workload updater does with every running VMI after an upgrade, and
    /// whether the update ever completes.
    Upgrade,
    /// Bring the live cluster in line with the policy, once: the label on every VM and its
    /// template, its VMI and launcher Pods; with --restart-stale, restart the VMs whose VMI keeps
    /// a stale LiveMigrate it cannot migrate under. Prints the plan; --apply writes it.
    Sync {
        /// Send the plan: every write a JSON patch that pins what it replaces.
        #[arg(long)]
        apply: bool,
        /// `server`: send every write with dryRun=All (the API server and its admission
        /// webhooks check it, nothing changes); implies --apply.
        #[arg(long, value_name = "none|server", value_parser = ["none", "server"], default_value = "none")]
        dry_run: String,
        /// Also restart (KubeVirt's restart subresource) each running VM whose VMI carries a
        /// stale LiveMigrate and is not live-migratable; never runStrategy Halted or Once.
        #[arg(long)]
        restart_stale: bool,
        /// Restarts per batch.
        #[arg(long, value_name = "N", default_value_t = 10,
              value_parser = clap::value_parser!(u32).range(1..))]
        batch_size: u32,
        /// The wait between two restart batches (30s, 1m30s).
        #[arg(long, value_name = "DURATION", default_value = "1m")]
        batch_interval: String,
    },
}

#[derive(ClapArgs, Debug)]
struct Common {
    /// Objects to read instead of the cluster (JSON or YAML, a List or objects); `-` is
    /// standard input. Repeatable.
    #[arg(short = 'f', long = "filename", value_name = "FILE", global = true)]
    files: Vec<PathBuf>,
    /// The kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else the in-cluster config).
    #[arg(long, value_name = "FILE", global = true)]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig context.
    #[arg(long, value_name = "NAME", global = true)]
    context: Option<String>,
    /// Only the VMs of this namespace (drain only: maintenance and upgrade read every namespace).
    #[arg(
        short = 'n',
        long,
        value_name = "NAMESPACE",
        global = true,
        conflicts_with = "all_namespaces"
    )]
    namespace: Option<String>,
    /// Every namespace (the default).
    #[arg(short = 'A', long, global = true)]
    all_namespaces: bool,
    /// Output format: the table, the table with more columns, or the data.
    #[arg(short = 'o', long, value_enum, default_value_t = Format::Table, global = true)]
    output: Format,
    /// Print the table's rows alone: no header line, nothing around the table.
    #[arg(long, global = true)]
    no_headers: bool,
    /// Policy settings (JSON or YAML), or a ClusterAdmissionPolicy / AdmissionPolicy manifest.
    #[arg(long, value_name = "FILE", global = true)]
    settings: Option<PathBuf>,
    /// A controller evacuates VMIs with the `External` eviction strategy.
    #[arg(long, global = true)]
    external_controller: bool,
    /// Judge with another module: a file, or `registry://HOST/REPO:TAG` (pulled).
    #[arg(long, value_name = "FILE|registry://REF", global = true)]
    policy: Option<String>,
    /// A registry host of `--policy registry://` reached over plain HTTP. Repeatable.
    #[arg(long, value_name = "HOST", global = true)]
    insecure_registry: Vec<String>,
    /// Wrap the explanations below the tables at this many columns (at least 40; default: the
    /// terminal's width, no wrapping into a file or pipe). Tables are never wrapped.
    #[arg(long, value_name = "COLUMNS", global = true,
          value_parser = clap::value_parser!(u16).range(i64::from(MIN_WIDTH)..))]
    width: Option<u16>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Table,
    Wide,
    Json,
    Yaml,
}

fn main() -> ExitCode {
    // clap exits 2 on a usage error, the code that means "a VM blocks": a bad command line is
    // bad input, exit 1, like every other; help and version still exit 0.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { 1 } else { 0 });
        }
    };
    match run(&cli) {
        Ok(code) => ExitCode::from(code),
        Err(message) => {
            eprintln!("{PROGRAM}: {message}");
            ExitCode::from(1)
        }
    }
}

fn run(cli: &Cli) -> Result<u8, String> {
    let common = &cli.common;
    if let (Some(namespace), Command::Maintenance { .. } | Command::Upgrade) =
        (&common.namespace, &cli.command)
    {
        return Err(format!(
            "-n {namespace}: maintenance and upgrade read every namespace (a node's VMs, the \
             cluster's update); only drain and sync select a namespace"
        ));
    }
    let settings = match &common.settings {
        Some(path) => read_settings(path)?,
        None => json!({}),
    };
    let layout = Layout {
        output: match common.output {
            Format::Table => Output::Table,
            Format::Wide => Output::Wide,
            Format::Json => Output::Json,
            Format::Yaml => Output::Yaml,
        },
        headers: !common.no_headers,
        width: explanation_width(common.width),
    };
    let (text, code) = match &cli.command {
        Command::Sync {
            apply,
            dry_run,
            restart_stale,
            batch_size,
            batch_interval,
        } => {
            let request = SyncRequest {
                apply: *apply || dry_run == "server",
                dry_run: dry_run == "server",
                options: sync::Options {
                    restart_stale: *restart_stale,
                    batch_size: *batch_size as usize,
                    batch_interval: sync::parse_duration(batch_interval)
                        .map_err(|e| format!("--batch-interval {e}"))?,
                },
            };
            run_sync(common, &settings, &request, &layout)?
        }
        Command::Maintenance { node, force } => {
            let policy =
                policy_settings(&settings).map_err(|e| refused(common.settings.as_deref(), &e))?;
            let sources = sources(common, None)?;
            let request = maintenance::Request {
                node,
                force: *force,
                settings: &policy,
                external_controller: common.external_controller,
                layout,
            };
            maintenance::run(sources, &request)?
        }
        Command::Upgrade => {
            let sources = sources(common, None)?;
            kubectl_vm_maintenance::upgrade::run(sources, common.external_controller, &layout)?
        }
        Command::Drain { node } => {
            let sources = sources(common, common.namespace.as_deref())?;
            let host = module(common.policy.as_deref(), &common.insecure_registry)?;
            let options = Options {
                settings: &settings,
                settings_path: common.settings.as_deref(),
                external_controller: common.external_controller,
                layout,
                program: PROGRAM,
                node: node.as_deref(),
                namespace: common.namespace.as_deref(),
            };
            preview::drain(sources, &host, &options)?
        }
    };
    print(&text);
    Ok(code)
}

/// What `sync` was asked beyond the common flags.
struct SyncRequest {
    /// Send the writes (`--apply`, or `--dry-run=server`).
    apply: bool,
    dry_run: bool,
    options: sync::Options,
}

/// `sync`: the plan from the files or the live cluster; with `--apply` (or
/// `--dry-run=server`) its writes sent to the live cluster. A 401/403 on a write prints what was
/// done so far, then the error (exit 1).
fn run_sync(
    common: &Common,
    settings: &serde_json::Value,
    request: &SyncRequest,
    layout: &Layout,
) -> Result<(String, u8), String> {
    if request.apply && !common.files.is_empty() {
        return Err(
            "--apply and --dry-run=server write to the live cluster: leave out -f (a plan from files needs neither)"
                .to_owned(),
        );
    }
    let policy = policy_settings(settings).map_err(|e| refused(common.settings.as_deref(), &e))?;
    let sources = sources_of(common, common.namespace.as_deref(), Some(&SYNC_KINDS))?;
    let store = Store::read(sources)?;
    for note in &store.notes {
        eprintln!("{PROGRAM}: note: {note}");
    }
    let label_sync = label_sync::of(
        store.kubevirts().first(),
        &policy.label_key,
        policy.kubevirt.version.as_deref(),
    );
    let mut plan = sync::plan(&store, &policy, label_sync, &request.options)?;
    let mut failure = None;
    if request.apply && !plan.writes.is_empty() {
        let sending = apply::Sending {
            target: &target(common, common.namespace.as_deref()),
            dry_run: request.dry_run,
            interval: request.options.batch_interval,
            program: PROGRAM,
        };
        failure = apply::apply(&mut plan, &sending).err();
    } else if request.apply {
        plan.mode = if request.dry_run {
            sync::Mode::DryRun
        } else {
            sync::Mode::Apply
        };
    }
    let text = match layout.data(&plan) {
        Some(text) => text?,
        None => sync::table(&plan, layout),
    };
    if let Some(failure) = failure {
        print(&text);
        return Err(failure);
    }
    Ok((text, sync::exit_code(&plan)))
}

fn target(common: &Common, namespace: Option<&str>) -> Target {
    Target {
        kubeconfig: common.kubeconfig.clone(),
        context: common.context.clone(),
        namespace: namespace.map(str::to_owned),
    }
}

/// The kinds `sync` reads from the live cluster: not the ones the previews alone need.
const SYNC_KINDS: [&str; 4] = [
    "kubevirts",
    "virtualmachines",
    "virtualmachineinstances",
    "pods",
];

/// The files, else the live cluster (listed in `namespace` where a kind allows).
fn sources(common: &Common, namespace: Option<&str>) -> Result<Vec<Source>, String> {
    sources_of(common, namespace, None)
}

/// [`sources`], from the live cluster only the kinds named by their plurals (`None`: every kind
/// the previews read), printing the notes on them.
fn sources_of(
    common: &Common,
    namespace: Option<&str>,
    kinds: Option<&[&str]>,
) -> Result<Vec<Source>, String> {
    if !common.files.is_empty() {
        return read_sources(&common.files);
    }
    let target = target(common, namespace);
    let (sources, notes) = match kinds {
        None => live::read(&target)?,
        Some(plurals) => {
            let (sources, notes) = live::read_kinds(&target, plurals)?;
            let notes = notes
                .into_iter()
                .filter(|n| plurals.contains(&n.plural))
                .map(|n| n.text)
                .collect();
            (sources, notes)
        }
    };
    for note in &notes {
        eprintln!("{PROGRAM}: note: {note}");
    }
    Ok(sources)
}

/// The embedded module, a file, or a module pulled from a registry.
fn module(policy: Option<&str>, insecure: &[String]) -> Result<PolicyHost, String> {
    let loaded = match policy {
        None if EMBEDDED.is_empty() => {
            return Err(
                "this build embeds no policy module (build it with `make install-plugin`); use --policy FILE"
                    .to_owned(),
            );
        }
        None => PolicyHost::from_bytes(EMBEDDED),
        Some(reference) if reference.starts_with("registry://") => {
            let reference = policy_tools::oci::parse_reference(reference)
                .map_err(|e| format!("--policy {reference}: {e}"))?;
            let pulled = policy_tools::oci::Registry::new(insecure)
                .pull(&reference)
                .map_err(|e| format!("--policy: {e}"))?;
            PolicyHost::from_bytes(&pulled.module)
        }
        Some(path) => PolicyHost::load(std::path::Path::new(path)),
    };
    loaded.map_err(|e| format!("--policy: {e}"))
}
