//! drain-preview: before a maintenance window, what a node drain will do with every VM of a
//! cluster dump (`kubectl get vm,kubevirt,pvc -A -o json`), and what the policy says about each
//! VM today, judged on the real `policy.wasm` as Kubewarden's audit scanner would.
//!
//! Exit code: 0 when no VM blocks a drain and every VM evicted comes back, 2 when some VM would
//! block one (or could not be judged), 3 when none blocks but some VM evicted without migration
//! may stay off or down, 1 on bad input (a file that cannot be read or parsed, settings the policy refuses).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use kubectl_vm_maintenance::dump_cluster::policy_settings;
use kubectl_vm_maintenance::input::read_sources;
use kubectl_vm_maintenance::maintenance;
use kubectl_vm_maintenance::preview::{self, Options, print, read_settings, refused, table_width};
use policy_host::{PolicyHost, default_module_path};
use serde_json::json;

/// What a node drain will do with every VM of a cluster dump, and what the policy says today.
///
/// Input: the output of `kubectl get vm,kubevirt,pvc -A -o json` (or `-o yaml`), one or more
/// files; other kinds are ignored. Exit code: 0 when no VM blocks a drain, 2 when some would
/// (or could not be judged), 3 when none blocks but some VM may stay off or down, 1 on bad input.
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

fn main() -> ExitCode {
    // clap's usage errors exit 1 (bad input), not 2 (a VM blocks); help and version exit 0.
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(error) => {
            let _ = error.print();
            return ExitCode::from(if error.use_stderr() { 1 } else { 0 });
        }
    };
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
    let width = table_width(args.width);
    let json = args.output == Format::Json;
    let (text, code) = if let Some(node) = &args.maintenance {
        let policy =
            policy_settings(&settings).map_err(|e| refused(args.settings.as_deref(), &e))?;
        let sources = read_sources(&args.files)?;
        let request = maintenance::Request {
            node,
            force: args.force,
            settings: &policy,
            external_controller: args.external_controller,
            json,
            width,
        };
        maintenance::run(&sources, &request)?
    } else {
        let sources = read_sources(&args.files)?;
        let module = args.policy.clone().unwrap_or_else(default_module_path);
        let host = PolicyHost::load(&module).map_err(|e| e.to_string())?;
        let options = Options {
            settings: &settings,
            settings_path: args.settings.as_deref(),
            external_controller: args.external_controller,
            json,
            width,
            program: "drain-preview",
            node: None,
            namespace: None,
        };
        preview::drain(&sources, &host, &options)?
    };
    print(&text);
    Ok(ExitCode::from(code))
}
