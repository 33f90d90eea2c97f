//! What every test of the plugin shares: the binary, the workspace, scratch folders, the
//! output read back; the loopback API server (`apiserver.rs`) and the peak-memory probe
//! (`peak.rs`).
#![allow(dead_code, reason = "each test binary uses part of the harness")]

pub mod apiserver;
pub mod peak;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

pub const BIN: &str = env!("CARGO_BIN_EXE_kubectl-vm_maintenance");

/// The workspace root (examples/, fixtures/).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// A scratch folder of this test process: `vm-maintenance-TEST-PID-NAME` in the temp folder.
pub fn scratch_of(test: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "vm-maintenance-{test}-{}-{name}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Standard output as JSON, else a panic showing both streams.
pub fn parsed(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(output), stderr(output)))
}

/// `examples/cluster-maintenance-dump.json`: the sample with nodes, VMIs, Pods and Longhorn.
pub fn maintenance_dump() -> PathBuf {
    workspace().join("examples/cluster-maintenance-dump.json")
}

/// Runs the plugin from `/` (it must work from any folder) without a kubeconfig, `stdin` piped
/// in.
pub fn run_piped(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir("/")
        .env_remove("KUBECONFIG")
        .env("HOME", scratch_of("home", "home"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{BIN}: {e}"));
    if let Some(mut pipe) = child.stdin.take() {
        let _ = pipe.write_all(stdin.unwrap_or_default());
    }
    child.wait_with_output().unwrap_or_else(|e| panic!("{e}"))
}
