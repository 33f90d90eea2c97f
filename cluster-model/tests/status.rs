//! `status`: one cluster per cause, the cause and its evidence, natively (docs/status.md).

use cluster_model::drain::DrainOutcome;
use cluster_model::status::{
    Cause, Diagnosis, NodeCause, Objects, UpdateCause, diagnose, selector_matches, upgrade_status,
};
use rstest::rstest;
use serde_json::{Value, json};

const NODE: &str = "node-01";
/// 2026-12-08T01:00:00Z.
const NOW: i64 = 1_796_691_600;

/// The objects of one case; `diagnose` reads them as a cluster.
#[derive(Default)]
struct Cluster {
    vms: Vec<Value>,
    vmis: Vec<Value>,
    pods: Vec<Value>,
    migrations: Vec<Value>,
    pdbs: Vec<Value>,
    replicas: Vec<Value>,
    kubevirt: Option<Value>,
}

impl Cluster {
    fn objects(&self) -> Objects<'_> {
        Objects {
            vms: &self.vms,
            vmis: &self.vmis,
            pods: &self.pods,
            migrations: &self.migrations,
            pdbs: &self.pdbs,
            replicas: &self.replicas,
            kubevirt: self.kubevirt.as_ref(),
            now: NOW,
        }
    }

    fn diagnose(&self) -> Diagnosis {
        diagnose(NODE, &self.objects())
    }
}

fn vm(run_strategy: &str, label: Option<&str>) -> Value {
    let mut vm = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
        "metadata": {"name": "vm", "namespace": "team"},
        "spec": {"runStrategy": run_strategy}});
    if let Some(label) = label {
        vm["metadata"]["labels"] = json!({"harvesterhci.io/maintain-mode-strategy": label});
    }
    vm
}

/// A VMI on the node: its own strategy, `LiveMigratable` status, evacuation mark.
fn vmi(strategy: Option<&str>, migratable: &str, mark: Option<&str>) -> Value {
    let mut vmi = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
        "metadata": {"name": "vm", "namespace": "team", "uid": "vmi-uid"},
        "spec": {},
        "status": {"phase": "Running", "nodeName": NODE, "conditions": [
            {"type": "LiveMigratable", "status": migratable, "reason": "DisksNotLiveMigratable",
             "lastTransitionTime": "2026-12-08T00:00:00Z"}]}});
    if let Some(strategy) = strategy {
        vmi["spec"]["evictionStrategy"] = json!(strategy);
    }
    if let Some(mark) = mark {
        vmi["status"]["evacuationNodeName"] = json!(mark);
    }
    vmi
}

fn pod(name: &str, node: &str, labels: Value) -> Value {
    let mut all = json!({"kubevirt.io": "virt-launcher", "harvesterhci.io/vmName": "vm"});
    if let (Some(all), Some(more)) = (all.as_object_mut(), labels.as_object()) {
        all.extend(more.clone());
    }
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "team", "labels": all,
                     "creationTimestamp": "2026-12-08T00:58:00Z",
                     "ownerReferences": [{"kind": "VirtualMachineInstance", "name": "vm", "controller": true}]},
        "spec": {"nodeName": node},
        "status": {"phase": "Running"}})
}

fn migration(name: &str, phase: &str, created: &str) -> Value {
    json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
        "metadata": {"name": name, "namespace": "team", "uid": format!("{name}-uid"),
                     "creationTimestamp": created,
                     "annotations": {"kubevirt.io/evacuationMigration": NODE}},
        "spec": {"vmiName": "vm"},
        "status": {"phase": phase, "phaseTransitionTimestamps": [
            {"phase": phase, "phaseTransitionTimestamp": created}],
            "migrationState": {"failureReason": "target pod is down"}}})
}

fn kubevirt(strategy: &str) -> Value {
    json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"configuration": {"evictionStrategy": strategy}}})
}

fn one(cluster: &Cluster) -> (Cause, Option<DrainOutcome>, String, Vec<String>) {
    let diagnosis = cluster.diagnose();
    assert_eq!(diagnosis.vms.len(), 1, "{diagnosis:?}");
    let vm = &diagnosis.vms[0];
    (vm.cause, vm.fate, vm.why.clone(), vm.evidence.clone())
}

