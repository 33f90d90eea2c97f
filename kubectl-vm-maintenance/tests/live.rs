//! Live reads, end to end as the installed binary runs: the same answers from a file, from
//! standard input and from the live cluster (the loopback API server of `tests/harness`,
//! answering the Kubernetes API's list paths from a dump), a running VM judged by its VMI, a
//! bad kubeconfig, refused credentials, an unreachable server, a kind that cannot be listed,
//! and not one request that writes.

mod harness;

use harness::{maintenance_dump, parsed, run_piped, scratch_of, stderr};

use std::path::PathBuf;

use harness::apiserver::ApiServer;
use serde_json::{Value, json};

fn dump() -> Vec<Value> {
    let text = std::fs::read_to_string(maintenance_dump()).unwrap_or_default();
    let list: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    list["items"].as_array().cloned().unwrap_or_default()
}

fn scratch(name: &str) -> PathBuf {
    scratch_of("live", name)
}

#[test]
fn file_stdin_and_live_give_the_same_answers() {
    let dir = scratch("same");
    let server = ApiServer::start(dump(), None);
    let kubeconfig = server.kubeconfig(&dir);
    let kubeconfig = kubeconfig.to_string_lossy();
    let text = std::fs::read(maintenance_dump()).unwrap_or_default();
    let file = maintenance_dump();
    let file = file.to_string_lossy();
    for command in [
        vec!["drain"],
        vec!["drain", "harvester-node-2"],
        vec!["maintenance", "harvester-node-2"],
        vec!["maintenance", "harvester-node-2", "--force"],
        vec!["upgrade"],
    ] {
        let with = |extra: &[&str]| {
            let mut args: Vec<&str> = command.clone();
            args.extend(["-o", "json"]);
            args.extend(extra);
            args.into_iter().map(str::to_owned).collect::<Vec<String>>()
        };
        let args = with(&["-f", &file]);
        let from_file = run_piped(&args.iter().map(String::as_str).collect::<Vec<_>>(), None);
        let args = with(&["-f", "-"]);
        let from_stdin = run_piped(
            &args.iter().map(String::as_str).collect::<Vec<_>>(),
            Some(&text),
        );
        let args = with(&["--kubeconfig", &kubeconfig]);
        let live = run_piped(&args.iter().map(String::as_str).collect::<Vec<_>>(), None);
        let answer = parsed(&from_file);
        assert_eq!(answer, parsed(&from_stdin), "{command:?}: stdin");
        assert_eq!(
            answer,
            parsed(&live),
            "{command:?}: live\n{}",
            stderr(&live)
        );
        assert_eq!(from_file.status.code(), live.status.code(), "{command:?}");
        assert!(
            matches!(live.status.code(), Some(0 | 2 | 3)),
            "{command:?}: {}",
            stderr(&live)
        );
    }
    let requests = server.requests();
    assert!(!requests.is_empty());
    let writes: Vec<&String> = requests.iter().filter(|r| !r.starts_with("GET ")).collect();
    assert!(writes.is_empty(), "{writes:?}");
}

#[test]
fn a_running_vm_is_judged_by_its_vmi() {
    let output = run_piped(
        &[
            "drain",
            "-o",
            "json",
            "-f",
            &maintenance_dump().to_string_lossy(),
        ],
        None,
    );
    let rows = parsed(&output);
    let rows = rows.as_array().cloned().unwrap_or_default();
    assert!(!rows.is_empty(), "{}", stderr(&output));
    let running: Vec<&Value> = rows.iter().filter(|r| r["running"] == true).collect();
    assert!(!running.is_empty(), "no running VM in the sample");
    for row in running {
        for field in [
            "namespace",
            "name",
            "node",
            "outcome",
            "evictionStrategy",
            "evictionStrategySource",
            "reasons",
            "verdict",
            "prediction",
        ] {
            assert!(!row[field].is_null(), "{field}: {row}");
        }
        let source = row["evictionStrategySource"].as_str().unwrap_or_default();
        assert!(["vmi", "cluster", "default"].contains(&source), "{row}");
    }
    let node = run_piped(
        &[
            "drain",
            "harvester-node-2",
            "-o",
            "json",
            "-f",
            &maintenance_dump().to_string_lossy(),
        ],
        None,
    );
    let on_node = parsed(&node);
    for row in on_node.as_array().into_iter().flatten() {
        assert_eq!(row["node"], "harvester-node-2", "{row}");
    }
}

