//! `kubectl vm-maintenance upgrade`, end to end: the sample's preview and an input without a
//! running VMI (exit 1).

mod harness;

use harness::{maintenance_dump, parsed, run_piped, stderr, workspace};

use serde_json::json;

#[test]
fn the_upgrade_preview_of_the_sample() {
    let output = run_piped(
        &[
            "upgrade",
            "-o",
            "json",
            "-f",
            &maintenance_dump().to_string_lossy(),
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let got = parsed(&output);
    assert_eq!(got["outcome"], "NeverCompletes");
    let outcome = |name: &str| {
        got["vmis"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|v| v["name"] == name)
            .map(|v| v["outcome"].clone())
    };
    assert_eq!(outcome("nfv-router-01"), Some(json!("Blocks")), "{got}");
    // runStrategy RerunOnFailure: off after a clean guest shutdown (docs/rules.md R2).
    assert_eq!(outcome("ml-train-01"), Some(json!("MayStayOff")), "{got}");
    assert_eq!(outcome("web-01"), Some(json!("Migrate")), "{got}");
    assert_eq!(got["migrations"], json!({"count": 9, "parallel": 5}));
    assert_eq!(
        got["evictions"],
        json!({"count": 3, "batchSize": 10, "intervalSeconds": 60, "batches": 1, "minimumSeconds": 0})
    );
    let table = run_piped(
        &[
            "upgrade",
            "-f",
            &maintenance_dump().to_string_lossy(),
            "--width",
            "160",
        ],
        None,
    );
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains(
            "Outcome: NeverCompletes: outdatedVirtualMachineInstanceWorkloads never reaches 0."
        ),
        "{text}"
    );
    assert!(text.contains("Migrations: 9 (at most 5 at a time). Evictions: 3 in 1 batches of 10 every 60 s (at least 0 s)."), "{text}");
}

/// The upgrade preview needs running VMIs: without any it says so and exits 1.
#[test]
fn an_upgrade_without_running_vmis_exits_1() {
    let sample = workspace().join("examples/cluster-dump.json");
    let output = run_piped(&["upgrade", "-f", &sample.to_string_lossy()], None);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stderr(&output),
        "kubectl-vm_maintenance: no VirtualMachineInstance in the input: nothing runs, nothing to update (a dump needs `kubectl get vmi -A -o json`)\n"
    );
    assert!(output.stdout.is_empty());
}