fn running(strategy: Option<&str>, migratable: &str, mark: Option<&str>) -> Cluster {
    Cluster {
        vms: vec![vm("Always", None)],
        vmis: vec![vmi(strategy, migratable, mark)],
        pods: vec![pod("virt-launcher-vm-a", NODE, json!({}))],
        ..Cluster::default()
    }
}

#[rstest]
#[case::live_migrate_not_migratable(Some("LiveMigrate"), "False", None, Cause::NotMigratable)]
#[case::external(Some("External"), "True", Some(NODE), Cause::WaitingForExternal)]
#[case::marked_no_migration_yet(Some("LiveMigrate"), "True", Some(NODE), Cause::MigrationQueued)]
#[case::not_reached_yet(Some("LiveMigrateIfPossible"), "True", None, Cause::AwaitingEviction)]
#[case::if_possible_not_migratable(Some("LiveMigrateIfPossible"), "False", None, Cause::Evicting)]
#[case::none(Some("None"), "True", None, Cause::Evicting)]
#[case::mark_from_another_node(
    Some("LiveMigrate"),
    "True",
    Some("node-09"),
    Cause::EvacuationMarkStale
)]
fn the_eviction_as_virt_api_answers_it(
    #[case] strategy: Option<&str>,
    #[case] migratable: &str,
    #[case] mark: Option<&str>,
    #[case] want: Cause,
) {
    let (cause, _, why, _) = one(&running(strategy, migratable, mark));
    assert_eq!(cause, want, "{why}");
}

#[test]
fn not_migratable_says_since_when_and_why() {
    let diagnosis = running(Some("LiveMigrate"), "False", None).diagnose();
    let vm = &diagnosis.vms[0];
    assert_eq!(vm.since.as_deref(), Some("2026-12-08T00:00:00Z"));
    assert_eq!(vm.seconds, Some(3600));
    assert_eq!(
        vm.evidence,
        [
            "VirtualMachineInstance team/vm eviction strategy LiveMigrate (the VMI's spec.evictionStrategy)",
            "VirtualMachineInstance team/vm status.conditions[LiveMigratable]=False/DisksNotLiveMigratable",
        ]
    );
    assert!(diagnosis.holds_for_good());
}

#[test]
fn the_cluster_strategy_when_the_vmi_has_none_and_none_without_either() {
    let mut cluster = running(None, "False", None);
    cluster.kubevirt = Some(kubevirt("LiveMigrate"));
    assert_eq!(one(&cluster).0, Cause::NotMigratable);
    cluster.kubevirt = None;
    let (cause, fate, why, _) = one(&cluster);
    assert_eq!(
        (cause, fate),
        (Cause::Evicting, Some(DrainOutcome::Restart))
    );
    assert!(
        why.starts_with("None: virt-api lets the eviction through"),
        "{why}"
    );
}

#[rstest]
#[case::always("Always", DrainOutcome::Restart)]
#[case::rerun_on_failure("RerunOnFailure", DrainOutcome::MayStayOff)]
#[case::manual("Manual", DrainOutcome::StaysOff)]
fn evicting_says_the_run_strategy_fate(#[case] run: &str, #[case] want: DrainOutcome) {
    let mut cluster = running(Some("None"), "True", None);
    cluster.vms = vec![vm(run, None)];
    assert_eq!(one(&cluster).1, Some(want));
}

