//! The invocation, resolved once before any command runs (as cargo's `GlobalContext` or
//! ripgrep's `HiArgs`): how to print ([`Layout`]), the settings as written, as the policy reads
//! them and where they came from ([`Settings`]), where the objects come from ([`Input`]), the
//! module to judge with ([`Module`]), and the one sink for notes, on stderr behind the program's
//! name. Each command is `run(&Context, &Args) -> Result<Report, String>`; an `Err` is bad
//! input, exit 1.

use std::path::{Path, PathBuf};

use policy_host::PolicyHost;
use serde_json::{Value, json};

use crate::input::cluster::policy_settings;
use crate::input::live::{self, Target};
use crate::input::settings::{read_settings, refused};
use crate::input::{Source, read_sources};
use crate::output::Layout;

/// The name in front of every note and error on stderr.
pub const PROGRAM: &str = "kubectl-vm_maintenance";

/// The module built into the plugin (empty when it was built before `make policy.wasm`).
const EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/policy.wasm"));

/// Everything a command is given besides its own arguments.
pub struct Context {
    pub layout: Layout,
    pub settings: Settings,
    pub input: Input,
    pub module: Module,
    /// `--external-controller`: a controller evacuates VMIs with the `External` strategy.
    pub external_controller: bool,
}

/// The policy settings of `--settings` (`{}` without it).
pub struct Settings {
    /// As written (what the module is given).
    pub raw: Value,
    /// Where they were read from, to name them in errors.
    pub path: Option<PathBuf>,
    /// As the policy reads them, with the cluster lookups on (the input is the cluster), or
    /// why the policy refuses them.
    typed: Result<vm_maintenance_strategy::settings::Settings, String>,
}

/// Where the objects come from: the `-f` files, else the live cluster.
pub struct Input {
    pub files: Vec<PathBuf>,
    /// The kubeconfig, its context and `-n` (`None`: every namespace).
    pub target: Target,
}

/// `--policy` (a file or `registry://REF`; `None`: the embedded module) and the registries
/// reached over plain HTTP.
pub struct Module {
    pub policy: Option<String>,
    pub insecure_registries: Vec<String>,
}

/// A command's answer: the text for stdout and the exit code; `error`, when set, is printed
/// after the text and the exit code is 1 (a `sync` stopped by a refused write).
pub struct Report {
    pub text: String,
    pub exit: Exit,
    pub error: Option<String>,
}

/// The exit codes (the plugin's `--help` lists them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// 0: nothing blocks and every VM evicted without migration comes back; of `sync`: nothing
    /// to do, or every write done.
    Clear,
    /// 1: bad input (a command line, file, kubeconfig, API server or settings error), nothing
    /// to judge; of `sync` also a write refused with 401/403.
    BadInput,
    /// 2: a VM blocks the drain, the maintenance is refused or never completes, the update
    /// never completes; of `sync`: a plan not applied, or a write that did not succeed.
    Blocked,
    /// 3: nothing blocks, but a VM evicted without migration may stay off or down afterwards.
    MayStayDown,
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> std::process::ExitCode {
        std::process::ExitCode::from(match exit {
            Exit::Clear => 0,
            Exit::BadInput => 1,
            Exit::Blocked => 2,
            Exit::MayStayDown => 3,
        })
    }
}

impl Report {
    pub fn new(text: String, exit: Exit) -> Report {
        Report {
            text,
            exit,
            error: None,
        }
    }
}

impl Settings {
    /// The settings file (`None`: `{}`), read and checked for its types at its own lines.
    pub fn read(path: Option<&Path>) -> Result<Settings, String> {
        let raw = match path {
            Some(path) => read_settings(path)?,
            None => json!({}),
        };
        let typed = policy_settings(&raw).map_err(|e| refused(path, &e));
        Ok(Settings {
            raw,
            path: path.map(Path::to_path_buf),
            typed,
        })
    }

    /// As the policy reads them, or why it refuses them (bad input).
    pub fn typed(&self) -> Result<&vm_maintenance_strategy::settings::Settings, String> {
        self.typed.as_ref().map_err(Clone::clone)
    }
}

impl Context {
    /// A note on stderr: something the input lacks or holds oddly, never an error.
    pub fn note(&self, text: impl std::fmt::Display) {
        eprintln!("{PROGRAM}: note: {text}");
    }

    /// The files, else the live cluster in `namespace` where a kind allows (`None`: every
    /// namespace), every kind the previews read; the notes on what could not be listed.
    pub fn sources(&self, namespace: Option<&str>) -> Result<Vec<Source>, String> {
        self.sources_of(namespace, None)
    }

    /// [`Context::sources`], of the live cluster only the kinds named by their plurals.
    pub fn sources_of(
        &self,
        namespace: Option<&str>,
        kinds: Option<&[&str]>,
    ) -> Result<Vec<Source>, String> {
        if !self.input.files.is_empty() {
            return read_sources(&self.input.files);
        }
        let target = self.target(namespace);
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
            self.note(note);
        }
        Ok(sources)
    }

    /// The live cluster, listed or written in `namespace` (`None`: every namespace).
    pub fn target(&self, namespace: Option<&str>) -> Target {
        Target {
            namespace: namespace.map(str::to_owned),
            ..self.input.target.clone()
        }
    }

    /// The module to judge with: the embedded one, a file, or one pulled from a registry.
    pub fn policy_host(&self) -> Result<PolicyHost, String> {
        let loaded = match self.module.policy.as_deref() {
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
                let pulled = policy_tools::oci::Registry::new(&self.module.insecure_registries)
                    .pull(&reference)
                    .map_err(|e| format!("--policy: {e}"))?;
                PolicyHost::from_bytes(&pulled.module)
            }
            Some(path) => PolicyHost::load(Path::new(path)),
        };
        loaded.map_err(|e| format!("--policy: {e}"))
    }
}
