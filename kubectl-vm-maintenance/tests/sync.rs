//! `kubectl vm-maintenance sync` end to end against the stateful loopback API server of
//! `tests/harness/apiserver.rs`: the plan writes nothing; `--apply` makes exactly the planned writes, each a
//! JSON patch pinned by its `test`, and a second run plans nothing; a concurrent change is never
//! overwritten; `--dry-run=server` changes nothing; `--restart-stale` restarts only the stale,
//! non-migratable VMIs, in the batches asked, and stops at the first failed batch; 401/403 on a
//! write is a clear error; lists are read in pages; the exit codes.

mod harness;

use harness::{BIN, parsed, scratch_of, stderr, stdout};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use harness::apiserver::{ApiServer, Recorded};
use serde_json::{Value, json};

const KEY: &str = "harvesterhci.io/maintain-mode-strategy";
const KEY_PATH: &str = "harvesterhci.io~1maintain-mode-strategy";

fn scratch(name: &str) -> PathBuf {
    scratch_of("sync", name)
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir("/")
        .env_remove("KUBECONFIG")
        .env("HOME", scratch("home"))
        .output()
        .unwrap_or_else(|e| panic!("{BIN}: {e}"))
}

/// `sync ARGS --kubeconfig K -o json` against `server`.
fn sync(server: &ApiServer, name: &str, args: &[&str]) -> (Output, Value) {
    let kubeconfig = server.kubeconfig(&scratch(name));
    let mut all = vec![
        "sync",
        "--kubeconfig",
        kubeconfig.to_str().unwrap_or_default(),
        "-o",
        "json",
    ];
    all.extend(args);
    let output = run(&all);
    let plan = if output.stdout.is_empty() {
        Value::Null
    } else {
        parsed(&output)
    };
    (output, plan)
}

fn labels(value: Option<&str>) -> Value {
    match value {
        Some(value) => json!({KEY: value}),
        None => json!({}),
    }
}

/// A VM: its label (`None`: no labels map at all), its template's, its runStrategy and
/// strategy.
fn vm(
    name: &str,
    label: Option<&str>,
    template: Option<&str>,
    run: &str,
    strategy: Option<&str>,
) -> Value {
    let mut vm = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
        "metadata": {"name": name, "namespace": "team"},
        "spec": {"runStrategy": run,
                 "template": {"metadata": {"labels": labels(template)},
                              "spec": {"domain": {"devices": {}}}}}});
    if let Some(label) = label {
        vm["metadata"]["labels"] = labels(Some(label));
    }
    if let Some(strategy) = strategy {
        vm["spec"]["template"]["spec"]["evictionStrategy"] = json!(strategy);
    }
    vm
}

/// A running VMI with its label, own strategy and LiveMigratable status, and its launcher Pod
/// with its label.
fn running(
    name: &str,
    vmi_label: Option<&str>,
    pod_label: Option<&str>,
    strategy: Option<&str>,
    migratable: &str,
) -> [Value; 2] {
    let mut vmi_labels = labels(vmi_label);
    vmi_labels["kubevirt.io/nodeName"] = json!("node-1");
    let mut vmi = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
        "metadata": {"name": name, "namespace": "team", "labels": vmi_labels, "uid": format!("uid-{name}"),
                     "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": name}]},
        "spec": {"domain": {"devices": {}}},
        "status": {"phase": "Running", "nodeName": "node-1",
                   "conditions": [{"type": "LiveMigratable", "status": migratable,
                                   "reason": if migratable == "True" { "" } else { "HostDeviceNotLiveMigratable" }}]}});
    if let Some(strategy) = strategy {
        vmi["spec"]["evictionStrategy"] = json!(strategy);
    }
    let mut pod_labels = labels(pod_label);
    pod_labels["kubevirt.io"] = json!("virt-launcher");
    pod_labels["vm.kubevirt.io/name"] = json!(name);
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("virt-launcher-{name}-abcde"), "namespace": "team", "labels": pod_labels,
                     "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "name": name}]},
        "spec": {"nodeName": "node-1"}, "status": {"phase": "Running"}});
    [vmi, pod]
}

fn kubevirt(customize: Value) -> Value {
    json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
           "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
           "spec": {"configuration": {"evictionStrategy": "LiveMigrateIfPossible"},
                    "customizeComponents": customize,
                    "workloadUpdateStrategy": {"workloadUpdateMethods": ["LiveMigrate", "Evict"]}},
           "status": {"observedKubeVirtVersion": "v1.9.0"}})
}