#[test]
fn migrations_queued_running_unschedulable_failing() {
    let mut cluster = running(Some("LiveMigrate"), "True", Some(NODE));
    cluster.migrations = vec![migration("m1", "Pending", "2026-12-08T00:59:00Z")];
    let (cause, _, why, _) = one(&cluster);
    assert_eq!(cause, Cause::MigrationQueued);
    assert!(why.contains("at most 5 migrations in the cluster"), "{why}");

    cluster.migrations = vec![migration("m1", "Running", "2026-12-08T00:59:00Z")];
    assert_eq!(one(&cluster).0, Cause::Migrating);

    let mut target = pod(
        "virt-launcher-vm-b",
        "node-02",
        json!({"kubevirt.io/migrationJobUID": "m1-uid"}),
    );
    target["status"] = json!({"phase": "Pending", "conditions": [{"type": "PodScheduled",
        "status": "False", "reason": "Unschedulable", "message": "0/3 nodes are available"}]});
    cluster.pods.push(target);
    cluster.migrations = vec![migration("m1", "Scheduling", "2026-12-08T00:59:00Z")];
    let (cause, _, why, _) = one(&cluster);
    assert_eq!(cause, Cause::TargetUnschedulable);
    assert!(why.contains("0/3 nodes are available"), "{why}");
    cluster.pods.pop();

    cluster.migrations = vec![
        migration("m3", "Pending", "2026-12-08T00:59:00Z"),
        migration("m2", "Failed", "2026-12-08T00:58:00Z"),
        migration("m1", "Failed", "2026-12-08T00:57:00Z"),
        migration("m0", "Succeeded", "2026-12-08T00:50:00Z"),
        migration("old", "Failed", "2026-12-08T00:40:00Z"),
    ];
    let (cause, _, why, evidence) = one(&cluster);
    assert_eq!(cause, Cause::MigrationFailing);
    assert!(why.starts_with("2 migration(s) failed since the last success (the last: target pod is down); KubeVirt waits 40 s"), "{why}");
    assert!(
        evidence
            .iter()
            .any(|e| e.contains("team/m2 status.phase=Failed")),
        "{evidence:?}"
    );
}

#[test]
fn extra_launcher_pods() {
    let mut cluster = running(Some("LiveMigrate"), "True", Some(NODE));
    cluster
        .pods
        .push(pod("virt-launcher-vm-old", "node-02", json!({})));
    let (cause, _, why, _) = one(&cluster);
    assert_eq!(cause, Cause::ExtraLauncherPods);
    assert!(why.starts_with("2 launcher Pods run for the VMI"), "{why}");
    // A finished Pod does not count.
    cluster.pods[1]["status"]["phase"] = json!("Succeeded");
    assert_eq!(one(&cluster).0, Cause::MigrationQueued);
}

#[test]
fn harvester_labels() {
    let mut cluster = running(Some("LiveMigrate"), "True", None);
    cluster.pods = vec![pod(
        "virt-launcher-vm-a",
        NODE,
        json!({"harvesterhci.io/maintain-mode-strategy": "Shutdown"}),
    )];
    assert_eq!(one(&cluster).0, Cause::ShutdownByMaintenance);

    cluster.pods = vec![pod("virt-launcher-vm-a", NODE, json!({}))];
    cluster.vms = vec![vm("Always", Some("ShutdownAndRestartAfterEnable"))];
    let (cause, _, why, evidence) = one(&cluster);
    assert_eq!(cause, Cause::LabelOnlyOnVM);
    assert!(why.contains("is drained as Migrate"), "{why}");
    assert_eq!(
        evidence[0],
        "VirtualMachine team/vm labels.harvesterhci.io/maintain-mode-strategy=ShutdownAndRestartAfterEnable"
    );
}

#[test]
fn vmis_elsewhere_or_finished_are_not_listed() {
    let mut cluster = running(Some("LiveMigrate"), "False", None);
    cluster.vmis[0]["status"]["nodeName"] = json!("node-02");
    assert!(cluster.diagnose().vms.is_empty());
    cluster.vmis[0]["status"]["nodeName"] = json!(NODE);
    cluster.vmis[0]["status"]["phase"] = json!("Succeeded");
    let diagnosis = cluster.diagnose();
    assert!(diagnosis.vms.is_empty() && !diagnosis.holds_for_good());
}

fn pdb(name: &str, allowed: i64, labels: Value) -> Value {
    json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "team"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": labels}},
        "status": {"disruptionsAllowed": allowed}})
}

fn replica(name: &str, node: &str, volume: &str, healthy: bool) -> Value {
    json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Replica",
        "metadata": {"name": name, "namespace": "longhorn-system"},
        "spec": {"nodeID": node, "volumeName": volume,
                 "healthyAt": if healthy { "2026-12-01T00:00:00Z" } else { "" }, "failedAt": ""}})
}

