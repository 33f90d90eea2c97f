//! `status`: drains in progress diagnosed from `examples/status-drain.json` (node-01 cordoned
//! with Harvester's drain-requested: a VM refused forever, one migrating, one queued, one
//! evicted that may stay off, a stale evacuation mark, a budget allowing no disruption; node-04
//! in Harvester's maintenance: every other cause and Longhorn's budget; outdated VMIs for
//! `--upgrade`), from the file and from the loopback API server; every cause natively too, in
//! cluster-model's `tests/status.rs`.

mod harness;

use harness::apiserver::ApiServer;
use harness::{parsed, run_piped, scratch_of, stderr, stdout, workspace};
use serde_json::{Value, json};

fn dump_path() -> String {
    workspace()
        .join("examples/status-drain.json")
        .to_string_lossy()
        .into_owned()
}

fn dump() -> Vec<Value> {
    let text = std::fs::read_to_string(dump_path()).unwrap_or_default();
    let list: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    list["items"].as_array().cloned().unwrap_or_default()
}

/// `name: cause[/fate]` of every VM of a diagnosis.
fn causes(diagnosis: &Value) -> Vec<String> {
    diagnosis["vms"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|vm| {
            let fate = vm["fate"]
                .as_str()
                .map(|f| format!("/{f}"))
                .unwrap_or_default();
            format!(
                "{}: {}{fate}",
                vm["name"].as_str().unwrap_or("?"),
                vm["cause"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

/// The diagnosis without `seconds`, which grow while the tests run.
fn timeless(mut value: Value) -> Value {
    if let Some(vms) = value["vms"].as_array_mut() {
        for vm in vms {
            if let Some(vm) = vm.as_object_mut() {
                vm.remove("seconds");
            }
        }
    }
    value
}

#[test]
fn a_node_from_the_file() {
    let file = dump_path();
    let output = run_piped(&["status", "node-01", "-f", &file, "-o", "json"], None);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let diagnosis = parsed(&output);
    assert_eq!(diagnosis["node"], "node-01");
    assert_eq!(
        causes(&diagnosis),
        [
            "batch: Evicting/MayStayOff",
            "db: NotMigratable",
            "legacy: EvacuationMarkStale",
            "queued: MigrationQueued",
            "web: Migrating",
        ],
        "the VM that left the node (moved) is not listed"
    );
    let db = &diagnosis["vms"][1];
    assert_eq!(db["since"], "2026-12-07T22:00:00Z");
    assert!(db["seconds"].as_i64().is_some_and(|s| s > 0), "{db}");
    assert_eq!(
        db["evidence"],
        json!([
            "VirtualMachineInstance team/db eviction strategy LiveMigrate (the VMI's spec.evictionStrategy)",
            "VirtualMachineInstance team/db status.conditions[LiveMigratable]=False/HostDeviceNotLiveMigratable"
        ])
    );
    assert_eq!(
        diagnosis["nodeFindings"],
        json!([{
            "cause": "PodDisruptionBudget",
            "object": "team/db-exporter",
            "why": "the budget allows no disruption now: the eviction of db-exporter-0 is refused until it does",
            "evidence": ["PodDisruptionBudget team/db-exporter status.disruptionsAllowed=0", "Pod team/db-exporter-0 spec.nodeName=node-01"],
            "action": "wait for the budget's other Pods to be ready, or change the budget (minAvailable / maxUnavailable)"
        }])
    );

    let table = run_piped(&["status", "node-01", "-f", &file], None);
    let text = stdout(&table);
    assert!(
        text.starts_with("NAMESPACE   NAME     CAUSE                 FOR      WHY\n"),
        "{text}"
    );
    assert!(
        text.contains("\nteam        db       NotMigratable "),
        "{text}"
    );
    assert!(
        text.contains("\nNode:\n  PodDisruptionBudget team/db-exporter: "),
        "{text}"
    );
    assert!(text.contains("\nWhat to do:\n  team/batch: wait"), "{text}");
}

/// node-04, in Harvester's maintenance: the causes of migrations and of Harvester's labels, and
/// Longhorn's budget for a last healthy replica.
#[test]
fn every_other_cause_through_the_plugin() {
    let file = dump_path();
    let output = run_piped(&["status", "node-04", "-f", &file, "-o", "json"], None);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let diagnosis = parsed(&output);
    assert_eq!(
        causes(&diagnosis),
        [
            "ext: WaitingForExternal",
            "failing: MigrationFailing",
            "halted: ShutdownByMaintenance",
            "labelonly: LabelOnlyOnVM",
            "twopods: ExtraLauncherPods",
            "unsched: TargetUnschedulable",
        ]
    );
    let finding = &diagnosis["nodeFindings"][0];
    assert_eq!(
        (finding["cause"].as_str(), finding["object"].as_str()),
        (
            Some("LastHealthyReplica"),
            Some("longhorn-system/instance-manager-4a1f")
        )
    );
    let why = diagnosis["vms"][3]["why"].as_str().unwrap_or_default();
    assert!(
        why.ends_with("KubeVirt creates it when a slot is free (2 run now))"),
        "every migration counts: {why}"
    );
}

#[test]
fn exit_codes_and_every_node_being_drained() {
    let file = dump_path();
    let exit = |args: &[&str]| run_piped(args, None).status.code();
    // node-02: a migratable VM the drain has not reached (it is not being drained: 3, it holds
    // a VM); node-03 holds none.
    assert_eq!(exit(&["status", "node-02", "-f", &file]), Some(3));
    let empty = run_piped(&["status", "node-03", "-f", &file], None);
    assert_eq!(empty.status.code(), Some(0));
    assert!(
        stdout(&empty).starts_with("no VM runs on node node-03 any more\n"),
        "{}",
        stdout(&empty)
    );

    let all = run_piped(&["status", "-f", &file, "-o", "json"], None);
    assert_eq!(all.status.code(), Some(2));
    let nodes = parsed(&all);
    let names: Vec<&str> = nodes["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["node"].as_str())
        .collect();
    assert_eq!(
        names,
        ["node-01", "node-04"],
        "only the nodes being drained"
    );

    let unknown = run_piped(&["status", "node-09", "-f", &file], None);
    assert_eq!(unknown.status.code(), Some(1));
    assert_eq!(
        stderr(&unknown),
        "kubectl-vm_maintenance: node node-09 is not in the input (nodes read: node-01, node-02, node-03, node-04)\n"
    );
    let namespaced = run_piped(&["status", "node-01", "-n", "team", "-f", &file], None);
    assert_eq!(namespaced.status.code(), Some(1));
    assert!(
        stderr(&namespaced).contains("-n team: status reads every namespace"),
        "{}",
        stderr(&namespaced)
    );
}

#[test]
fn live_reads_what_the_file_holds() {
    let dir = scratch_of("status", "live");
    let server = ApiServer::start(dump(), None);
    let kubeconfig = server.kubeconfig(&dir);
    let kubeconfig = kubeconfig.to_string_lossy();
    let file = dump_path();
    for node in ["node-01", "node-04"] {
        let args = ["status", node, "--kubeconfig", &kubeconfig, "-o", "json"];
        let live = run_piped(&args, None);
        let from_file = run_piped(&["status", node, "-f", &file, "-o", "json"], None);
        assert_eq!(live.status.code(), Some(2), "{node}: {}", stderr(&live));
        assert_eq!(
            timeless(parsed(&live)),
            timeless(parsed(&from_file)),
            "{node}"
        );
    }
    let requests = server.requests();
    for path in [
        "GET /apis/kubevirt.io/v1/virtualmachineinstancemigrations?limit=500",
        "GET /apis/policy/v1/poddisruptionbudgets?limit=500",
        "GET /api/v1/pods?labelSelector=kubevirt.io%21%3Dvirt-launcher&fieldSelector=spec.nodeName%3Dnode-01&limit=500",
    ] {
        assert!(requests.iter().any(|r| r == path), "{path} in {requests:?}");
    }
    assert!(
        requests.iter().all(|r| r.starts_with("GET ")),
        "reads only: {requests:?}"
    );
}

#[test]
fn the_upgrade_from_the_file_and_live() {
    let file = dump_path();
    let output = run_piped(&["status", "--upgrade", "-f", &file, "-o", "json"], None);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let status = parsed(&output);
    let causes: Vec<String> = status["vmis"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| {
            format!(
                "{}: {}",
                v["name"].as_str().unwrap_or("?"),
                v["cause"].as_str().unwrap_or("?")
            )
        })
        .collect();
    assert_eq!(
        causes,
        [
            "batch: WillBeEvicted",
            "db: EvictionRefused",
            "moved: UpdateQueued",
            "web: UpdateMigrating",
        ],
        "only the VMIs labelled outdated"
    );
    assert_eq!(status["vmis"][0]["fate"], "MayStayOff");
    assert_eq!(status["outdatedWorkloads"], 4);
    assert_eq!(status["updaterActive"], true);

    let dir = scratch_of("status", "upgrade-live");
    let server = ApiServer::start(dump(), None);
    let kubeconfig = server.kubeconfig(&dir);
    let kubeconfig = kubeconfig.to_string_lossy();
    let live = run_piped(
        &[
            "status",
            "--upgrade",
            "--kubeconfig",
            &kubeconfig,
            "-o",
            "json",
        ],
        None,
    );
    assert_eq!(parsed(&live), status, "{}", stderr(&live));
    assert!(
        server
            .requests()
            .iter()
            .all(|r| !r.contains("poddisruptionbudgets") && !r.contains("fieldSelector")),
        "the upgrade reads no budget and no node's Pods: {:?}",
        server.requests()
    );
    let both = run_piped(&["status", "--upgrade", "node-01", "-f", &file], None);
    assert_eq!(both.status.code(), Some(1));
    assert!(
        stderr(&both).contains("'--upgrade' cannot be used with '[NODE]'"),
        "{}",
        stderr(&both)
    );
}