#[test]
fn cluster_errors_are_clear() {
    let dir = scratch("errors");
    let bad = dir.join("bad-kubeconfig");
    std::fs::write(&bad, "clusters: [").unwrap_or_else(|e| panic!("{e}"));
    let refusing = ApiServer::start(Vec::new(), Some(401));
    let unauthorized = refusing.kubeconfig(&scratch("401"));
    let gone = ApiServer::start(Vec::new(), None);
    let unreachable = gone.kubeconfig(&scratch("gone"));
    let text = std::fs::read_to_string(&unreachable).unwrap_or_default();
    std::fs::write(&unreachable, text.replace(&gone.url, "http://127.0.0.1:9"))
        .unwrap_or_else(|e| panic!("{e}"));
    let cases = [
        (
            bad.clone(),
            format!("kubectl-vm_maintenance: kubeconfig {}: ", bad.display()),
        ),
        (
            unauthorized,
            format!(
                "kubectl-vm_maintenance: {}/: the API server refused the credentials (401 Unauthorized)",
                refusing.url
            ),
        ),
        (
            unreachable,
            "kubectl-vm_maintenance: http://127.0.0.1:9/: GET /apis/kubevirt.io/v1/kubevirts: "
                .to_owned(),
        ),
    ];
    for (kubeconfig, want) in cases {
        let output = run_piped(
            &["drain", "--kubeconfig", &kubeconfig.to_string_lossy()],
            None,
        );
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        assert!(
            stderr(&output).starts_with(&want),
            "{}\nwant {want}",
            stderr(&output)
        );
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn a_missing_kind_is_one_note() {
    let objects: Vec<Value> = dump()
        .into_iter()
        .filter(|o| o["kind"] != "Volume" && o["kind"] != "Replica")
        .collect();
    let server = ApiServer::start(objects, None);
    let kubeconfig = server.kubeconfig(&scratch("missing"));
    let output = run_piped(
        &[
            "maintenance",
            "harvester-node-2",
            "-o",
            "json",
            "--kubeconfig",
            &kubeconfig.to_string_lossy(),
        ],
        None,
    );
    assert!(
        matches!(output.status.code(), Some(0 | 2 | 3)),
        "{}",
        stderr(&output)
    );
    let errors = stderr(&output);
    assert!(errors.contains("note: virtualmachineclusterinstancetypes (instancetype.kubevirt.io/v1beta1): not served by this cluster, what needs it is not checked"), "{errors}");
}

/// The dump of issue 35: four running VMIs that cannot live-migrate under
/// `LiveMigrateIfPossible`, one per runStrategy; a migratable `None` VM whose disk only node-1
/// can mount; a legacy `spec.running: true` VM on node-2 (docs/rules.md D5, D6, R1-R5, R10).
/// A VM of namespace `team` labelled Migrate, with `run` (its run fields) and `strategy`.
fn strategy_vm(name: &str, run: Value, strategy: &str) -> Value {
    let mut spec = json!({"template": {"metadata": {"labels": {"harvesterhci.io/maintain-mode-strategy": "Migrate"}},
                                       "spec": {"evictionStrategy": strategy, "domain": {"devices": {}}}}});
    if let (Some(spec), Some(run)) = (spec.as_object_mut(), run.as_object()) {
        spec.extend(run.clone());
    }
    json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
           "metadata": {"name": name, "namespace": "team", "labels": {"harvesterhci.io/maintain-mode-strategy": "Migrate"}},
           "spec": spec})
}

/// Its running VMI on `node`, migratable or not (`LiveMigratable`), with `volumes`.
fn strategy_vmi(name: &str, node: &str, strategy: &str, migratable: bool, volumes: Value) -> Value {
    let condition = if migratable {
        json!({"type": "LiveMigratable", "status": "True"})
    } else {
        json!({"type": "LiveMigratable", "status": "False", "reason": "HostDeviceNotLiveMigratable", "message": "GPU gpu1"})
    };
    json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
           "metadata": {"name": name, "namespace": "team",
                        "labels": {"kubevirt.io/nodeName": node, "harvesterhci.io/maintain-mode-strategy": "Migrate"},
                        "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": name}]},
           "spec": {"evictionStrategy": strategy, "volumes": volumes},
           "status": {"phase": "Running", "nodeName": node, "conditions": [condition]}})
}

