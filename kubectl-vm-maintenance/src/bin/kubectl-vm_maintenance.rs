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
use kubectl_vm_maintenance::context::{Context, Exit, Input, Module, PROGRAM, Report, Settings};
use kubectl_vm_maintenance::input::live::Target;
use kubectl_vm_maintenance::output::columns::{MIN_WIDTH, explanation_width};
use kubectl_vm_maintenance::output::{Layout, Output, print};
use kubectl_vm_maintenance::{drain, maintenance, status, sync, upgrade};

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
    Drain(drain::Args),
    /// What Harvester's maintenance mode does on NODE: refused, completes, never completes.
    Maintenance(maintenance::Args),
    /// What KubeVirt's workload updater does with every running VMI after an upgrade, and
    /// whether the update ever completes.
    Upgrade(upgrade::Args),
    /// Bring the live cluster in line with the policy, once: the label on every VM and its
    /// template, its VMI and launcher Pods; with --restart-stale, restart the VMs whose VMI keeps
    /// a stale LiveMigrate it cannot migrate under. Prints the plan; --apply writes it.
    Sync(sync::Args),
    /// Why a node being drained still holds VMs (live, or from -f files): every VM still on
    /// NODE with one cause, its evidence and what to do, and the node's findings (blocking
    /// PodDisruptionBudgets). Without NODE: every node being drained.
    Status(status::Args),
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
    let report = context(&cli).and_then(|context| match &cli.command {
        Command::Drain(args) => drain::run(&context, args),
        Command::Maintenance(args) => maintenance::run(&context, args),
        Command::Upgrade(args) => upgrade::run(&context, args),
        Command::Sync(args) => sync::run(&context, args),
        Command::Status(args) => status::run(&context, args),
    });
    match report {
        Ok(Report { text, exit, error }) => {
            print(&text);
            match error {
                Some(message) => fail(&message),
                None => exit.into(),
            }
        }
        Err(message) => fail(&message),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("{PROGRAM}: {message}");
    Exit::BadInput.into()
}

/// The invocation resolved once: `-n` where the command takes it, the settings read, the
/// layout, the input and the module.
fn context(cli: &Cli) -> Result<Context, String> {
    let common = &cli.common;
    if let (Some(namespace), Command::Maintenance(_) | Command::Upgrade(_)) =
        (&common.namespace, &cli.command)
    {
        return Err(format!(
            "-n {namespace}: maintenance and upgrade read every namespace (a node's VMs, the \
             cluster's update); only drain and sync select a namespace"
        ));
    }
    if let (Some(namespace), Command::Status(_)) = (&common.namespace, &cli.command) {
        return Err(format!(
            "-n {namespace}: status reads every namespace (what holds a node); only drain and \
             sync select a namespace"
        ));
    }
    Ok(Context {
        settings: Settings::read(common.settings.as_deref())?,
        layout: Layout {
            output: match common.output {
                Format::Table => Output::Table,
                Format::Wide => Output::Wide,
                Format::Json => Output::Json,
                Format::Yaml => Output::Yaml,
            },
            headers: !common.no_headers,
            width: explanation_width(common.width),
        },
        input: Input {
            files: common.files.clone(),
            target: Target {
                kubeconfig: common.kubeconfig.clone(),
                context: common.context.clone(),
                namespace: common.namespace.clone(),
                node: None,
            },
        },
        module: Module {
            policy: common.policy.clone(),
            insecure_registries: common.insecure_registry.clone(),
        },
        external_controller: common.external_controller,
    })
}