/// The cluster of these tests: label cases, then stale VMIs.
fn cluster() -> Vec<Value> {
    let m = Some("Migrate");
    let mut objects = vec![kubevirt(json!({}))];
    // No labels map on the VM, none of the key on its VMI and Pod.
    objects.push(vm("unlabelled", None, None, "Always", None));
    objects.extend(running("unlabelled", None, None, None, "True"));
    // Relabelled after it started: its Pod keeps Shutdown.
    objects.push(vm("relabelled", m, m, "Always", None));
    objects.extend(running("relabelled", m, Some("Shutdown"), None, "True"));
    // The template differs from the VM: the VM's value wins, everywhere.
    objects.push(vm("template-differs", Some("Shutdown"), m, "Always", None));
    objects.extend(running("template-differs", m, m, None, "True"));
    // An invalid value: reported only, nothing of it changed.
    objects.push(vm(
        "invalid",
        Some("migrate"),
        Some("migrate"),
        "Always",
        None,
    ));
    objects.extend(running("invalid", m, m, None, "True"));
    // Not running, no label.
    objects.push(vm("stopped", None, None, "Halted", None));
    objects.push(vm("in-line", m, m, "Always", None));
    objects.extend(running("in-line", m, m, None, "True"));
    // Stale LiveMigrate (the CR now says LiveMigrateIfPossible), not migratable: restarted.
    for (name, run) in [
        ("stale-a", "Always"),
        ("stale-b", "RerunOnFailure"),
        ("stale-c", "Manual"),
    ] {
        objects.push(vm(name, m, m, run, None));
        objects.extend(running(name, m, m, Some("LiveMigrate"), "False"));
    }
    // KubeVirt refuses these; a migratable one needs no restart; the VM's own LiveMigrate is
    // not stale.
    objects.push(vm("stale-once", m, m, "Once", None));
    objects.extend(running("stale-once", m, m, Some("LiveMigrate"), "False"));
    objects.push(vm("stale-halted", m, m, "Halted", None));
    objects.extend(running("stale-halted", m, m, Some("LiveMigrate"), "False"));
    objects.push(vm("stale-migratable", m, m, "Always", None));
    objects.extend(running(
        "stale-migratable",
        m,
        m,
        Some("LiveMigrate"),
        "True",
    ));
    objects.push(vm("own-live-migrate", m, m, "Always", Some("LiveMigrate")));
    objects.extend(running(
        "own-live-migrate",
        m,
        m,
        Some("LiveMigrate"),
        "False",
    ));
    objects
}

/// `(kind, name, change)` of every write of a plan.
fn planned(plan: &Value) -> Vec<(String, String, String)> {
    plan["writes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| {
            let field = |f: &str| w[f].as_str().unwrap_or_default().to_owned();
            (field("kind"), field("name"), field("change"))
        })
        .collect()
}

fn owned(rows: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    rows.iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect()
}

/// The label writes of [`cluster`], VM by VM in the order of their names.
fn label_writes() -> Vec<(String, String, String)> {
    owned(&[
        (
            "Pod",
            "virt-launcher-relabelled-abcde",
            "label Shutdown -> Migrate",
        ),
        (
            "VirtualMachine",
            "stopped",
            "add label Migrate, copy Migrate to the template",
        ),
        (
            "VirtualMachine",
            "template-differs",
            "template label Migrate -> Shutdown",
        ),
        (
            "VirtualMachineInstance",
            "template-differs",
            "label Migrate -> Shutdown",
        ),
        (
            "Pod",
            "virt-launcher-template-differs-abcde",
            "label Migrate -> Shutdown",
        ),
        (
            "VirtualMachine",
            "unlabelled",
            "add label Migrate, copy Migrate to the template",
        ),
        ("VirtualMachineInstance", "unlabelled", "add label Migrate"),
        ("Pod", "virt-launcher-unlabelled-abcde", "add label Migrate"),
    ])
}

fn restart_writes(batches: &[usize]) -> Vec<(String, String, String)> {
    let count = batches.iter().max().copied().unwrap_or(0);
    ["stale-a", "stale-b", "stale-c"]
        .iter()
        .zip(batches)
        .map(|(name, batch)| {
            (
                "VirtualMachine".to_owned(),
                (*name).to_owned(),
                format!("restart (batch {batch}/{count}): evictionStrategy LiveMigrate -> LiveMigrateIfPossible (LiveMigratable=False: HostDeviceNotLiveMigratable)"),
            )
        })
        .collect()
}