fn run_strategy_dump() -> Vec<Value> {
    let node = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Node",
               "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
               "spec": {}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    };
    let mut objects = vec![
        json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
               "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
               "spec": {"configuration": {"evictionStrategy": "LiveMigrate"},
                        "workloadUpdateStrategy": {"workloadUpdateMethods": ["LiveMigrate", "Evict"]}}}),
        node("node-1"),
        node("node-2"),
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": {"name": "local-root", "namespace": "team"},
               "spec": {"accessModes": ["ReadWriteOnce"], "volumeName": "pv-local"}}),
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-local"},
               "spec": {"local": {"path": "/mnt/disks/vol1"}, "nodeAffinity": {"required": {"nodeSelectorTerms": [
                   {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-1"]}]}]}}}}),
    ];
    for run in ["Always", "RerunOnFailure", "Manual", "Once"] {
        let name = run.to_lowercase();
        objects.push(strategy_vm(
            &name,
            json!({"runStrategy": run}),
            "LiveMigrateIfPossible",
        ));
        objects.push(strategy_vmi(
            &name,
            "node-1",
            "LiveMigrateIfPossible",
            false,
            json!([]),
        ));
    }
    let local = json!([{"name": "root", "persistentVolumeClaim": {"claimName": "local-root"}}]);
    objects.push(strategy_vm(
        "local",
        json!({"runStrategy": "Always"}),
        "None",
    ));
    objects.push(strategy_vmi("local", "node-1", "None", true, local));
    objects.push(strategy_vm("legacy", json!({"running": true}), "None"));
    objects.push(strategy_vmi("legacy", "node-2", "None", true, json!([])));
    objects
}

fn outcomes(rows: &Value, list: &str, field: &str) -> Vec<(String, String, String)> {
    let rows = if list.is_empty() { rows } else { &rows[list] };
    rows.as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let run = &r["runStrategy"];
            let read = match (run["value"].as_str(), run["field"].as_str()) {
                (Some(value), Some(field)) => format!("{value} ({field})"),
                _ => "-".to_owned(),
            };
            let name = r["name"].as_str().unwrap_or_default().to_owned();
            (name, r[field].as_str().unwrap_or_default().to_owned(), read)
        })
        .collect()
}

fn owned(rows: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    rows.iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect()
}

/// Issue 35's dump through the plugin, from a file and live: the drain, the upgrade and the
/// maintenance say what each runStrategy and the node-local disk do, and exit 3 (nothing blocks,
/// some VM may stay off or down).
#[test]
fn an_evicted_vm_by_its_run_strategy() {
    let dir = scratch("run-strategy");
    let file = dir.join("dump.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": run_strategy_dump()});
    std::fs::write(&file, list.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let file = file.to_string_lossy().into_owned();
    let server = ApiServer::start(run_strategy_dump(), None);
    let kubeconfig = server.kubeconfig(&dir);
    let kubeconfig = kubeconfig.to_string_lossy().into_owned();
    let drain = owned(&[
        ("always", "Restart", "Always (spec.runStrategy)"),
        ("legacy", "Restart", "Always (spec.running)"),
        ("local", "DownUntilNodeReturns", "Always (spec.runStrategy)"),
        ("manual", "StaysOff", "Manual (spec.runStrategy)"),
        ("once", "StaysOff", "Once (spec.runStrategy)"),
        (
            "rerunonfailure",
            "MayStayOff",
            "RerunOnFailure (spec.runStrategy)",
        ),
    ]);
    let upgrade = owned(&[
        ("always", "Restart", "Always (spec.runStrategy)"),
        ("legacy", "Migrate", "-"),
        ("local", "Migrate", "-"),
        ("manual", "StaysOff", "Manual (spec.runStrategy)"),
        ("once", "StaysOff", "Once (spec.runStrategy)"),
        (
            "rerunonfailure",
            "MayStayOff",
            "RerunOnFailure (spec.runStrategy)",
        ),
    ]);
    for source in [["-f", file.as_str()], ["--kubeconfig", kubeconfig.as_str()]] {
        let output = run_piped(&["drain", "-o", "json", source[0], source[1]], None);
        assert_eq!(
            output.status.code(),
            Some(3),
            "{source:?}: {}",
            stderr(&output)
        );
        assert_eq!(
            outcomes(&parsed(&output), "", "outcome"),
            drain,
            "{source:?}"
        );
        let output = run_piped(&["upgrade", "-o", "json", source[0], source[1]], None);
        assert_eq!(
            output.status.code(),
            Some(3),
            "{source:?}: {}",
            stderr(&output)
        );
        let got = parsed(&output);
        assert_eq!(got["outcome"], "Completes");
        assert_eq!(outcomes(&got, "vmis", "outcome"), upgrade, "{source:?}");
    }
    let rows = parsed(&run_piped(
        &["drain", "node-1", "-o", "json", "-f", &file],
        None,
    ));
    let local = rows
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["name"] == "local");
    assert_eq!(
        local.map(|r| r["why"].clone()),
        Some(json!(
            "None: evicted without migration; runStrategy Always (spec.runStrategy): KubeVirt starts it again; but claim local-root is bound to PersistentVolume pv-local, which only node node-1 can mount: it cannot start elsewhere, it stays down until the node is back"
        ))
    );
    let table = run_piped(&["drain", "-f", &file, "--width", "200"], None);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("\nSummary: 6 VMs: 0 Migrate, 0 ShutDown, 2 Restart, 1 MayStayOff, 2 StaysOff, 1 DownUntilNodeReturns, 0 Blocks\n"),
        "{text}"
    );
    assert!(text.contains("\nMay stay off or down after the drain:\n  team/local: DownUntilNodeReturns: None: evicted without migration;"), "{text}");
    let forced = run_piped(
        &[
            "maintenance",
            "node-1",
            "--force",
            "-o",
            "json",
            "-f",
            &file,
        ],
        None,
    );
    let got = parsed(&forced);
    assert_eq!(got["outcome"], "Completes", "{got}");
    assert_eq!(forced.status.code(), Some(3), "{}", stderr(&forced));
    let local = got["vms"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|v| v["name"] == "local");
    assert_eq!(
        local.map(|v| v["outcome"].clone()),
        Some(json!("DownUntilNodeReturns")),
        "{got}"
    );
}

