//! `kubectl vm-maintenance drain -f FILE` end to end, as the binary with the built `policy.wasm`
//! embedded (`make policy.wasm`): the sample dump (every row, and the table's text), malformed
//! input, an empty List, selections that match no VM, a VM that cannot be judged, settings (and
//! where their errors are), and a generated dump of 5,000 VMs (time and peak memory on stderr).

mod harness;

use harness::{BIN, peak, scratch_of, stderr, stdout, workspace};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

const PREFIX: &str = "kubectl-vm_maintenance: ";

fn sample() -> PathBuf {
    workspace().join("examples/cluster-dump.json")
}

/// A scratch directory of this test process.
fn scratch(name: &str) -> PathBuf {
    scratch_of("cli", name)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("KUBECONFIG")
        .current_dir(workspace())
        .output()
        .unwrap_or_else(|e| panic!("{BIN}: {e}"))
}

fn json_rows(output: &Output) -> Vec<Value> {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(output), stderr(output)))
}

/// The columns of a row that the table shows, in one line per VM.
fn brief(row: &Value) -> Value {
    let verdict = &row["verdict"];
    json!([
        format!(
            "{}/{}",
            row["namespace"].as_str().unwrap_or("?"),
            row["name"].as_str().unwrap_or("?")
        ),
        row["label"],
        row["templateLabel"],
        row["evictionStrategy"],
        row["evictionStrategySource"],
        row["reasons"],
        row["outcome"],
        verdict["result"],
        verdict["message"],
        verdict["warnings"].as_array().map_or(0, Vec::len),
    ])
}

const K: &str = "harvesterhci.io/maintain-mode-strategy";
const INVALID: &str = "metadata.labels[harvesterhci.io/maintain-mode-strategy]: invalid maintenance mode strategy: migrate (valid: Migrate, ShutdownAndRestartAfterEnable, ShutdownAndRestartAfterDisable, Shutdown)";