fn not_changed(plan: &Value) -> Vec<String> {
    plan["notChanged"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            format!(
                "{} {}: {}",
                f["kind"].as_str().unwrap_or_default(),
                f["name"].as_str().unwrap_or_default(),
                f["message"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

/// The plan writes nothing, from the live cluster as from a file; it says what it would do,
/// what it leaves alone and why, and exits 2.
#[test]
fn the_plan_writes_nothing() {
    let server = ApiServer::start(cluster(), None);
    let (output, plan) = sync(&server, "plan", &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(server.writes().len(), 0, "{:?}", server.writes());
    assert!(server.requests().iter().all(|r| r.starts_with("GET ")));
    assert_eq!(plan["mode"], "plan");
    assert_eq!(planned(&plan), label_writes());
    assert!(
        plan["writes"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|w| w["result"].is_null())
    );
    assert_eq!(
        not_changed(&plan),
        [
            "VirtualMachine invalid: label migrate is not in allowedStrategies (Migrate, ShutdownAndRestartAfterEnable, ShutdownAndRestartAfterDisable, Shutdown): not changed, and not copied to its template, VMI or Pods (the policy keeps it too)",
            "VirtualMachine stale-a: evictionStrategy LiveMigrate on the VMI, LiveMigrateIfPossible now, LiveMigratable=False (HostDeviceNotLiveMigratable): every drain blocks on it; --restart-stale restarts it",
            "VirtualMachine stale-b: evictionStrategy LiveMigrate on the VMI, LiveMigrateIfPossible now, LiveMigratable=False (HostDeviceNotLiveMigratable): every drain blocks on it; --restart-stale restarts it",
            "VirtualMachine stale-c: evictionStrategy LiveMigrate on the VMI, LiveMigrateIfPossible now, LiveMigratable=False (HostDeviceNotLiveMigratable): every drain blocks on it; --restart-stale restarts it",
            "VirtualMachine stale-halted: evictionStrategy LiveMigrate on the VMI, LiveMigrateIfPossible now, LiveMigratable=False (HostDeviceNotLiveMigratable): every drain blocks on it; runStrategy Halted: KubeVirt refuses a restart (409); stop and start it by hand",
            "VirtualMachineInstance stale-migratable: evictionStrategy LiveMigrate on the VMI, LiveMigrateIfPossible now: not restarted (LiveMigratable=True: it migrates); it gets LiveMigrateIfPossible at its next restart",
            "VirtualMachine stale-once: evictionStrategy LiveMigrate on the VMI, LiveMigrateIfPossible now, LiveMigratable=False (HostDeviceNotLiveMigratable): every drain blocks on it; runStrategy Once: KubeVirt refuses a restart (409); stop and start it by hand",
        ]
    );
    assert_eq!(plan["labelSync"]["synced"], false);
    // The same plan from the same objects in a file.
    let file = scratch("plan-file").join("cluster.json");
    std::fs::write(
        &file,
        json!({"apiVersion": "v1", "kind": "List", "items": cluster()}).to_string(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let from_file = run(&[
        "sync",
        "-f",
        file.to_str().unwrap_or_default(),
        "-o",
        "json",
    ]);
    assert_eq!(from_file.status.code(), Some(2));
    assert_eq!(parsed(&from_file), plan);
    // The table.
    let table = run(&[
        "sync",
        "-f",
        file.to_str().unwrap_or_default(),
        "--restart-stale",
        "--batch-size",
        "2",
    ]);
    let text = stdout(&table);
    assert!(
        text.starts_with("NAMESPACE   KIND   NAME                                   CHANGE\n"),
        "{text}"
    );
    assert!(text.contains("\nteam        pod    virt-launcher-template-differs-abcde   label Migrate -> Shutdown\n"), "{text}");
    assert!(text.contains("\n11 writes: 3 VMs, 2 VMIs, 3 Pods patched; 3 VMs restarted in 2 batches of 2 every 60s. Nothing was written: --apply writes them.\n"), "{text}");
    // --apply and --dry-run=server write to the live cluster only.
    for flag in ["--apply", "--dry-run=server"] {
        let refused = run(&["sync", flag, "-f", file.to_str().unwrap_or_default()]);
        assert_eq!(refused.status.code(), Some(1), "{flag}");
        assert!(
            stderr(&refused).contains("write to the live cluster: leave out -f"),
            "{}",
            stderr(&refused)
        );
    }
}

/// Every write of `plan` as the server must have received it.
fn as_sent(plan: &Value) -> Vec<(String, String, Value)> {
    plan["writes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| {
            let method = if w["verb"] == "update" {
                "PUT"
            } else {
                "PATCH"
            };
            (
                method.to_owned(),
                w["path"].as_str().unwrap_or_default().to_owned(),
                w["body"].clone(),
            )
        })
        .collect()
}

fn received(writes: &[Recorded]) -> Vec<(String, String, Value)> {
    writes
        .iter()
        .map(|w| (w.method.clone(), w.path.clone(), w.body.clone()))
        .collect()
}

fn label_of(server: &ApiServer, kind: &str, name: &str, pointer: &str) -> Value {
    server
        .object(kind, "team", name)
        .and_then(|o| o.pointer(pointer).cloned())
        .unwrap_or(Value::Null)
}

/// `--apply` sends exactly the planned writes, in order, each a JSON patch whose `test` pins
/// what it replaces; afterwards every object holds the VM's value and a second run plans
/// nothing (exit 0).
#[test]
fn apply_makes_exactly_the_planned_writes_and_a_second_run_plans_nothing() {
    let server = ApiServer::start(cluster(), None);
    let (_, plan) = sync(&server, "apply-plan", &[]);
    let (output, applied) = sync(&server, "apply", &["--apply"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(applied["mode"], "apply");
    let writes = server.writes();
    assert_eq!(received(&writes), as_sent(&plan));
    for write in &writes {
        assert_eq!(
            write.content_type, "application/json-patch+json",
            "{write:?}"
        );
        assert!(!write.dry_run && write.query.is_empty(), "{write:?}");
        assert_eq!(write.status, 200, "{write:?}");
        let ops = write.body.as_array().cloned().unwrap_or_default();
        // Every change follows the test that pins what it replaces.
        assert!(ops.len() >= 2 && ops.len() % 2 == 0, "{write:?}");
        for pair in ops.chunks(2) {
            assert_eq!(pair[0]["op"], "test", "{write:?}");
            assert!(
                ["add", "replace"].contains(&pair[1]["op"].as_str().unwrap_or_default()),
                "{write:?}"
            );
        }
    }
    assert!(
        applied["writes"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|w| w["result"] == "done"),
        "{applied}"
    );
    // The pins: an absent labels map tested as null, an absent key by its map, a value by itself.
    let unlabelled = &plan["writes"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .find(|w| w["name"] == "unlabelled" && w["kind"] == "VirtualMachine")
        .unwrap_or_default()["body"];
    assert_eq!(
        unlabelled,
        &json!([
            {"op": "test", "path": "/metadata/labels", "value": null},
            {"op": "add", "path": "/metadata/labels", "value": {KEY: "Migrate"}},
            {"op": "test", "path": "/spec/template/metadata/labels", "value": {}},
            {"op": "add", "path": format!("/spec/template/metadata/labels/{KEY_PATH}"), "value": "Migrate"},
        ])
    );
    let label = format!("/metadata/labels/{KEY_PATH}");
    let template = format!("/spec/template/metadata/labels/{KEY_PATH}");
    for (kind, name, pointer, want) in [
        ("VirtualMachine", "unlabelled", &label, "Migrate"),
        ("VirtualMachine", "unlabelled", &template, "Migrate"),
        ("VirtualMachineInstance", "unlabelled", &label, "Migrate"),
        ("Pod", "virt-launcher-unlabelled-abcde", &label, "Migrate"),
        ("Pod", "virt-launcher-relabelled-abcde", &label, "Migrate"),
        ("VirtualMachine", "template-differs", &template, "Shutdown"),
        (
            "VirtualMachineInstance",
            "template-differs",
            &label,
            "Shutdown",
        ),
        ("VirtualMachine", "stopped", &template, "Migrate"),
        ("VirtualMachine", "invalid", &label, "migrate"),
        ("Pod", "virt-launcher-invalid-abcde", &label, "Migrate"),
    ] {
        assert_eq!(
            label_of(&server, kind, name, pointer),
            json!(want),
            "{kind} {name} {pointer}"
        );
    }
    let (again, second) = sync(&server, "again", &[]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(planned(&second), Vec::<(String, String, String)>::new());
    assert_eq!(server.writes().len(), writes.len());
    let table = run(&[
        "sync",
        "--kubeconfig",
        server
            .kubeconfig(&scratch("again-table"))
            .to_str()
            .unwrap_or_default(),
    ]);
    assert!(
        stdout(&table).starts_with("Nothing to write.\n0 writes: 0 VMs, 0 VMIs, 0 Pods patched.\n"),
        "{}",
        stdout(&table)
    );
}

/// `--dry-run=server` sends every write with `dryRun=All` (and a restart's body
/// `dryRun: ["All"]`): the server checks them, nothing changes, and the plan stays the same.
#[test]
fn a_server_side_dry_run_changes_nothing() {
    let server = ApiServer::start(cluster(), None);
    let before = server.objects();
    let args = [
        "--dry-run=server",
        "--restart-stale",
        "--batch-size",
        "2",
        "--batch-interval",
        "1h",
    ];
    let (output, plan) = sync(&server, "dry-run", &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(plan["mode"], "dryRun");
    let writes = server.writes();
    assert_eq!(writes.len(), 11);
    for write in &writes {
        assert!(write.dry_run && write.query == "dryRun=All", "{write:?}");
        if write.method == "PUT" {
            assert_eq!(write.body, json!({"dryRun": ["All"]}), "{write:?}");
            assert_eq!(write.status, 202);
        }
    }
    assert_eq!(server.objects(), before);
    let (_, again) = sync(&server, "dry-run-again", &["--restart-stale"]);
    assert_eq!(planned(&again).len(), 11);
}

/// An object changed between the read and the write is never overwritten: its patch's `test`
/// fails (422), it is reported as a conflict and the writes that depend on it are skipped;
/// an object that holds the value already counts as done.
#[test]
fn a_concurrent_change_is_not_overwritten() {
    let server = conflicting();
    let (output, plan) = sync(&server, "conflict", &["--apply"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let results: Vec<(String, String)> = plan["writes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| {
            (
                w["name"].as_str().unwrap_or_default().to_owned(),
                w["result"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("virt-launcher-relabelled-abcde", "alreadyDone"),
        ("stopped", "done"),
        ("template-differs", "done"),
        ("template-differs", "done"),
        ("virt-launcher-template-differs-abcde", "conflict"),
        ("unlabelled", "conflict"),
        ("unlabelled", "skipped"),
        ("virt-launcher-unlabelled-abcde", "skipped"),
    ]
    .iter()
    .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
    .collect();
    assert_eq!(results, want, "{plan}");
    let label = format!("/metadata/labels/{KEY_PATH}");
    assert_eq!(
        label_of(
            &server,
            "Pod",
            "virt-launcher-template-differs-abcde",
            &label
        ),
        "ShutdownAndRestartAfterEnable"
    );
    assert_eq!(
        label_of(&server, "VirtualMachine", "unlabelled", &label),
        "Shutdown"
    );
    assert_eq!(
        label_of(
            &server,
            "VirtualMachine",
            "unlabelled",
            &format!("/spec/template/metadata/labels/{KEY_PATH}")
        ),
        Value::Null
    );
    let conflicts: Vec<u16> = server.writes().iter().map(|w| w.status).collect();
    assert_eq!(
        conflicts,
        [422, 200, 200, 200, 422, 422],
        "the skipped writes are not sent"
    );
    // The table says so.
    let server = conflicting();
    let table = run(&[
        "sync",
        "--apply",
        "--kubeconfig",
        server
            .kubeconfig(&scratch("conflict-table"))
            .to_str()
            .unwrap_or_default(),
    ]);
    let text = stdout(&table);
    assert_eq!(table.status.code(), Some(2));
    assert!(text.contains("\nteam        pod    virt-launcher-template-differs-abcde   label Migrate -> Shutdown                         conflict\n"), "{text}");
    assert!(text.contains("\n8 writes: 3 VMs, 2 VMIs, 3 Pods patched: 3 done, 1 already done, 2 conflict, 2 skipped.\n"), "{text}");
    assert!(text.contains("\nConflicts (changed since read, not overwritten):\n  patch pods team/virt-launcher-template-differs-abcde: changed since read (the patch's test failed): not overwritten; run sync again to plan from what it holds now\n"), "{text}");
    assert!(text.contains("\nSkipped:\n  patch virtualmachineinstances team/unlabelled: the VM's own patch did not succeed\n"), "{text}");
}

/// The cluster, and someone who changes three objects just before `sync` writes them: the
/// template-differs Pod and the unlabelled VM to other values, the relabelled Pod to the value
/// `sync` wants.
fn conflicting() -> ApiServer {
    let server = ApiServer::start(cluster(), None);
    let pod = "/api/v1/namespaces/team/pods/virt-launcher-template-differs-abcde";
    let vm = "/apis/kubevirt.io/v1/namespaces/team/virtualmachines/unlabelled";
    let relabelled_pod = "/api/v1/namespaces/team/pods/virt-launcher-relabelled-abcde";
    server.before_write(Box::new(move |path, objects| {
        let set = |objects: &mut Vec<Value>, kind: &str, name: &str, value: &str| {
            for object in objects
                .iter_mut()
                .filter(|o| o["kind"] == kind && o["metadata"]["name"] == name)
            {
                object["metadata"]["labels"][KEY] = json!(value);
            }
        };
        if path == pod {
            set(
                objects,
                "Pod",
                "virt-launcher-template-differs-abcde",
                "ShutdownAndRestartAfterEnable",
            );
        } else if path == vm {
            set(objects, "VirtualMachine", "unlabelled", "Shutdown");
        } else if path == relabelled_pod {
            // Someone (KubeVirt's label sync, Harvester) got there first.
            set(objects, "Pod", "virt-launcher-relabelled-abcde", "Migrate");
        }
    }));
    server
}

/// `--restart-stale` restarts exactly the running VMs whose VMI keeps a stale LiveMigrate and
/// is not live-migratable, never runStrategy Halted or Once, in batches of `--batch-size`,
/// `--batch-interval` apart; the restarted VMIs carry the current strategy, and a second run
/// plans nothing.
#[test]
fn restart_stale_restarts_only_stale_non_migratable_vmis_in_batches() {
    let server = ApiServer::start(cluster(), None);
    let args = [
        "--apply",
        "--restart-stale",
        "--batch-size",
        "2",
        "--batch-interval",
        "1s",
    ];
    let (output, plan) = sync(&server, "restart", &args);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let mut want = label_writes();
    want.extend(restart_writes(&[1, 1, 2]));
    assert_eq!(planned(&plan), want);
    let restarts: Vec<Recorded> = server
        .writes()
        .into_iter()
        .filter(|w| w.method == "PUT")
        .collect();
    let paths: Vec<&str> = restarts.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        paths,
        ["stale-a", "stale-b", "stale-c"].map(|n| format!(
            "/apis/subresources.kubevirt.io/v1/namespaces/team/virtualmachines/{n}/restart"
        ))
    );
    assert!(
        restarts
            .iter()
            .all(|w| w.status == 202 && w.body == json!({}))
    );
    let gap = restarts[2].at.duration_since(restarts[1].at);
    assert!(gap >= Duration::from_secs(1), "batches {gap:?} apart");
    assert!(
        stderr(&output).contains("waiting 1s before restart batch 2"),
        "{}",
        stderr(&output)
    );
    for name in ["stale-a", "stale-b", "stale-c"] {
        assert_eq!(
            label_of(
                &server,
                "VirtualMachineInstance",
                name,
                "/spec/evictionStrategy"
            ),
            "LiveMigrateIfPossible",
            "{name}"
        );
    }
    for name in ["stale-once", "stale-halted", "stale-migratable"] {
        assert_eq!(
            label_of(
                &server,
                "VirtualMachineInstance",
                name,
                "/spec/evictionStrategy"
            ),
            "LiveMigrate",
            "{name}"
        );
    }
    let (again, second) = sync(&server, "restart-again", &["--restart-stale"]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(planned(&second), Vec::<(String, String, String)>::new());
}

/// A restart KubeVirt refuses fails its batch: no later batch is sent (exit 2).
#[test]
fn restarts_stop_at_the_first_failed_batch() {
    let server = ApiServer::start(cluster(), None);
    // Between the read and the restart, someone halts stale-b: KubeVirt answers 409.
    server.before_write(Box::new(|path, objects| {
        if path.ends_with("/virtualmachines/stale-b/restart") {
            for vm in objects
                .iter_mut()
                .filter(|o| o["kind"] == "VirtualMachine" && o["metadata"]["name"] == "stale-b")
            {
                vm["spec"]["runStrategy"] = json!("Halted");
            }
        }
    }));
    let args = [
        "--apply",
        "--restart-stale",
        "--batch-size",
        "2",
        "--batch-interval",
        "0s",
    ];
    let (output, plan) = sync(&server, "restart-fails", &args);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let restarts: Vec<(String, String)> = plan["writes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|w| w["verb"] == "update")
        .map(|w| {
            (
                w["result"].as_str().unwrap_or_default().to_owned(),
                w["message"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        restarts,
        [
            ("done".to_owned(), String::new()),
            ("failed".to_owned(), "409 Conflict: Operation cannot be fulfilled on virtualmachine.kubevirt.io \"stale-b\": RunStategy Halted does not support manual restart requests".to_owned()),
            ("skipped".to_owned(), "batch 1 failed: no later batch is sent".to_owned()),
        ]
    );
    let sent: Vec<String> = server
        .writes()
        .iter()
        .filter(|w| w.method == "PUT")
        .map(|w| w.path.clone())
        .collect();
    assert_eq!(sent.len(), 2, "{sent:?}");
}

/// 401 or 403 on a write stops the run with an error that names the verb, the resource and the
/// object (exit 1); what was done before is printed.
#[test]
fn a_refused_write_is_a_clear_error() {
    for (code, want) in [
        (
            403,
            "kubectl-vm_maintenance: patch pods team/virt-launcher-relabelled-abcde: forbidden (403): pods is forbidden: User \"test\" cannot patch resource \"pods\" in API group \"\" in the namespace \"team\"; the sync role needs it (examples/rbac/sync.yaml); nothing more was sent\n",
        ),
        (
            401,
            "kubectl-vm_maintenance: patch pods team/virt-launcher-relabelled-abcde: the API server refused the credentials (401 Unauthorized); nothing more was sent\n",
        ),
    ] {
        let server = ApiServer::start(cluster(), None);
        server.deny_writes(code);
        let (output, plan) = sync(&server, &format!("refused-{code}"), &["--apply"]);
        assert_eq!(output.status.code(), Some(1), "{code}");
        assert_eq!(stderr(&output), want, "{code}");
        assert_eq!(server.writes().len(), 1, "{code}");
        assert_eq!(plan["writes"][0]["result"], "failed", "{code}");
        assert!(plan["writes"][1]["result"].is_null(), "{code}");
    }
}

/// The KubeVirt CR that syncs the key: the plan says KubeVirt would set the VMI's and Pod's label
/// too.
#[test]
fn the_plan_says_when_kubevirt_syncs_the_label() {
    let mut objects = cluster();
    objects[0] =
        kubevirt(json!({"flags": {"controller": {"additional-launcher-labels-sync": KEY}}}));
    let server = ApiServer::start(objects, None);
    let (_, plan) = sync(&server, "synced", &[]);
    assert_eq!(plan["labelSync"]["synced"], true, "{plan}");
    for write in plan["writes"].as_array().into_iter().flatten() {
        let running = write["kind"] != "VirtualMachine";
        assert_eq!(write["kubeVirtSyncs"], running, "{write}");
        let change = write["change"].as_str().unwrap_or_default();
        assert_eq!(
            change.ends_with(" (KubeVirt's label sync would too)"),
            running,
            "{write}"
        );
    }
}

/// Live lists come in pages (limit/continue): 1,200 VMs, every one planned.
#[test]
fn lists_in_pages() {
    let mut objects = vec![kubevirt(json!({}))];
    for i in 0..1200 {
        objects.push(vm(&format!("vm-{i:04}"), None, None, "Halted", None));
    }
    let server = ApiServer::start(objects, None);
    let (output, plan) = sync(&server, "pages", &[]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(plan["writes"].as_array().map(Vec::len), Some(1200));
    let pages: Vec<String> = server
        .requests()
        .into_iter()
        .filter(|r| r.starts_with("GET /apis/kubevirt.io/v1/virtualmachines?"))
        .collect();
    assert_eq!(pages.len(), 3, "{pages:?}");
    assert!(pages[1].contains("continue=500"), "{pages:?}");
}

/// Nothing to do is exit 0; settings choose the key and the default; a bad batch interval is
/// bad input. The help names the flags and the exit codes.
#[test]
fn settings_and_exit_codes() {
    let help = stdout(&run(&["sync", "--help"]));
    for flag in [
        "--apply",
        "--dry-run <none|server>",
        "--restart-stale",
        "--batch-size <N>",
        "--batch-interval <DURATION>",
    ] {
        assert!(help.contains(flag), "{flag}: {help}");
    }
    let help = stdout(&run(&["--help"]));
    assert!(
        help.contains("Exit codes of sync:\n  0  nothing to do, or every write done\n"),
        "{help}"
    );
    let dir = scratch("settings");
    let settings = dir.join("settings.json");
    std::fs::write(&settings, r#"{"defaultStrategy": "Shutdown"}"#)
        .unwrap_or_else(|e| panic!("{e}"));
    let file = dir.join("cluster.json");
    let objects = vec![
        kubevirt(json!({})),
        vm("stopped", None, None, "Halted", None),
    ];
    std::fs::write(
        &file,
        json!({"kind": "List", "apiVersion": "v1", "items": objects}).to_string(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let output = run(&[
        "sync",
        "-f",
        file.to_str().unwrap_or_default(),
        "--settings",
        settings.to_str().unwrap_or_default(),
        "-o",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        planned(&parsed(&output)),
        owned(&[(
            "VirtualMachine",
            "stopped",
            "add label Shutdown, copy Shutdown to the template"
        )])
    );
    let empty = dir.join("empty.json");
    std::fs::write(&empty, json!({"kind": "List", "apiVersion": "v1", "items": [vm("ok", Some("Migrate"), Some("Migrate"), "Halted", None)]}).to_string())
        .unwrap_or_else(|e| panic!("{e}"));
    let output = run(&["sync", "-f", empty.to_str().unwrap_or_default()]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    for bad in [
        vec!["--batch-interval", "soon"],
        vec!["--batch-size", "0"],
        vec!["--dry-run=client"],
    ] {
        let mut args = vec!["sync", "-f", empty.to_str().unwrap_or_default()];
        args.extend(bad.iter().copied());
        let output = run(&args);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{bad:?}: {}",
            stderr(&output)
        );
    }
}

/// `(API group, resource, verb)` of a request, as RBAC names it: `list` a collection, `get` an
/// object, `patch` a PATCH, `update` a PUT (the restart subresource: `virtualmachines/restart`).
fn rbac(request: &str) -> Option<(String, String, String)> {
    let (method, url) = request.split_once(' ')?;
    let path = url.split('?').next()?;
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let (group, rest) = match parts.as_slice() {
        ["api", "v1", rest @ ..] => ("", rest),
        ["apis", group, _, rest @ ..] => (*group, rest),
        _ => return None,
    };
    let rest = match rest {
        ["namespaces", _, rest @ ..] if !rest.is_empty() => rest,
        rest => rest,
    };
    let (resource, verb) = match (method, rest) {
        ("GET", [plural]) => ((*plural).to_owned(), "list"),
        ("GET", [plural, _]) => ((*plural).to_owned(), "get"),
        ("PATCH", [plural, _]) => ((*plural).to_owned(), "patch"),
        ("PUT", [plural, _, sub]) => (format!("{plural}/{sub}"), "update"),
        _ => return None,
    };
    Some((group.to_owned(), resource, verb.to_owned()))
}

/// What a ClusterRole of `examples/rbac/` grants, one `(group, resource, verb)` each.
fn granted(file: &str) -> std::collections::BTreeSet<(String, String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/rbac")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let role: Value = serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(role["kind"], "ClusterRole", "{file}");
    assert_eq!(role["apiVersion"], "rbac.authorization.k8s.io/v1", "{file}");
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    };
    let mut all = std::collections::BTreeSet::new();
    for rule in role["rules"].as_array().into_iter().flatten() {
        for group in strings(&rule["apiGroups"]) {
            for resource in strings(&rule["resources"]) {
                for verb in strings(&rule["verbs"]) {
                    all.insert((group.clone(), resource.clone(), verb));
                }
            }
        }
    }
    all
}

/// examples/rbac grants exactly what the commands ask of the API server: the previews (and
/// `status`) `get` and `list` on every kind they list (and nothing else); `sync` `get`, `list` and `patch` on what
/// it reads and writes, and `update` on `virtualmachines/restart`; every other kind it may not
/// list is skipped without a note.
#[test]
fn the_rbac_examples_grant_what_the_commands_use() {
    let server = ApiServer::start(cluster(), None);
    let kubeconfig = server.kubeconfig(&scratch("rbac"));
    let kubeconfig = kubeconfig.to_str().unwrap_or_default();
    for command in [
        vec!["drain"],
        vec!["maintenance", "node-1"],
        vec!["upgrade"],
        vec!["status", "node-1"],
    ] {
        let mut args = command.clone();
        args.extend(["--kubeconfig", kubeconfig, "-o", "json"]);
        run(&args);
    }
    let previews: std::collections::BTreeSet<_> =
        server.requests().iter().filter_map(|r| rbac(r)).collect();
    assert!(
        previews.iter().all(|(_, _, verb)| verb == "list"),
        "{previews:?}"
    );
    let read = granted("previews.yaml");
    let lists: std::collections::BTreeSet<_> = read
        .iter()
        .filter(|(_, _, v)| v == "list")
        .cloned()
        .collect();
    assert_eq!(
        lists, previews,
        "previews.yaml lists exactly what the previews list"
    );
    assert!(read.iter().all(|(g, r, v)| v == "list"
        || (v == "get" && read.contains(&(g.clone(), r.clone(), "list".to_owned())))));

    // sync: its reads, a conflict read again, every kind of write.
    let server = conflicting();
    let kubeconfig = server.kubeconfig(&scratch("rbac-sync"));
    let output = run(&[
        "sync",
        "--apply",
        "--restart-stale",
        "--batch-interval",
        "0s",
        "--kubeconfig",
        kubeconfig.to_str().unwrap_or_default(),
    ]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let used: std::collections::BTreeSet<_> = server
        .requests()
        .iter()
        .filter_map(|r| rbac(r))
        .filter(|(group, resource, _)| {
            // The kinds only the previews read: listed, and skipped when forbidden.
            [
                "kubevirts",
                "virtualmachines",
                "virtualmachineinstances",
                "pods",
                "virtualmachines/restart",
            ]
            .contains(&resource.as_str())
                && ["", "kubevirt.io", "subresources.kubevirt.io"].contains(&group.as_str())
        })
        .collect();
    let mut needed = used.clone();
    // A VMI is read again after a conflict too (this run has none).
    needed.insert((
        "kubevirt.io".to_owned(),
        "virtualmachineinstances".to_owned(),
        "get".to_owned(),
    ));
    assert!(
        used.contains(&("".to_owned(), "pods".to_owned(), "get".to_owned())),
        "{used:?}"
    );
    assert!(
        used.contains(&(
            "subresources.kubevirt.io".to_owned(),
            "virtualmachines/restart".to_owned(),
            "update".to_owned()
        )),
        "{used:?}"
    );
    assert_eq!(granted("sync.yaml"), needed);
    // With only that role, the previews' other kinds are forbidden: sync says nothing of them.
    let server = ApiServer::forbidding(cluster(), None, Some("nodes"));
    let (output, _) = sync(&server, "rbac-forbidden", &[]);
    assert!(!stderr(&output).contains("nodes"), "{}", stderr(&output));
}
