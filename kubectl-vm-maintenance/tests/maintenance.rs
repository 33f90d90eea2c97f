//! `kubectl vm-maintenance maintenance NODE [--force] -f FILE` end to end, as a binary, on
//! `examples/cluster-maintenance-dump.json`: the exact JSON of every node forced and not and the
//! tables of two nodes (the files in `tests/maintenance-expected/`; `VM_MAINTENANCE_BLESS=1`
//! rewrites them), variants of the dump for the control-plane rule, a dump without Longhorn
//! objects and a forced node that completes; bad input; and a generated dump of 5,000 VMs on 50
//! nodes, timed.

mod harness;

use harness::{BIN, parsed, peak, scratch_of, workspace};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

const SAMPLE: &str = "examples/cluster-maintenance-dump.json";

fn expected(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/maintenance-expected")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn scratch(name: &str) -> PathBuf {
    scratch_of("maintenance", name)
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(workspace())
        .output()
        .unwrap_or_else(|e| panic!("{BIN}: {e}"))
}

fn sample() -> Value {
    let text = std::fs::read_to_string(workspace().join(SAMPLE)).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or_default()
}

/// The sample with `change` applied to its items, written to a scratch file.
fn variant(name: &str, change: impl FnOnce(&mut Vec<Value>)) -> PathBuf {
    let mut dump = sample();
    let mut items = dump["items"].as_array().cloned().unwrap_or_default();
    change(&mut items);
    dump["items"] = Value::Array(items);
    let path = scratch(name).join("dump.json");
    std::fs::write(&path, dump.to_string()).unwrap_or_else(|e| panic!("{e}"));
    path
}

/// One VM of the JSON as `namespace/name outcome restart`.
fn brief(preview: &Value) -> Vec<String> {
    preview["vms"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|vm| {
            format!(
                "{}/{} {} {}",
                vm["namespace"].as_str().unwrap_or("?"),
                vm["name"].as_str().unwrap_or("?"),
                vm["outcome"].as_str().unwrap_or("?"),
                vm["restart"].as_str().unwrap_or("-"),
            )
        })
        .collect()
}

#[test]
fn every_node_of_the_sample_forced_and_not() {
    #[rustfmt::skip]
    let cases: [(&str, bool, i32, &str, &[&str]); 8] = [
        // Refused: two LiveMigratable=False VMIs (host devices), one also pinned by its
        // nodeSelector, and a VM on node-3 whose volume's last started replica is here.
        ("harvester-node-1", false, 2, "Refused", &[]),
        // Forced: exactly those three stopped, never restarted (prod/db-02 on node-3 too); the
        // Shutdown-labelled migratable prod/db-01 is not stopped and its Pod is skipped.
        ("harvester-node-1", true, 2, "NeverCompletes", &[
            "ai/ml-train-01 ShutDown never", "batch/etl-01 Restart -", "default/web-01 Migrate -",
            "net/nfv-router-01 ShutDown never", "prod/db-01 Blocks -", "prod/db-02 ShutDown never"]),
        ("harvester-node-2", false, 0, "Completes", &[
            "ai/gpu-infer-02 Migrate -", "default/legacy-01 Migrate -",
            "dev/kiosk-01 ShutDown afterEnable", "prod/app-01 Migrate -"]),
        // Forcing a healthy node is worse: the AfterEnable VM is not stopped and stays.
        ("harvester-node-2", true, 2, "NeverCompletes", &[
            "ai/gpu-infer-02 Migrate -", "default/legacy-01 Migrate -",
            "dev/kiosk-01 Blocks -", "prod/app-01 Migrate -"]),
        // prod/cache-01's label changed to Migrate after it started: its Pod still says Shutdown.
        ("harvester-node-3", false, 2, "NeverCompletes", &["prod/cache-01 Blocks -", "prod/db-02 Migrate -"]),
        ("harvester-node-3", true, 2, "NeverCompletes", &["prod/cache-01 Blocks -", "prod/db-02 Migrate -"]),
        // External without a controller: 429 forever.
        ("harvester-node-4", false, 2, "NeverCompletes", &["ops/backup-proxy-01 Blocks -"]),
        ("harvester-node-4", true, 2, "NeverCompletes", &["ops/backup-proxy-01 Blocks -"]),
    ];
    for (node, force, code, outcome, vms) in cases {
        let mut args = vec!["maintenance", node, "-f", SAMPLE, "-o", "json"];
        if force {
            args.push("--force");
        }
        let output = run(&args);
        let got = parsed(&output);
        let case = format!("{node} force={force}");
        assert_eq!(output.status.code(), Some(code), "{case}");
        assert_eq!(got["outcome"], outcome, "{case}");
        assert_eq!(got["force"], force, "{case}");
        assert_eq!(brief(&got), vms, "{case}");
        let file = format!("{node}{}.json", if force { "-force" } else { "" });
        let want: Value = serde_json::from_str(&expected(&file)).unwrap_or_default();
        assert_eq!(
            got, want,
            "{case}: the exact JSON of tests/maintenance-expected/{file}"
        );
    }
    // The refusal, keyed as Harvester keys it.
    let refused = parsed(&run(&[
        "maintenance",
        "harvester-node-1",
        "-f",
        SAMPLE,
        "-o",
        "json",
    ]));
    let keys: Vec<(Value, Value)> = refused["refusal"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| (r["reason"].clone(), r["vms"].clone()))
        .collect();
    assert_eq!(
        keys,
        [
            (
                json!("HostDeviceNotLiveMigratable"),
                json!(["ai/ml-train-01", "net/nfv-router-01"])
            ),
            (json!("LastHealthyReplica"), json!(["prod/db-02"])),
            (
                json!("NodeSchedulingRequirementsNotMet"),
                json!(["net/nfv-router-01"])
            ),
        ]
    );
}