#[test]
fn budgets_over_the_nodes_pods() {
    let mut cluster = running(Some("LiveMigrate"), "True", None);
    cluster.pods.push(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "db-0", "namespace": "team", "labels": {"app": "db"}},
        "spec": {"nodeName": NODE}, "status": {"phase": "Running"}}));
    cluster.pdbs = vec![
        pdb("db", 0, json!({"app": "db"})),
        pdb("web", 0, json!({"app": "web"})),
        pdb("db-loose", 1, json!({"app": "db"})),
    ];
    let findings = cluster.diagnose().node_findings;
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(
        (findings[0].cause, findings[0].object.as_str()),
        (NodeCause::PodDisruptionBudget, "team/db")
    );
    assert!(cluster.diagnose().holds_for_good());
}

#[test]
fn longhorns_budget_for_a_last_healthy_replica() {
    let mut cluster = running(Some("LiveMigrate"), "True", None);
    let labels = json!({"longhorn.io/component": "instance-manager"});
    cluster.pods.push(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "instance-manager-abc", "namespace": "team", "labels": labels},
        "spec": {"nodeName": NODE}, "status": {"phase": "Running"}}));
    cluster.pdbs = vec![pdb("instance-manager-abc", 0, labels)];
    cluster.replicas = vec![
        replica("r1", NODE, "pvc-1", true),
        replica("r2", "node-02", "pvc-1", false),
        replica("r3", NODE, "pvc-2", true),
        replica("r4", "node-02", "pvc-2", true),
    ];
    let findings = cluster.diagnose().node_findings;
    assert_eq!(findings[0].cause, NodeCause::LastHealthyReplica);
    assert!(
        findings[0]
            .evidence
            .iter()
            .any(|e| e.starts_with("Replica longhorn-system/r1 spec.volumeName=pvc-1")),
        "{:?}",
        findings[0].evidence
    );
    assert!(!findings[0].evidence.iter().any(|e| e.contains("r3")));
    // Every volume healthy elsewhere: a budget like any other.
    cluster.replicas.truncate(0);
    assert_eq!(
        cluster.diagnose().node_findings[0].cause,
        NodeCause::PodDisruptionBudget
    );
}

#[rstest]
#[case::match_labels(json!({"matchLabels": {"app": "db"}}), true)]
#[case::other_value(json!({"matchLabels": {"app": "web"}}), false)]
#[case::in_(json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}), true)]
#[case::not_in(json!({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["b"]}]}), false)]
#[case::exists(json!({"matchExpressions": [{"key": "app", "operator": "Exists"}]}), true)]
#[case::does_not_exist(json!({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}), false)]
#[case::unknown_operator(json!({"matchExpressions": [{"key": "app", "operator": "Gt"}]}), false)]
#[case::empty(json!({}), true)]
fn label_selectors(#[case] selector: Value, #[case] want: bool) {
    let labels = json!({"app": "db", "tier": "b"});
    assert_eq!(selector_matches(&selector, labels.as_object()), want);
}

fn updater(methods: &[&str]) -> cluster_model::upgrade::Updater {
    let cr = json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
        "spec": {"workloadUpdateStrategy": {"workloadUpdateMethods": methods},
                 "configuration": {"evictionStrategy": "LiveMigrate"}},
        "status": {"phase": "Deployed", "observedDeploymentID": "a", "targetDeploymentID": "b"}});
    cluster_model::upgrade::Updater::of(Some(&cr)).unwrap_or_else(|e| panic!("{e}"))
}