#[test]
fn sample_dump_every_row() {
    let output = run(&[
        "drain",
        "-f",
        sample().to_str().unwrap_or_default(),
        "-o",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
    let rows = json_rows(&output);
    let got: Vec<Value> = rows.iter().map(brief).collect();
    #[rustfmt::skip]
    let want = vec![
        json!(["ai/gpu-infer-02", null, null, "LiveMigrateIfPossible", "vm", ["HostDeviceNotLiveMigratable: GPU gpu1 without gate VGPULiveMigration"], "Restart", "mutated", null, 0]),
        json!(["ai/ml-train-01", "ShutdownAndRestartAfterDisable", "ShutdownAndRestartAfterDisable", "LiveMigrateIfPossible", "vm", ["HostDeviceNotLiveMigratable: host device harvester-node-2-000081000", "HostDeviceNotLiveMigratable: GPU vgpu-0 without gate VGPULiveMigration"], "ShutDown", "allowed", null, 0]),
        json!(["batch/etl-01", "Migrate", "Migrate", "None", "vm", [], "Restart", "allowed", null, 0]),
        json!(["default/legacy-01", null, null, "LiveMigrate", "cluster", [], "Migrate", "mutated", null, 0]),
        json!(["default/web-01", "Migrate", "Migrate", "LiveMigrateIfPossible", "vm", [], "Migrate", "allowed", null, 0]),
        json!(["desktops/vdi-07", "migrate", "Shutdown", "LiveMigrateIfPossibe", "vm", ["HostDeviceNotLiveMigratable: GPU gpu1 without gate VGPULiveMigration"], "ShutDown", "rejected", INVALID, 1]),
        json!(["dev/kiosk-01", "Shutdown", "Shutdown", "LiveMigrate", "cluster", ["InterfaceNotLiveMigratable: bridge on pod network \"default\""], "Blocks", "allowed", null, 1]),
        json!(["dev/sandbox-01", "Shutdown", null, "LiveMigrate", "cluster", [], "Migrate", "mutated", null, 0]),
        json!(["net/nfv-router-01", "Migrate", "Migrate", "LiveMigrate", "cluster", ["HostDeviceNotLiveMigratable: host device sriov-vf-0"], "Blocks", "allowed", null, 1]),
        json!(["ops/backup-proxy-01", "Migrate", "Migrate", "External", "vm", [], "Blocks", "allowed", null, 0]),
        json!(["prod/app-01", "Migrate", "Migrate", "LiveMigrate", "cluster", [], "Migrate", "allowed", null, 0]),
        json!(["prod/cache-01", "Migrate", "Migrate", "LiveMigrateIfPossible", "vm", ["DisksNotLiveMigratable: volume cache-01-root (ReadWriteOnce)"], "Restart", "allowed", null, 0]),
        json!(["prod/db-01", "Shutdown", "Shutdown", "LiveMigrate", "vm", ["DisksNotLiveMigratable: volume db-01-data (ReadWriteOnce)"], "ShutDown", "allowed", null, 2]),
        json!(["prod/db-02", "Migrate", "Migrate", "LiveMigrate", "vm", ["DisksNotLiveMigratable: volume db-02-data (ReadWriteOnce)"], "Blocks", "allowed", null, 1]),
    ];
    for (got, want) in got.iter().zip(&want) {
        assert_eq!(got, want);
    }
    assert_eq!(got.len(), want.len());

    // The outcome in words, the patch of a mutation, and nothing left unchecked.
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(
        row("kiosk-01")["why"],
        "LiveMigrate, cannot live-migrate (InterfaceNotLiveMigratable: bridge on pod network \"default\"): every eviction is denied (429), the drain waits forever (label Shutdown without harvesterhci.io/vmName: the drain filter evicts the Pod)"
    );
    assert_eq!(
        row("db-01")["why"],
        "label Shutdown: Harvester stops the VM before the drain and does not start it again"
    );
    assert_eq!(
        row("sandbox-01")["verdict"]["patch"],
        json!([{"op": "add", "path": "/spec/template/metadata/labels/harvesterhci.io~1maintain-mode-strategy", "value": "Shutdown"}])
    );
    assert_eq!(row("vdi-07")["verdict"]["code"], 422);
    // What depends on the node the VM lands on is not checked: the policy's own warning.
    for r in &rows {
        let notes = if r["name"] == "db-01" {
            json!(["CPUModeLiveMigratable: host-model CPU, if the node has no host model"])
        } else {
            json!([])
        };
        assert_eq!(
            (&r["notes"], &r["error"]),
            (&notes, &Value::Null),
            "{}",
            r["name"]
        );
    }
}

/// The table, byte for byte: `tests/sample-table.txt` (docs/kubectl-vm-maintenance.md links
/// it). `VM_MAINTENANCE_BLESS=1` rewrites the file from the plugin's output. A line per VM, no
/// border, columns three spaces apart; the table is the same at any width (only the explanations
/// below it wrap, never inside a word), and a width under 40 is refused.
#[test]
fn sample_dump_table() {
    let sample = sample();
    let sample = sample.to_str().unwrap_or_default();
    let output = run(&["drain", "-f", sample, "--width", "100"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sample-table.txt");
    if std::env::var_os("VM_MAINTENANCE_BLESS").is_some() {
        write(
            golden.parent().unwrap_or(Path::new(".")),
            "sample-table.txt",
            &stdout(&output),
        );
    }
    let want = std::fs::read_to_string(&golden).unwrap_or_default();
    assert_eq!(stdout(&output), want, "{}", golden.display());
    assert!(want.contains("\nSummary: 14 VMs: 4 Migrate, 3 ShutDown, 3 Restart, 0 MayStayOff, 0 StaysOff, 0 DownUntilNodeReturns,\n  4 Blocks\n"), "{want}");
    let table: Vec<&str> = want.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(table.len(), 15, "a header and a line per VM: {want}");
    assert_eq!(
        table[0],
        "NAMESPACE   NAME              NODE     LABEL                            EVICTION                DRAIN      STALE    POLICY"
    );
    assert!(!want.contains("+--") && !want.contains('|'), "{want}");
    // Below the table, lines wrap at 100 columns between words.
    for line in want.lines().skip(table.len()) {
        let long_word = line.split(' ').any(|w| w.chars().count() > 90);
        assert!(line.chars().count() <= 100 || long_word, "{line}");
    }
    // At any width the table is the same; without --width (not a terminal) nothing wraps.
    for width in [None, Some("80"), Some("120"), Some("400")] {
        let mut args = vec!["drain", "-f", sample];
        if let Some(width) = width {
            args.extend(["--width", width]);
        }
        let text = stdout(&run(&args));
        let lines: Vec<&str> = text.lines().take(table.len() + 1).collect();
        assert_eq!(lines[..table.len()], table[..], "--width {width:?}");
        assert_eq!(lines[table.len()], "", "--width {width:?}");
        if width.is_none() {
            assert!(
                text.contains("\n  dev/kiosk-01: LiveMigrate, cannot live-migrate (InterfaceNotLiveMigratable: bridge on pod network \"default\"): every eviction is denied (429), the drain waits forever (label Shutdown without harvesterhci.io/vmName: the drain filter evicts the Pod)\n"),
                "{text}"
            );
        }
    }
    // -o wide: the strategy's source, the runStrategy, the label on the VM, VMI and Pod, the
    // VMI's strategy and the reasons too; --no-headers: the rows alone.
    let wide = stdout(&run(&["drain", "-f", sample, "-o", "wide"]));
    let header = wide.lines().next().unwrap_or_default();
    let words: Vec<&str> = header.split_whitespace().collect();
    assert_eq!(
        words,
        [
            "NAMESPACE",
            "NAME",
            "NODE",
            "LABEL",
            "EVICTION",
            "SOURCE",
            "RUNSTRATEGY",
            "DRAIN",
            "STALE",
            "POLICY",
            "LABEL",
            "VM/VMI/POD",
            "VMI",
            "EVICTION",
            "REASONS"
        ]
    );
    assert!(
        wide.lines().any(|l| l.starts_with("prod        db-02 ")
            && l.ends_with("   DisksNotLiveMigratable: volume db-02-data (ReadWriteOnce)")),
        "{wide}"
    );
    let bare = stdout(&run(&["drain", "-f", sample, "--no-headers"]));
    assert_eq!(bare.lines().count(), 14, "{bare}");
    assert!(bare.starts_with("ai     "), "{bare}");
    for width in ["39", "0", "5"] {
        let output = run(&["drain", "-f", sample, "--width", width]);
        assert_eq!(output.status.code(), Some(1), "--width {width}");
        assert!(
            stderr(&output).contains(&format!(
                "invalid value '{width}' for '--width <COLUMNS>': {width} is not in 40..=65535"
            )),
            "{}",
            stderr(&output)
        );
        assert_eq!(stdout(&output), "");
    }
}

/// `-o yaml` is the data of `-o json`.
#[test]
fn yaml_is_the_json_data() {
    let sample = sample();
    let sample = sample.to_str().unwrap_or_default();
    let json = json_rows(&run(&["drain", "-f", sample, "-o", "json"]));
    let output = run(&["drain", "-f", sample, "-o", "yaml"]);
    assert_eq!(output.status.code(), Some(2));
    let yaml: Vec<Value> = serde_yaml::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", stdout(&output)));
    assert_eq!(yaml, json);
}

#[test]
fn external_controller_and_settings() {
    let sample = sample();
    let sample = sample.to_str().unwrap_or_default();
    let output = run(&["drain", "-f", sample, "-o", "json", "--external-controller"]);
    let rows = json_rows(&output);
    let proxy = rows.iter().find(|r| r["name"] == "backup-proxy-01");
    assert_eq!(proxy.map(|r| &r["outcome"]), Some(&json!("Migrate")));
    assert_eq!(output.status.code(), Some(2), "the other VMs still block");

    // A policy manifest's settings: the cluster default comes from them, the verdicts follow.
    let output = run(&[
        "drain",
        "-f",
        sample,
        "-o",
        "json",
        "--settings",
        "examples/strict-cluster.yaml",
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let rows = json_rows(&output);
    let of = |name: &str| rows.iter().find(|r| r["name"] == name).map(brief);
    assert_eq!(
        of("legacy-01"),
        Some(json!([
            "default/legacy-01",
            null,
            null,
            "LiveMigrate",
            "settings",
            [],
            "Migrate",
            "mutated",
            null,
            0
        ]))
    );
    assert_eq!(
        of("backup-proxy-01"),
        Some(json!([
            "ops/backup-proxy-01",
            "Migrate",
            "Migrate",
            "External",
            "vm",
            [],
            "Blocks",
            "rejected",
            "spec.template.spec.evictionStrategy: unsupported value \"External\" (valid: LiveMigrateIfPossible, LiveMigrate, None)",
            0
        ]))
    );

    // Settings the policy refuses, or that are not an object: bad input.
    let dir = scratch("settings");
    let cases = [
        (
            "bad-key.json",
            "{\"labelKey\": \"Not A Key!\"}",
            "the policy refuses these settings: labelKey: \"Not A Key!\" is not a valid label key ([prefix/]name, name at most 63 characters)",
        ),
        (
            "list.yaml",
            "- a\n",
            "settings must be an object (or a policy manifest with spec.settings)",
        ),
    ];
    for (name, text, message) in cases {
        let path = write(&dir, name, text);
        assert_eq!(
            refused_settings(sample, &path),
            format!("{PREFIX}{}: {message}\n", path.display()),
            "{name}"
        );
    }
}

#[test]
fn malformed_files_are_bad_input() {
    let dir = scratch("malformed");
    let bad_json = "{\"kind\": \"List\", \"items\": [\n  {\"kind\": \"VirtualMachine\",}\n]}\n";
    let bad_yaml = "apiVersion: v1\nitems:\n  - kind: VirtualMachine\n   metadata: {}\n";
    let cases = [
        ("bad.json", Some(bad_json), "2:29: trailing comma"),
        (
            "truncated.json",
            Some("{\"kind\": \"List\", \"items\": [\n"),
            "2:0: EOF while parsing a list",
        ),
        (
            "bad.yaml",
            Some(bad_yaml),
            "4:4: did not find expected '-' indicator, while parsing a block collection at line 3 column 3",
        ),
        (
            "tabs.yaml",
            Some("items:\n\t- a\n"),
            "2:1: found character that cannot start any token, while scanning for the next token",
        ),
        (
            "empty.json",
            Some(""),
            " no object in the file (it is empty)",
        ),
        (
            "scalar.yaml",
            Some("just text\n"),
            " document 1: expected a Kubernetes object or List, got a string",
        ),
        (
            "missing.json",
            None,
            " No such file or directory (os error 2)",
        ),
    ];
    let good = sample();
    for (name, text, message) in cases {
        let path = match text {
            Some(text) => write(&dir, name, text),
            None => dir.join(name),
        };
        // A bad file among good ones still fails the run, whatever its position.
        let output = run(&[
            "drain",
            "-f",
            good.to_str().unwrap_or_default(),
            "-f",
            path.to_str().unwrap_or_default(),
        ]);
        assert_eq!(output.status.code(), Some(1), "{name}: {}", stderr(&output));
        assert_eq!(
            stderr(&output),
            format!("{PREFIX}{}:{message}\n", path.display()),
            "{name}"
        );
        assert_eq!(stdout(&output), "", "{name}");
    }
}

/// Nothing to judge is never "all clear": an empty List, objects without `kind`/`apiVersion`
/// (each one a note), a node that is not in the input or runs no VM, a namespace without a VM;
/// each says what was not found and what there is, and exits 1, whatever the output format.
#[test]
fn a_selection_without_vms_exits_1() {
    let dir = scratch("empty");
    let empty = write(
        &dir,
        "empty.json",
        "{\"apiVersion\": \"v1\", \"items\": [], \"kind\": \"List\", \"metadata\": {\"resourceVersion\": \"\"}}\n",
    );
    let untyped = write(
        &dir,
        "untyped.yaml",
        "metadata:\n  name: web\n  namespace: team\nspec:\n  template:\n    spec: {}\n",
    );
    let maintenance = workspace().join("examples/cluster-maintenance-dump.json");
    let sample = sample();
    let (empty, untyped, maintenance, sample) = (
        empty.to_str().unwrap_or_default(),
        untyped.to_str().unwrap_or_default(),
        maintenance.to_str().unwrap_or_default(),
        sample.to_str().unwrap_or_default(),
    );
    let cases: [(Vec<&str>, String); 6] = [
        (vec!["-f", empty], "no VirtualMachine in the input\n".to_owned()),
        (
            vec!["-f", untyped],
            format!(
                "note: {untyped}: item 0 (team/web) has no kind or apiVersion, ignored\n{PREFIX}no VirtualMachine in the input; 1 objects without kind or apiVersion were ignored (a VM needs `apiVersion: kubevirt.io/v1` and `kind: VirtualMachine`)\n"
            ),
        ),
        (
            vec!["no-such-node", "-f", maintenance],
            "node no-such-node is not in the input (nodes read: harvester-node-1, harvester-node-2, harvester-node-3, harvester-node-4)\n".to_owned(),
        ),
        (
            vec!["no-such-node", "-f", sample],
            "node no-such-node is not in the input (nodes read: none; add `kubectl get nodes -o json`)\n".to_owned(),
        ),
        (
            vec!["harvester-node-4", "-n", "prod", "-f", maintenance],
            "no VirtualMachine of namespace prod runs on node harvester-node-4 (nodes that run one: harvester-node-1, harvester-node-2, harvester-node-3)\n".to_owned(),
        ),
        (
            vec!["-n", "nope", "-f", sample],
            "no VirtualMachine in namespace nope (namespaces with one: ai, batch, default, desktops, dev, net, ops, prod)\n".to_owned(),
        ),
    ];
    for (args, message) in cases {
        for output in [None, Some("json"), Some("yaml")] {
            let mut all = vec!["drain"];
            all.extend(&args);
            if let Some(output) = output {
                all.extend(["-o", output]);
            }
            let got = run(&all);
            assert_eq!(got.status.code(), Some(1), "{all:?}: {}", stderr(&got));
            assert_eq!(stderr(&got), format!("{PREFIX}{message}"), "{all:?}");
            assert_eq!(stdout(&got), "", "{all:?}");
        }
    }
    // The nodes a VM runs on, and a namespace with VMs, still select them.
    let got = run(&["drain", "harvester-node-4", "-f", maintenance, "-o", "json"]);
    assert_eq!(got.status.code(), Some(2), "{}", stderr(&got));
    assert_eq!(json_rows(&got).len(), 1);
    let got = run(&["drain", "-n", "prod", "-f", sample, "-o", "json"]);
    assert_eq!(json_rows(&got).len(), 4);
}

/// A settings file's errors are at the file's own line and column, YAML or JSON, settings or a
/// policy manifest; the policy's consistency checks still apply.
#[test]
fn settings_errors_name_the_files_position() {
    let dir = scratch("positions");
    let sample = sample();
    let sample = sample.to_str().unwrap_or_default();
    let cases = [
        (
            "settings.yaml",
            "labelKey: harvesterhci.io/maintain-mode-strategy\nmutate: true\nevictionStrategy:\n  nonMigratable: sometimes\n",
            "evictionStrategy.nonMigratable: unknown variant `sometimes`, expected one of `ignore`, `warn`, `reject`, `fix` at line 4 column 18",
        ),
        (
            "settings.json",
            "{\n  \"mutate\": true,\n  \"evictionStrategy\": {\"nonMigratable\": \"sometimes\"}\n}\n",
            "evictionStrategy.nonMigratable: unknown variant `sometimes`, expected one of `ignore`, `warn`, `reject`, `fix` at line 3 column 51",
        ),
        (
            "policy.yaml",
            "apiVersion: policies.kubewarden.io/v1\nkind: ClusterAdmissionPolicy\nmetadata:\n  name: x\nspec:\n  module: registry://example.org/x:v1\n  settings:\n    requireLabel: 3\n",
            "requireLabel: invalid type: integer `3`, expected a boolean at line 8 column 19",
        ),
        (
            "policy.json",
            "{\"apiVersion\": \"policies.kubewarden.io/v1\", \"kind\": \"ClusterAdmissionPolicy\",\n \"spec\": {\"settings\": {\n   \"kubevirt\": {\"requireEvictFallback\": \"yes\"}}}}\n",
            "kubevirt.requireEvictFallback: invalid type: string \"yes\", expected a boolean at line 3 column 45",
        ),
        (
            "consistency.yaml",
            "allowedStrategies: [Migrate]\ndefaultStrategy: Shutdown\n",
            "defaultStrategy: \"Shutdown\" is not in allowedStrategies (Migrate)",
        ),
    ];
    for (name, text, message) in cases {
        let path = write(&dir, name, text);
        assert_eq!(
            refused_settings(sample, &path),
            format!(
                "{PREFIX}{}: the policy refuses these settings: {message}\n",
                path.display()
            ),
            "{name}"
        );
    }
}

/// The drain preview of `sample` with the settings file `path`, which must be refused (exit 1,
/// nothing on stdout): its stderr.
fn refused_settings(sample: &str, path: &Path) -> String {
    let settings = path.to_str().unwrap_or_default();
    let output = run(&["drain", "-f", sample, "--settings", settings]);
    assert_eq!(output.status.code(), Some(1), "{settings}");
    assert_eq!(stdout(&output), "", "{settings}");
    stderr(&output)
}

/// Only VMs that block set exit code 2, VMs that may stay off or down 3 (docs/rules.md R2-R10);
/// the other kinds of a dump are ignored; YAML works too.
#[test]
fn exit_code_follows_the_outcomes() {
    let dir = scratch("exit");
    let vm = |name: &str, strategy: &str, label: &str| {
        json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
               "metadata": {"name": name, "namespace": "team", "labels": {K: label}},
               "spec": {"runStrategy": "Always", "template": {"metadata": {"labels": {K: label, "harvesterhci.io/vmName": name}},
                        "spec": {"evictionStrategy": strategy, "domain": {"devices": {
                            "hostDevices": [{"name": "vf", "deviceName": "intel.com/vf"}],
                            "interfaces": [{"name": "default", "masquerade": {}}]}},
                            "networks": [{"name": "default", "pod": {}}]}}}})
    };
    let with_run = |mut vm: Value, run: &str| {
        vm["spec"]["runStrategy"] = json!(run);
        vm
    };
    let rerun = |vm: Value| with_run(vm, "RerunOnFailure");
    let manual = |vm: Value| with_run(vm, "Manual");
    let other = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "team"}});
    let cases = [
        (
            vec![vm("a", "LiveMigrateIfPossible", "Migrate"), other.clone()],
            0,
            "Restart",
        ),
        (vec![vm("a", "LiveMigrate", "Shutdown")], 0, "ShutDown"),
        (vec![vm("a", "LiveMigrate", "Migrate")], 2, "Blocks"),
        (vec![rerun(vm("a", "None", "Migrate"))], 3, "MayStayOff"),
        (
            vec![manual(vm("a", "LiveMigrateIfPossible", "Migrate"))],
            3,
            "StaysOff",
        ),
    ];
    for (items, code, outcome) in cases {
        let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
        let yaml = serde_yaml::to_string(&list).unwrap_or_default();
        let path = write(&dir, "dump.yaml", &yaml);
        let output = run(&[
            "drain",
            "-f",
            path.to_str().unwrap_or_default(),
            "-o",
            "json",
        ]);
        assert_eq!(
            output.status.code(),
            Some(code),
            "{yaml}\n{}",
            stderr(&output)
        );
        let rows = json_rows(&output);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["outcome"], outcome);
    }
}