/// The tables of a refused node (what blocks it, and what --force would do) and of a node that
/// completes, byte for byte, wrapped at 100 columns; `VM_MAINTENANCE_BLESS=1` rewrites them.
/// `-o wide` adds the reasons; `--no-headers` prints the rows alone.
#[test]
fn the_tables_of_two_nodes() {
    for node in ["harvester-node-1", "harvester-node-2"] {
        let output = run(&["maintenance", node, "-f", SAMPLE, "--width", "100"]);
        let got = String::from_utf8_lossy(&output.stdout).into_owned();
        let name = format!("{node}.txt");
        if std::env::var_os("VM_MAINTENANCE_BLESS").is_some() {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/maintenance-expected")
                .join(&name);
            std::fs::write(&path, &got).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        assert_eq!(got, expected(&name), "{node}");
        assert!(!got.contains("+--") && !got.contains('|'), "{got}");
    }
    let wide = run(&[
        "maintenance",
        "harvester-node-2",
        "-f",
        SAMPLE,
        "-o",
        "wide",
    ]);
    let text = String::from_utf8_lossy(&wide.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        [
            "NAMESPACE",
            "NAME",
            "NODE",
            "OUTCOME",
            "RESTART",
            "STALE",
            "LABEL",
            "VM/VMI/POD",
            "VMI",
            "EVICTION",
            "WHY"
        ]
    );
    assert!(
        lines[4].starts_with("dev         kiosk-01       harvester-node-2   ShutDown   afterEnable   no      ShutdownAndRestartAfterEnable/ShutdownAndRestartAfterEnable/ShutdownAndRestartAfterEnable   <cluster>               VMI label ShutdownAndRestartAfterEnable: stopped before the drain;"),
        "{text}"
    );
    for (node, rows) in [("harvester-node-1", 3), ("harvester-node-2", 4)] {
        let bare = run(&["maintenance", node, "-f", SAMPLE, "--no-headers"]);
        let text = String::from_utf8_lossy(&bare.stdout);
        assert_eq!(text.lines().count(), rows, "{node}: {text}");
        assert!(!text.contains("NAMESPACE"), "{text}");
    }
    let bare = run(&[
        "maintenance",
        "harvester-node-1",
        "-f",
        SAMPLE,
        "--no-headers",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&bare.stdout).lines().next(),
        Some(
            "ai     ml-train-01     HostDeviceNotLiveMigratable                                    ShutDown, restart never"
        )
    );
    // -o yaml is the data of -o json.
    let json = parsed(&run(&[
        "maintenance",
        "harvester-node-1",
        "-f",
        SAMPLE,
        "-o",
        "json",
    ]));
    let yaml = run(&[
        "maintenance",
        "harvester-node-1",
        "-f",
        SAMPLE,
        "-o",
        "yaml",
    ]);
    assert_eq!(yaml.status.code(), Some(2));
    let yaml: Value = serde_yaml::from_slice(&yaml.stdout).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(yaml, json);
}

#[test]
fn variants_of_the_dump() {
    let annotate = |items: &mut Vec<Value>, node: &str| {
        for item in items.iter_mut() {
            if item["kind"] == "Node" && item["metadata"]["name"] == node {
                item["metadata"]["annotations"]["harvesterhci.io/maintain-status"] =
                    json!("completed");
            }
        }
    };
    // The control-plane rule (DH:146): node-3 in maintenance leaves 2 of 3; force does not help.
    let ha = variant("ha", |items| annotate(items, "harvester-node-3"));
    for force in [false, true] {
        let mut args = vec![
            "maintenance",
            "harvester-node-1",
            "-f",
            ha.to_str().unwrap_or_default(),
            "-o",
            "json",
        ];
        if force {
            args.push("--force");
        }
        let output = run(&args);
        assert_eq!(output.status.code(), Some(2), "force={force}");
        let got = parsed(&output);
        assert_eq!(got["outcome"], "Refused", "force={force}");
        assert_eq!(got["refusal"][0]["reason"], "HAControlPlaneNode");
        assert_eq!(got["refusal"][0]["vms"], json!([]));
        assert_eq!(got["vms"], json!([]));
    }
    // The worker is not a control-plane node: the rule does not apply to it.
    let worker = parsed(&run(&[
        "maintenance",
        "harvester-node-4",
        "-f",
        ha.to_str().unwrap_or_default(),
        "-o",
        "json",
    ]));
    assert_eq!(worker["outcome"], "NeverCompletes");
    let table = run(&[
        "maintenance",
        "harvester-node-1",
        "-f",
        ha.to_str().unwrap_or_default(),
    ]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.starts_with("Maintenance mode on harvester-node-1, not forced: Refused\nHAControlPlaneNode: draining of this node is not possible: another controlplane is already in maintenance mode"),
        "{text}"
    );
    assert!(text.contains("--force changes nothing"), "{text}");

    // No Longhorn objects: said in one line, never guessed.
    let no_longhorn = variant("no-longhorn", |items| {
        items.retain(|i| {
            !i["apiVersion"]
                .as_str()
                .unwrap_or_default()
                .starts_with("longhorn.io/")
        });
    });
    let got = parsed(&run(&[
        "maintenance",
        "harvester-node-1",
        "-f",
        no_longhorn.to_str().unwrap_or_default(),
        "-o",
        "json",
    ]));
    assert_eq!(got["outcome"], "Refused");
    let reasons: Vec<&str> = got["refusal"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["reason"].as_str())
        .collect();
    assert_eq!(
        reasons,
        [
            "HostDeviceNotLiveMigratable",
            "NodeSchedulingRequirementsNotMet"
        ]
    );
    assert_eq!(
        got["notes"],
        json!(["LastHealthyReplica not checked: no Longhorn volumes or replicas in the objects"])
    );

    // A forced node that completes: kiosk-01's Pod without the Shutdown-family label is evicted.
    let unlabelled = variant("unlabelled", |items| {
        for item in items.iter_mut() {
            let kiosk = item["kind"] == "Pod"
                && item["metadata"]["labels"]["vm.kubevirt.io/name"] == "kiosk-01";
            if let (true, Some(labels)) = (kiosk, item["metadata"]["labels"].as_object_mut()) {
                labels.remove("harvesterhci.io/maintain-mode-strategy");
            }
        }
    });
    let output = run(&[
        "maintenance",
        "harvester-node-2",
        "-f",
        unlabelled.to_str().unwrap_or_default(),
        "--force",
        "-o",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let got = parsed(&output);
    assert_eq!(got["outcome"], "Completes");
    assert_eq!(
        brief(&got),
        [
            "ai/gpu-infer-02 Migrate -",
            "default/legacy-01 Migrate -",
            "dev/kiosk-01 Migrate -",
            "prod/app-01 Migrate -"
        ]
    );

    // Nothing but nodes: the VMIs and Pods are missing, and said so.
    let nodes_only = variant("nodes-only", |items| items.retain(|i| i["kind"] == "Node"));
    let output = run(&[
        "maintenance",
        "harvester-node-1",
        "-f",
        nodes_only.to_str().unwrap_or_default(),
        "-o",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let got = parsed(&output);
    assert_eq!(got["outcome"], "Completes");
    assert_eq!(
        got["notes"],
        json!([
            "no VirtualMachineInstances in the dump: no VM is known to run on any node",
            "no Pods in the dump: the drain filter reads each VMI's labels instead of its launcher Pod's",
            "LastHealthyReplica not checked: no Longhorn volumes or replicas in the objects"
        ])
    );
    for dir in ["ha", "no-longhorn", "unlabelled", "nodes-only"] {
        let _ = std::fs::remove_dir_all(scratch(dir));
    }
}

#[test]
fn bad_input() {
    let output = run(&["maintenance", "harvester-node-9", "-f", SAMPLE]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "kubectl-vm_maintenance: node harvester-node-9 is not in the input (nodes read: harvester-node-1, harvester-node-2, harvester-node-3, harvester-node-4)\n"
    );
    assert!(output.stdout.is_empty());
    let output = run(&["maintenance", "n1", "-f", "examples/cluster-dump.json"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("nodes read: none; add `kubectl get nodes -o json`"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // --force belongs to maintenance: elsewhere a usage error, exit 1.
    let output = run(&["drain", "-f", SAMPLE, "--force"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("unexpected argument '--force'"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Maintenance reads every namespace, as Harvester does: -n is refused, not ignored.
    let output = run(&[
        "maintenance",
        "harvester-node-1",
        "-n",
        "prod",
        "-f",
        SAMPLE,
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "kubectl-vm_maintenance: -n prod: maintenance and upgrade read every namespace (a node's VMs, the cluster's update); only drain and sync select a namespace\n"
    );
}

/// 5,000 VMs on 50 nodes (3 control-plane), each with its VMI, launcher Pod and a Longhorn volume
/// of 3 replicas; node-07 holds 100 VMs, of them one LiveMigratable=False, one pinned, one whose
/// last started replica is on node-07 while it runs elsewhere, and one labelled Shutdown. Times
/// `maintenance node-07` not forced and forced.
#[test]
fn five_thousand_vms_on_fifty_nodes() {
    const VMS: usize = 5000;
    const NODES: usize = 50;
    let node_name = |i: usize| format!("node-{i:02}");
    let mut items = Vec::new();
    for i in 0..NODES {
        let mut labels =
            json!({"kubernetes.io/hostname": node_name(i), "network.harvesterhci.io/mgmt": "true"});
        if i < 3 {
            labels["node-role.kubernetes.io/control-plane"] = json!("true");
            labels["node-role.kubernetes.io/etcd"] = json!("true");
        }
        items.push(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node_name(i), "labels": labels, "annotations": {}},
            "spec": {}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}));
    }
    items.push(json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "harvester-system"},
        "spec": {"configuration": {"evictionStrategy": "LiveMigrate"}}}));
    for i in 0..VMS {
        let name = format!("vm-{i:04}");
        let ns = format!("team-{}", i % 20);
        let node = node_name(i % NODES);
        let label = if i == 57 { "Shutdown" } else { "Migrate" };
        let claim = format!("{name}-disk");
        let template_labels = json!({"harvesterhci.io/vmName": name, "harvesterhci.io/maintain-mode-strategy": label});
        let spec = json!({"domain": {"devices": {"disks": [{"name": "disk-0", "disk": {"bus": "virtio"}}]}},
            "evictionStrategy": "LiveMigrateIfPossible",
            "volumes": [{"name": "disk-0", "persistentVolumeClaim": {"claimName": claim}}]});
        items.push(json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": name, "namespace": ns, "labels": {"harvesterhci.io/maintain-mode-strategy": label}},
            "spec": {"runStrategy": "RerunOnFailure", "template": {"metadata": {"labels": template_labels}, "spec": spec}}}));
        items.push(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim, "namespace": ns}, "spec": {"accessModes": ["ReadWriteMany"]}}));
        let mut vmi_labels = template_labels.clone();
        vmi_labels["kubevirt.io/nodeName"] = json!(node);
        let migratable = if i == 7 {
            json!({"type": "LiveMigratable", "status": "False", "reason": "DisksNotLiveMigratable"})
        } else {
            json!({"type": "LiveMigratable", "status": "True"})
        };
        let mut vmi_spec = spec.clone();
        if i == 107 {
            vmi_spec["nodeSelector"] = json!({"kubernetes.io/hostname": node});
        }
        items.push(json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
            "metadata": {"name": name, "namespace": ns, "labels": vmi_labels,
                "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": name}]},
            "spec": vmi_spec, "status": {"nodeName": node, "conditions": [migratable]}}));
        items.push(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": format!("virt-launcher-{name}-x"), "namespace": ns, "labels": template_labels,
                "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "name": name}]},
            "spec": {"nodeName": node}}));
        let volume = format!("pvc-{i:04}");
        items.push(json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Volume",
            "metadata": {"name": volume, "namespace": "longhorn-system"},
            "status": {"kubernetesStatus": {"namespace": ns, "pvcName": claim,
                "workloadsStatus": [{"workloadName": name, "workloadType": "VirtualMachineInstance"}]}}}));
        for r in 0..3 {
            // vm-0008 runs on node-08; its only started replica is on node-07.
            let (home, started) = if i == 8 {
                (node_name(7 + r), r == 0)
            } else {
                (node_name((i + r) % NODES), true)
            };
            items.push(
                json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Replica",
                "metadata": {"name": format!("{volume}-r{r}"), "namespace": "longhorn-system"},
                "spec": {"volumeName": volume, "nodeID": home}, "status": {"started": started}}),
            );
        }
    }
    let objects = items.len();
    let dir = scratch("5000");
    let path = dir.join("dump.json");
    let text = json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string();
    std::fs::write(&path, &text).unwrap_or_else(|e| panic!("{e}"));

    let mut timings = Vec::new();
    for force in [false, true] {
        let mut args = vec![
            "maintenance",
            "node-07",
            "-f",
            path.to_str().unwrap_or_default(),
            "-o",
            "json",
        ];
        if force {
            args.push("--force");
        }
        let out_path = dir.join(format!("out-{force}.json"));
        let out = std::fs::File::create(&out_path).unwrap_or_else(|e| panic!("{e}"));
        let measured = peak::run(BIN, &args, out, &dir);
        assert_eq!(measured.code, Some(2), "force={force}");
        let got: Value =
            serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap_or_default())
                .unwrap_or_default();
        if force {
            assert_eq!(got["outcome"], "NeverCompletes");
            let vms = got["vms"].as_array().cloned().unwrap_or_default();
            // The 100 VMs of node-07, plus vm-0008 stopped on node-08.
            assert_eq!(vms.len(), 101);
            let with = |outcome: &str| {
                let mut names: Vec<&str> = vms
                    .iter()
                    .filter(|v| v["outcome"] == outcome)
                    .filter_map(|v| v["name"].as_str())
                    .collect();
                names.sort();
                names
            };
            assert_eq!(with("ShutDown"), ["vm-0007", "vm-0008", "vm-0107"]);
            assert_eq!(with("Blocks"), ["vm-0057"]);
            assert_eq!(with("Migrate").len(), 97);
        } else {
            assert_eq!(got["outcome"], "Refused");
            assert_eq!(
                got["refusal"],
                json!([
                    {"reason": "DisksNotLiveMigratable", "vms": ["team-7/vm-0007"],
                     "message": "team-7/vm-0007 cannot be migrated due to DisksNotLiveMigratable"},
                    {"reason": "LastHealthyReplica", "vms": ["team-8/vm-0008"],
                     "message": "team-8/vm-0008 cannot be migrated due to LastHealthyReplica"},
                    {"reason": "NodeSchedulingRequirementsNotMet", "vms": ["team-7/vm-0107"],
                     "message": "team-7/vm-0107 cannot be migrated due to NodeSchedulingRequirementsNotMet"},
                ])
            );
        }
        timings.push((force, measured));
    }
    for (force, measured) in timings {
        eprintln!(
            "kubectl vm-maintenance maintenance node-07{}, {VMS} VMs / {NODES} nodes ({objects} objects, {:.1} MB of JSON): {:.2} s wall, {}",
            if force { " --force" } else { "" },
            text.len() as f64 / 1e6,
            measured.elapsed.as_secs_f64(),
            measured.peak()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