#[rstest]
#[case::migratable_is_queued(&["LiveMigrate"], Some("LiveMigrate"), "True", UpdateCause::UpdateQueued)]
#[case::without_evict_never(&["LiveMigrate"], Some("LiveMigrateIfPossible"), "False", UpdateCause::NeverUpdated)]
#[case::live_migrate_refused(&["LiveMigrate", "Evict"], Some("LiveMigrate"), "False", UpdateCause::EvictionRefused)]
#[case::none_evicted(&["LiveMigrate", "Evict"], Some("None"), "False", UpdateCause::WillBeEvicted)]
fn the_updaters_work(
    #[case] methods: &[&str],
    #[case] strategy: Option<&str>,
    #[case] migratable: &str,
    #[case] want: UpdateCause,
) {
    let mut cluster = running(strategy, migratable, None);
    cluster.vmis[0]["metadata"]["labels"] = json!({"kubevirt.io/outdatedLauncherImage": ""});
    let status = upgrade_status(&cluster.objects(), &updater(methods));
    assert_eq!(status.vmis.len(), 1, "{status:?}");
    assert_eq!(status.vmis[0].cause, want, "{}", status.vmis[0].why);
    assert!(
        !status.updater_active,
        "observed and target deployments differ"
    );
    assert_eq!(status.holds_for_good(), want.holds_for_good());
    // Not outdated: not listed.
    cluster.vmis[0]["metadata"]["labels"] = json!({});
    assert!(
        upgrade_status(&cluster.objects(), &updater(methods))
            .vmis
            .is_empty()
    );
}

#[test]
fn an_update_migration_under_way_or_queued() {
    let mut cluster = running(Some("LiveMigrate"), "True", None);
    cluster.vmis[0]["metadata"]["labels"] = json!({"kubevirt.io/outdatedLauncherImage": ""});
    cluster.migrations = vec![migration("u1", "Pending", "2026-12-08T00:59:00Z")];
    let status = upgrade_status(&cluster.objects(), &updater(&["LiveMigrate"]));
    assert_eq!(status.vmis[0].cause, UpdateCause::UpdateQueued);
    cluster.migrations = vec![migration("u1", "Running", "2026-12-08T00:59:00Z")];
    let status = upgrade_status(&cluster.objects(), &updater(&["LiveMigrate"]));
    assert_eq!(status.vmis[0].cause, UpdateCause::UpdateMigrating);
}

/// Objects of the wrong shapes are read as absent, never a panic: the VMI on the node is still
/// diagnosed, by what reads.
#[test]
fn odd_objects_are_read_as_absent() {
    let mut cluster = running(Some("LiveMigrate"), "False", None);
    cluster.vmis[0]["status"]["conditions"] = json!({"type": "LiveMigratable"});
    cluster.vmis[0]["status"]["evacuationNodeName"] = json!(7);
    cluster
        .vmis
        .push(json!({"kind": "VirtualMachineInstance", "status": "Running"}));
    cluster.vmis.push(json!([1, 2]));
    cluster.pods.push(
        json!({"metadata": {"labels": "x", "ownerReferences": {}}, "spec": {"nodeName": NODE}}),
    );
    cluster.migrations = vec![
        json!({"metadata": {"namespace": "team"}, "spec": {"vmiName": "vm"}, "status": {"phase": 3}}),
        json!({"metadata": {"namespace": "team", "creationTimestamp": "not a time"},
               "spec": {"vmiName": "vm"}, "status": {"phase": "Failed",
               "phaseTransitionTimestamps": {"phase": "Failed"}}}),
    ];
    cluster.pdbs = vec![
        json!({"metadata": {"namespace": "team"}, "spec": {"selector": {"matchLabels": {"a": 1},
               "matchExpressions": "x"}}, "status": {"disruptionsAllowed": 0}}),
        json!({"spec": {"selector": []}, "status": {"disruptionsAllowed": "0"}}),
    ];
    cluster.replicas = vec![json!({"spec": {"nodeID": NODE, "healthyAt": 1}})];
    cluster.kubevirt = Some(
        json!({"spec": {"configuration": {"evictionStrategy": ["LiveMigrate"],
        "migrations": {"parallelMigrationsPerCluster": "many"}}}}),
    );
    let diagnosis = cluster.diagnose();
    assert_eq!(diagnosis.vms.len(), 1, "{diagnosis:?}");
    // An unfinished migration whose phase does not read: unset, as a new one (queued).
    assert_eq!(diagnosis.vms[0].cause, Cause::MigrationQueued);
    assert!(
        diagnosis.node_findings.is_empty(),
        "{:?}",
        diagnosis.node_findings
    );
    let status = upgrade_status(&cluster.objects(), &updater(&["LiveMigrate"]));
    assert!(status.vmis.is_empty());
}