/// A VM that cannot be judged is a row saying why, never the end of the run; it may block, so
/// the exit code is 2. A List item that is not an object is a note.
#[test]
fn a_vm_that_cannot_be_judged_is_reported() {
    let dir = scratch("unjudged");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
         "metadata": {"name": "odd", "namespace": "team"},
         "spec": {"template": {"metadata": {"labels": ["not", "a", "map"]}, "spec": {}}}},
        {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
         "metadata": {"namespace": "team"}, "spec": {}},
        {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
         "metadata": {"name": "fine", "namespace": "team", "labels": {K: "Migrate"}},
         "spec": {"template": {"metadata": {"labels": {K: "Migrate"}},
                  "spec": {"evictionStrategy": "LiveMigrateIfPossible",
                           "domain": {"devices": {"interfaces": [{"name": "default", "masquerade": {}}]}},
                           "networks": [{"name": "default", "pod": {}}]}}}},
        "not an object"
    ]});
    let path = write(&dir, "dump.json", &list.to_string());
    let output = run(&["drain", "-f", path.to_str().unwrap_or_default()]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(
        stderr(&output),
        format!(
            "{PREFIX}note: {}: item 3 is not an object, ignored\n",
            path.display()
        )
    );
    let text = stdout(&output);
    assert!(
        text.contains(
            "\nSummary: 3 VMs: 1 Migrate, 0 ShutDown, 0 Restart, 0 MayStayOff, 0 StaysOff, 0 DownUntilNodeReturns, 0 Blocks, 2 not judged\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("\nNot judged (may block a drain):\n  team/(unnamed VM #2): metadata.name: missing\n  team/odd: spec.template.metadata.labels: not a map, the labels of its Pod are unknown\n"),
        "{text}"
    );
    let output = run(&[
        "drain",
        "-f",
        path.to_str().unwrap_or_default(),
        "-o",
        "json",
    ]);
    let rows = json_rows(&output);
    let odd = rows
        .iter()
        .find(|r| r["name"] == "odd")
        .cloned()
        .unwrap_or_default();
    assert_eq!(odd["outcome"], Value::Null);
    // The policy still answers for it.
    assert_eq!(odd["verdict"]["result"], "rejected");
}

/// 5,000 VMs (the sample's fourteen, repeated under new names) with the sample's KubeVirt CR and
/// PVCs: every VM evaluated on a fresh instance. Prints the wall time and peak RSS.
#[test]
fn five_thousand_vms() {
    const COUNT: usize = 5000;
    let sample: Value =
        serde_json::from_str(&std::fs::read_to_string(sample()).unwrap_or_default())
            .unwrap_or_default();
    let items = sample["items"].as_array().cloned().unwrap_or_default();
    let (vms, rest): (Vec<Value>, Vec<Value>) = items
        .into_iter()
        .partition(|i| i["kind"] == "VirtualMachine");
    assert_eq!(vms.len(), 14);
    let sample_rows = json_rows(&run(&["drain", "-f", sample_path_str(), "-o", "json"]));
    let mut want = std::collections::BTreeMap::new();
    let mut generated = rest;
    for i in 0..COUNT {
        let mut vm = vms[i % vms.len()].clone();
        let name = format!("{}-{i:04}", vm["metadata"]["name"].as_str().unwrap_or("vm"));
        vm["metadata"]["name"] = json!(name);
        let original = &vms[i % vms.len()]["metadata"]["name"];
        let outcome = sample_rows
            .iter()
            .find(|r| &r["name"] == original)
            .map(|r| r["outcome"].to_string())
            .unwrap_or_default();
        *want.entry(outcome).or_insert(0usize) += 1;
        generated.push(vm);
    }
    let dir = scratch("5000");
    let dump = json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": generated});
    let path = write(
        &dir,
        "dump.json",
        &serde_json::to_string_pretty(&dump).unwrap_or_default(),
    );
    let size = std::fs::metadata(&path)
        .map(|m| m.len())
        .unwrap_or_default();

    let out_path = dir.join("out.json");
    let out = std::fs::File::create(&out_path).unwrap_or_else(|e| panic!("{e}"));
    let args = [
        "drain",
        "-f",
        path.to_str().unwrap_or_default(),
        "-o",
        "json",
    ];
    let measured = peak::run(BIN, &args, out, &dir);
    assert_eq!(measured.code, Some(2));
    let rows: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap_or_default())
            .unwrap_or_default();
    assert_eq!(rows.len(), COUNT);
    let mut got = std::collections::BTreeMap::new();
    for row in &rows {
        *got.entry(row["outcome"].to_string()).or_insert(0usize) += 1;
    }
    assert_eq!(got, want);
    eprintln!(
        "kubectl vm-maintenance drain, {COUNT} VMs ({:.1} MB of JSON): {:.2} s wall, {}",
        size as f64 / 1e6,
        measured.elapsed.as_secs_f64(),
        measured.peak()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn sample_path_str() -> &'static str {
    "examples/cluster-dump.json"
}

/// A running VM whose VMI and launcher Pod kept an old label and whose VMI kept a stale
/// `LiveMigrate` it cannot migrate under: every preview says so (`STALE`, `staleness` in the
/// JSON), with what the drain and Harvester's maintenance read and whether the KubeVirt CR
/// syncs the label (K4).
#[test]
fn stale_running_objects_in_every_preview() {
    let dump = |customize: Value| {
        let mut objects = vec![json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": {"evictionStrategy": "LiveMigrateIfPossible"},
                     "customizeComponents": customize,
                     "workloadUpdateStrategy": {"workloadUpdateMethods": ["LiveMigrate", "Evict"]}},
            "status": {"observedKubeVirtVersion": "v1.9.0"}})];
        for node in ["node-1", "node-2"] {
            objects.push(json!({"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": node, "labels": {"kubernetes.io/hostname": node}},
                "spec": {}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}));
        }
        for (name, old, strategy, migratable) in [
            ("stale", "Shutdown", "LiveMigrate", "False"),
            ("current", "Migrate", "LiveMigrateIfPossible", "True"),
        ] {
            objects.push(json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                "metadata": {"name": name, "namespace": "team", "labels": {K: "Migrate"}},
                "spec": {"runStrategy": "Always", "template": {"metadata": {"labels": {K: "Migrate"}},
                    "spec": {"domain": {"devices": {"interfaces": [{"name": "default", "masquerade": {}}]}},
                             "networks": [{"name": "default", "pod": {}}]}}}}));
            objects.push(json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                "metadata": {"name": name, "namespace": "team", "labels": {K: old, "kubevirt.io/nodeName": "node-1"},
                             "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": name}]},
                "spec": {"evictionStrategy": strategy},
                "status": {"phase": "Running", "nodeName": "node-1",
                           "conditions": [{"type": "LiveMigratable", "status": migratable, "reason": "HostDeviceNotLiveMigratable"}]}}));
            objects.push(json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": format!("virt-launcher-{name}-x1y2z"), "namespace": "team",
                             "labels": {K: old, "kubevirt.io": "virt-launcher", "harvesterhci.io/vmName": name},
                             "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "name": name}]},
                "spec": {"nodeName": "node-1"}, "status": {"phase": "Running"}}));
        }
        json!({"apiVersion": "v1", "kind": "List", "items": objects}).to_string()
    };
    let dir = scratch("stale");
    let unsynced = write(&dir, "unsynced.json", &dump(json!({})));
    let synced = write(
        &dir,
        "synced.json",
        &dump(json!({"flags": {"controller": {"additional-launcher-labels-sync": K}}})),
    );
    let file = unsynced.to_str().unwrap_or_default();
    let want = json!({
        "label": {"vm": "Migrate", "template": "Migrate", "vmi": "Shutdown", "pod": "Shutdown",
                  "podName": "virt-launcher-stale-x1y2z", "drainReads": "pod", "maintenanceReads": "vmi",
                  "syncedByKubeVirt": false, "differs": ["vmi", "pod"]},
        "evictionStrategy": {"vmi": "LiveMigrate", "current": "LiveMigrateIfPossible",
                             "currentSource": "cluster", "stale": true}
    });
    let current = json!({
        "label": {"vm": "Migrate", "template": "Migrate", "vmi": "Migrate", "pod": "Migrate",
                  "podName": "virt-launcher-current-x1y2z", "drainReads": "pod", "maintenanceReads": "vmi",
                  "syncedByKubeVirt": false, "differs": []},
        "evictionStrategy": {"vmi": "LiveMigrateIfPossible", "current": "LiveMigrateIfPossible",
                             "currentSource": "cluster", "stale": false}
    });
    let by_name = |rows: &Value, name: &str| {
        rows.as_array()
            .into_iter()
            .flatten()
            .find(|r| r["name"] == name)
            .map(|r| r["staleness"].clone())
            .unwrap_or_default()
    };
    // The drain: the Pod's Shutdown makes the filter skip it, and Harvester stops it.
    let drain = json_rows(&run(&["drain", "-o", "json", "-f", file]));
    let drain = Value::Array(drain);
    assert_eq!(by_name(&drain, "stale"), want);
    assert_eq!(by_name(&drain, "current"), current);
    // Harvester refuses a node with a VMI that cannot migrate: forced, it acts on both VMs.
    let maintenance = run(&["maintenance", "node-1", "--force", "-o", "json", "-f", file]);
    let maintenance: Value = serde_json::from_slice(&maintenance.stdout).unwrap_or_default();
    assert_eq!(by_name(&maintenance["vms"], "stale"), want, "{maintenance}");
    assert_eq!(maintenance["labelSync"]["synced"], false);
    // The upgrade reads no label: only the strategy, which blocks it forever.
    let upgrade = run(&["upgrade", "-o", "json", "-f", file]);
    let upgrade: Value = serde_json::from_slice(&upgrade.stdout).unwrap_or_default();
    assert_eq!(
        by_name(&upgrade["vmis"], "stale"),
        json!({"evictionStrategy": want["evictionStrategy"]})
    );
    // The tables.
    let table = stdout(&run(&["drain", "-f", file]));
    let row = |text: &str, name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("team        {name} ")))
            .map(|l| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    assert_eq!(
        row(&table, "stale")[6],
        "label(vmi,pod),eviction",
        "{table}"
    );
    assert_eq!(row(&table, "current")[6], "no", "{table}");
    assert!(table.contains("\nStale (running objects behind their VM):\n  team/stale: label VM Migrate, template Migrate, VMI Shutdown, launcher Pod Shutdown (the drain reads the Pod's, Harvester's maintenance the VMI's): KubeVirt does not sync harvesterhci.io/maintain-mode-strategy: restart the VM or run kubectl vm-maintenance sync --apply\n  team/stale: evictionStrategy LiveMigrate on the VMI, LiveMigrateIfPossible now (the KubeVirt CR's): stale: restart once to get LiveMigrateIfPossible\n"), "{table}");
    assert!(table.contains("\nKubeVirt label sync:\n  spec.customizeComponents: virt-controller does not sync label harvesterhci.io/maintain-mode-strategy (no --additional-launcher-labels-sync); "), "{table}");
    let wide = stdout(&run(&["drain", "-o", "wide", "-f", file]));
    let cells = row(&wide, "stale");
    assert!(
        cells.contains(&"Migrate/Shutdown/Shutdown".to_owned())
            && cells.contains(&"LiveMigrate->LiveMigrateIfPossible".to_owned()),
        "{wide}"
    );
    let table = stdout(&run(&["maintenance", "node-1", "--force", "-f", file]));
    assert_eq!(
        row(&table, "stale")[5],
        "label(vmi,pod),eviction",
        "{table}"
    );
    let table = stdout(&run(&["upgrade", "-f", file]));
    assert_eq!(row(&table, "stale")[5], "eviction", "{table}");
    assert!(table.contains("\n  team/stale: evictionStrategy LiveMigrate on the VMI, LiveMigrateIfPossible now (the KubeVirt CR's): stale: restart once to get LiveMigrateIfPossible\n"), "{table}");
    // A CR that syncs the label: KubeVirt brings the VMI and Pod to the template's value.
    let file = synced.to_str().unwrap_or_default();
    let drain = Value::Array(json_rows(&run(&["drain", "-o", "json", "-f", file])));
    assert_eq!(by_name(&drain, "stale")["label"]["syncedByKubeVirt"], true);
    let table = stdout(&run(&["drain", "-f", file]));
    assert!(table.contains("(the drain reads the Pod's, Harvester's maintenance the VMI's): KubeVirt's label sync brings the VMI and Pod to the template's value\n"), "{table}");
    assert!(table.contains("\nKubeVirt label sync:\n  the KubeVirt CR makes virt-controller sync label harvesterhci.io/maintain-mode-strategy from each VM's template to its running VMI and launcher Pod (--additional-launcher-labels-sync)\n"), "{table}");
}