/// PersistentVolumes the user may not list: one note, and no VM is said to be bound to a node.
#[test]
fn persistent_volumes_forbidden_is_one_note() {
    let server = ApiServer::forbidding(run_strategy_dump(), None, Some("persistentvolumes"));
    let kubeconfig = server.kubeconfig(&scratch("pv-forbidden"));
    let output = run_piped(
        &[
            "drain",
            "-o",
            "json",
            "--kubeconfig",
            &kubeconfig.to_string_lossy(),
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(3), "{}", stderr(&output));
    let errors = stderr(&output);
    assert!(errors.contains("note: persistentvolumes (v1): listing is forbidden for this user, what needs it is not checked"), "{errors}");
    assert!(errors.contains("note: no PersistentVolumes in the input: a disk bound to one node (DownUntilNodeReturns) is not checked"), "{errors}");
    let rows = parsed(&output);
    let local = rows
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["name"] == "local");
    assert_eq!(local.map(|r| r["outcome"].clone()), Some(json!("Restart")));
}

/// The table of cluster-model/tests/restart.rs through the plugin: every runStrategy x every
/// eviction strategy x migratable or not, one running VM each, in one dump; the drain and the
/// upgrade (LiveMigrate and Evict) of each (docs/rules.md D2-D7, R1-R5, U3-U7).
#[test]
fn every_run_strategy_by_eviction_strategy_through_the_plugin() {
    let runs = [
        ("Always", "Restart", "Restart"),
        ("RerunOnFailure", "MayStayOff", "MayStayOff"),
        ("Manual", "StaysOff", "StaysOff"),
        ("Once", "StaysOff", "StaysOff"),
    ];
    let strategies = ["LiveMigrate", "LiveMigrateIfPossible", "None", "External"];
    let mut objects = vec![json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"workloadUpdateStrategy": {"workloadUpdateMethods": ["LiveMigrate", "Evict"]}}})];
    let mut want_drain = Vec::new();
    let mut want_upgrade = Vec::new();
    for (run, evicted_drain, evicted_upgrade) in runs {
        for strategy in strategies {
            for migratable in [true, false] {
                let name = format!(
                    "{}-{}-{migratable}",
                    run.to_lowercase(),
                    strategy.to_lowercase()
                );
                objects.push(strategy_vm(&name, json!({"runStrategy": run}), strategy));
                objects.push(strategy_vmi(
                    &name,
                    "node-1",
                    strategy,
                    migratable,
                    json!([]),
                ));
                let drain = match (strategy, migratable) {
                    ("LiveMigrate" | "LiveMigrateIfPossible", true) => "Migrate",
                    ("LiveMigrate", false) | ("External", _) => "Blocks",
                    _ => evicted_drain,
                };
                let upgrade = match (strategy, migratable) {
                    (_, true) => "Migrate",
                    ("LiveMigrate", false) => "Blocks",
                    ("External", false) => "Evacuate",
                    _ => evicted_upgrade,
                };
                want_drain.push((name.clone(), drain.to_owned()));
                want_upgrade.push((name, upgrade.to_owned()));
            }
        }
    }
    want_drain.sort();
    want_upgrade.sort();
    let file = scratch("cross").join("dump.json");
    let list = json!({"apiVersion": "v1", "kind": "List", "items": objects});
    std::fs::write(&file, list.to_string()).unwrap_or_else(|e| panic!("{e}"));
    let file = file.to_string_lossy().into_owned();
    let pairs = |rows: &Value| -> Vec<(String, String)> {
        let mut pairs: Vec<(String, String)> = outcomes(rows, "", "outcome")
            .into_iter()
            .map(|(name, outcome, _)| (name, outcome))
            .collect();
        pairs.sort();
        pairs
    };
    let drain = run_piped(&["drain", "-o", "json", "-f", &file], None);
    assert_eq!(drain.status.code(), Some(2), "{}", stderr(&drain));
    assert_eq!(pairs(&parsed(&drain)), want_drain);
    let upgrade = run_piped(&["upgrade", "-o", "json", "-f", &file], None);
    assert_eq!(upgrade.status.code(), Some(2), "{}", stderr(&upgrade));
    assert_eq!(pairs(&parsed(&upgrade)["vmis"]), want_upgrade);
}
