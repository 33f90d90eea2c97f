//! The command line as an operator meets it: usage errors exit 1 (not clap's 2, which means "a
//! VM blocks"), `--help` names the exit codes; and the krew manifest's shape and version.

mod harness;

use harness::{maintenance_dump, run_piped, stderr, workspace};

use serde_json::Value;

#[test]
fn krew_manifest() {
    let path = workspace().join("plugins/vm-maintenance.yaml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let manifest: Value = serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        manifest["apiVersion"],
        "krew.googlecontainertools.github.com/v1alpha2"
    );
    assert_eq!(manifest["kind"], "Plugin");
    assert_eq!(manifest["metadata"]["name"], "vm-maintenance");
    let version = format!("v{}", env!("CARGO_PKG_VERSION"));
    assert_eq!(manifest["spec"]["version"], version.as_str());
    let platforms = manifest["spec"]["platforms"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(!platforms.is_empty());
    for platform in platforms {
        assert_eq!(platform["bin"], "kubectl-vm_maintenance", "{platform}");
        let uri = platform["uri"].as_str().unwrap_or_default();
        assert!(
            uri.starts_with("https://") && uri.contains(&version),
            "{uri}"
        );
        let sha = platform["sha256"].as_str().unwrap_or_default();
        let hex = sha.len() == 64 && sha.chars().all(|c| c.is_ascii_hexdigit());
        let placeholder = sha.chars().all(|c| c == '0');
        assert!(hex && !placeholder, "{sha}: make plugin-archive writes it");
        assert!(
            platform["selector"]["matchLabels"]["os"].is_string(),
            "{platform}"
        );
    }
    for field in ["shortDescription", "description", "homepage"] {
        assert!(manifest["spec"][field].is_string(), "{field}");
    }
}

/// A bad command line is bad input (exit 1), never the exit code of a VM that blocks (2) or may
/// stay off (3); help and version exit 0. The help reads as kubectl users type the command, and
/// lists the exit codes and examples.
#[test]
fn usage_errors_exit_1() {
    let file = maintenance_dump();
    let file = file.to_string_lossy();
    for args in [
        vec!["drain", "-o", "xml", "-f", &file],
        vec!["drain", "--no-such-flag", "-f", &file],
        vec!["drain", "--width", "39", "-f", &file],
        vec!["drain", "--width", "0", "-f", &file],
        vec![],
        vec!["maintenance"],
        vec!["upgrade", "-n", "prod", "-f", &file],
    ] {
        let output = run_piped(&args, None);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(!stderr(&output).is_empty(), "{args:?}: {}", stderr(&output));
        assert!(output.stdout.is_empty(), "{args:?}");
    }
    let output = run_piped(&["drain", "--no-such-flag"], None);
    assert!(
        stderr(&output).contains("Usage: kubectl vm-maintenance drain [OPTIONS] [NODE]"),
        "{}",
        stderr(&output)
    );
    for args in [["--help"], ["--version"]] {
        let output = run_piped(&args, None);
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(!output.stdout.is_empty(), "{args:?}");
    }
    let help = String::from_utf8_lossy(&run_piped(&["--help"], None).stdout).into_owned();
    for want in [
        "Usage: kubectl vm-maintenance [OPTIONS] <COMMAND>",
        "Exit codes:\n  0  nothing blocks",
        "\n  2  a VM blocks the drain",
        "\n  3  nothing blocks, but a VM evicted without migration may stay off",
        "\n  1  bad input",
        "Examples:\n  kubectl vm-maintenance drain harvester-node-2\n",
        "[possible values: table, wide, json, yaml]",
        "--no-headers",
    ] {
        assert!(help.contains(want), "{want}: {help}");
    }
    assert!(!help.contains("kubectl-vm_maintenance"), "{help}");
    let help =
        String::from_utf8_lossy(&run_piped(&["maintenance", "--help"], None).stdout).into_owned();
    assert!(
        help.contains("Usage: kubectl vm-maintenance maintenance [OPTIONS] <NODE>")
            && help.contains("  <NODE>  The node to put in maintenance mode"),
        "{help}"
    );
}
