//! What follows an eviction without migration (docs/rules.md R1-R10): the VM's runStrategy as
//! KubeVirt reads it, crossed with every eviction strategy and migratable or not, through the
//! drain (`drain_outcome`) and the workload updater (`upgrade::decide`); and a disk only the
//! drained node can mount.

use cluster_model::Object;
use cluster_model::drain::{DrainOutcome, drain_outcome};
use cluster_model::restart::{Disks, RunStrategy, after_eviction, node_bound};
use cluster_model::upgrade::{UpdateOutcome, Updater, decide};
use serde_json::{Value, json};
use vm_maintenance_strategy::strategy::EvictionStrategy;

/// A VM's `spec` run fields, what KubeVirt reads of them (value, field), and what an eviction
/// without migration leads to.
fn run_strategies() -> Vec<(
    Option<Value>,
    Option<&'static str>,
    &'static str,
    DrainOutcome,
)> {
    use DrainOutcome::*;
    let spec = |spec: Value| Some(json!({"spec": spec}));
    vec![
        (
            spec(json!({"runStrategy": "Always"})),
            Some("Always"),
            "spec.runStrategy",
            Restart,
        ),
        (
            spec(json!({"runStrategy": "RerunOnFailure"})),
            Some("RerunOnFailure"),
            "spec.runStrategy",
            MayStayOff,
        ),
        (
            spec(json!({"runStrategy": "Manual"})),
            Some("Manual"),
            "spec.runStrategy",
            StaysOff,
        ),
        (
            spec(json!({"runStrategy": "Once"})),
            Some("Once"),
            "spec.runStrategy",
            StaysOff,
        ),
        (
            spec(json!({"runStrategy": "Halted"})),
            Some("Halted"),
            "spec.runStrategy",
            StaysOff,
        ),
        (
            spec(json!({"runStrategy": "WaitAsReceiver"})),
            Some("WaitAsReceiver"),
            "spec.runStrategy",
            StaysOff,
        ),
        (
            spec(json!({"runStrategy": "always"})),
            Some("always"),
            "spec.runStrategy",
            StaysOff,
        ),
        (
            spec(json!({"runStrategy": 1})),
            Some("1"),
            "spec.runStrategy",
            StaysOff,
        ),
        (
            spec(json!({"running": true})),
            Some("Always"),
            "spec.running",
            Restart,
        ),
        (
            spec(json!({"running": false})),
            Some("Halted"),
            "spec.running",
            StaysOff,
        ),
        (
            spec(json!({"running": true, "runStrategy": null})),
            Some("Always"),
            "spec.running",
            Restart,
        ),
        (spec(json!({})), Some("Halted"), "default", StaysOff),
        (
            spec(json!({"running": true, "runStrategy": "Always"})),
            None,
            "both",
            StaysOff,
        ),
        (None, None, "noVm", StaysOff),
    ]
}

const STRATEGIES: [&str; 4] = ["LiveMigrate", "LiveMigrateIfPossible", "None", "External"];

/// The drain, by eviction strategy and migratability; `None`: evicted without migration, the
/// runStrategy decides. No external controller.
fn drained(strategy: &str, migratable: bool) -> Option<DrainOutcome> {
    match (strategy, migratable) {
        ("LiveMigrate", true) | ("LiveMigrateIfPossible", true) => Some(DrainOutcome::Migrate),
        ("LiveMigrate", false) | ("External", _) => Some(DrainOutcome::Blocks),
        _ => None,
    }
}

/// The workload updater with `Evict` only, by the same.
fn updated(strategy: &str, migratable: bool) -> Option<UpdateOutcome> {
    match (strategy, migratable) {
        ("LiveMigrate", true) | ("LiveMigrateIfPossible", true) => Some(UpdateOutcome::Migrate),
        ("LiveMigrate", false) => Some(UpdateOutcome::Blocks),
        ("External", _) => Some(UpdateOutcome::Evacuate),
        _ => None,
    }
}

fn update_outcome(drain: DrainOutcome) -> UpdateOutcome {
    match drain {
        DrainOutcome::Restart => UpdateOutcome::Restart,
        DrainOutcome::MayStayOff => UpdateOutcome::MayStayOff,
        _ => UpdateOutcome::StaysOff,
    }
}

fn vmi(strategy: &str, migratable: bool) -> Value {
    let status = if migratable { "True" } else { "False" };
    json!({"metadata": {"namespace": "team", "name": "vm"},
           "spec": {"evictionStrategy": strategy},
           "status": {"phase": "Running", "nodeName": "node-1",
                      "conditions": [{"type": "LiveMigratable", "status": status, "reason": "HostDeviceNotLiveMigratable"}]}})
}

#[test]
fn run_strategy_by_eviction_strategy_by_migratability() {
    let updater = Updater {
        live_migrate: false,
        evict: true,
        ..Updater::of(None).unwrap_or_else(|e| panic!("{e}"))
    };
    let mut cases = 0;
    for (vm, value, field, evicted) in run_strategies() {
        let run = RunStrategy::of(vm.as_ref());
        assert_eq!((run.value.as_deref(), run.field), (value, field), "{vm:?}");
        for strategy in STRATEGIES {
            for migratable in [true, false] {
                let case = format!("{vm:?} {strategy} migratable={migratable}");
                let reasons: &[&str] = if migratable { &[] } else { &["GPU gpu1"] };
                let decision = drain_outcome(
                    &Object::new(),
                    &EvictionStrategy::parse(strategy),
                    reasons,
                    false,
                    &after_eviction(&run, None),
                );
                let want = drained(strategy, migratable).unwrap_or(evicted);
                assert_eq!(decision.outcome, want, "drain {case}: {}", decision.reason);
                let update = decide(&vmi(strategy, migratable), vm.as_ref(), &updater);
                let want = updated(strategy, migratable).unwrap_or(update_outcome(evicted));
                assert_eq!(update.outcome, want, "upgrade {case}: {:?}", update.reasons);
                let read = update.run_strategy.as_ref().map(|r| r.field);
                let evicted_without_migration = updated(strategy, migratable).is_none();
                assert_eq!(read, evicted_without_migration.then_some(field), "{case}");
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 14 * 4 * 2);
}

/// The words of each outcome, as the previews print them (docs/rules.md R1-R9).
#[test]
fn reasons_in_words() {
    let reason = |spec: Value| {
        let vm = json!({"spec": spec});
        let decision = drain_outcome(
            &Object::new(),
            &EvictionStrategy::None,
            &[] as &[&str],
            false,
            &after_eviction(&RunStrategy::of(Some(&vm)), None),
        );
        decision.reason
    };
    let cases = [
        (
            json!({"runStrategy": "Always"}),
            "None: evicted without migration; runStrategy Always (spec.runStrategy): KubeVirt starts it again",
        ),
        (
            json!({"runStrategy": "RerunOnFailure"}),
            "None: evicted without migration; runStrategy RerunOnFailure (spec.runStrategy): it stays off after a clean guest shutdown (VMI Succeeded), and is started again only if the VMI fails (the guest outlasts its grace period or crashes)",
        ),
        (
            json!({"runStrategy": "Manual"}),
            "None: evicted without migration; runStrategy Manual (spec.runStrategy): it stays off until someone starts it (virtctl start)",
        ),
        (
            json!({"runStrategy": "Once"}),
            "None: evicted without migration; runStrategy Once (spec.runStrategy): it has run once, it stays off",
        ),
        (
            json!({"running": false}),
            "None: evicted without migration; runStrategy Halted (spec.running: false): it stays off",
        ),
        (
            json!({"running": true}),
            "None: evicted without migration; runStrategy Always (spec.running: true): KubeVirt starts it again",
        ),
        (
            json!({}),
            "None: evicted without migration; runStrategy Halted (neither spec.runStrategy nor spec.running): it stays off",
        ),
        (
            json!({"running": true, "runStrategy": "Always"}),
            "None: evicted without migration; spec.running and spec.runStrategy are both set: KubeVirt cannot read the VM's runStrategy and starts nothing",
        ),
        (
            json!({"runStrategy": "WaitAsReceiver"}),
            "None: evicted without migration; runStrategy WaitAsReceiver (spec.runStrategy): KubeVirt does not start an evicted VMI of this runStrategy again",
        ),
    ];
    for (spec, want) in cases {
        assert_eq!(reason(spec.clone()), want, "{spec}");
    }
    let no_vm = after_eviction(&RunStrategy::of(None), None);
    assert_eq!(
        (no_vm.outcome, no_vm.reason.as_str()),
        (
            DrainOutcome::StaysOff,
            "no VirtualMachine owns the VMI: nothing starts it again"
        )
    );
}

/// A case of R10: its name, the VMI's claim volume, the Nodes known, the node drained, and the
/// words (`None`: not bound).
type BoundCase<'a> = (&'a str, Value, &'a [Value], &'a str, Option<&'a str>);

fn local_pv(name: &str, affinity: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
           "spec": {"nodeAffinity": {"required": affinity}}})
}

fn hostname_in(values: &[&str]) -> Value {
    json!({"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": values}]}]})
}

fn node(name: &str, zone: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name,
           "labels": {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}}})
}

/// R10: the claims of the running VMI, bound to a PersistentVolume that only the drained node
/// can mount.
#[test]
fn a_disk_only_the_drained_node_can_mount() {
    let claims = vec![
        json!({"metadata": {"namespace": "team", "name": "root"}, "spec": {"volumeName": "pv-local"}}),
        json!({"metadata": {"namespace": "team", "name": "dv"}, "spec": {"volumeName": "pv-by-name"}}),
        json!({"metadata": {"namespace": "team", "name": "zonal"}, "spec": {"volumeName": "pv-zone"}}),
        json!({"metadata": {"namespace": "team", "name": "shared"}, "spec": {"volumeName": "pv-two"}}),
        json!({"metadata": {"namespace": "team", "name": "unbound"}, "spec": {}}),
        json!({"metadata": {"namespace": "other", "name": "elsewhere"}, "spec": {"volumeName": "pv-local"}}),
        json!({"metadata": {"namespace": "team", "name": "broken"}, "spec": {"volumeName": "pv-broken"}}),
    ];
    let volumes = vec![
        local_pv("pv-local", hostname_in(&["node-1"])),
        local_pv(
            "pv-by-name",
            json!({"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}),
        ),
        local_pv(
            "pv-zone",
            json!({"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["a"]}]}]}),
        ),
        local_pv("pv-two", hostname_in(&["node-1", "node-2"])),
        local_pv(
            "pv-broken",
            json!({"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "Gt", "values": ["x"]}]}]}),
        ),
    ];
    let nodes = vec![node("node-1", "a"), node("node-2", "b")];
    let only_node_1 = vec![node("node-1", "a")];
    let vmi = |volume: Value| {
        json!({"metadata": {"namespace": "team", "name": "vm"}, "spec": {"volumes": [
        {"name": "cloudinit", "cloudInitNoCloud": {"userData": "x"}}, volume]}})
    };
    let claim = |name: &str| json!({"name": "disk", "persistentVolumeClaim": {"claimName": name}});
    let bound =
        "claim root is bound to PersistentVolume pv-local, which only node node-1 can mount";
    let cases: [BoundCase; 10] = [
        (
            "hostname In [node-1]",
            claim("root"),
            &nodes,
            "node-1",
            Some(bound),
        ),
        (
            "another node drained",
            claim("root"),
            &nodes,
            "node-2",
            None,
        ),
        (
            "no nodes known: by hostname",
            claim("root"),
            &[],
            "node-1",
            Some(bound),
        ),
        (
            "a DataVolume's claim, by metadata.name",
            json!({"name": "disk", "dataVolume": {"name": "dv"}}),
            &nodes,
            "node-1",
            Some(
                "claim dv is bound to PersistentVolume pv-by-name, which only node node-1 can mount",
            ),
        ),
        (
            "a zone that one node of two has",
            claim("zonal"),
            &nodes,
            "node-1",
            Some(
                "claim zonal is bound to PersistentVolume pv-zone, which only node node-1 can mount",
            ),
        ),
        (
            "a zone, no nodes known: not by name",
            claim("zonal"),
            &[],
            "node-1",
            None,
        ),
        (
            "a zone, the only node known",
            claim("zonal"),
            &only_node_1,
            "node-1",
            Some(
                "claim zonal is bound to PersistentVolume pv-zone, which only node node-1 can mount",
            ),
        ),
        (
            "two nodes can mount it",
            claim("shared"),
            &nodes,
            "node-1",
            None,
        ),
        ("an unbound claim", claim("unbound"), &nodes, "node-1", None),
        (
            "an affinity that cannot be parsed",
            claim("broken"),
            &nodes,
            "node-1",
            None,
        ),
    ];
    for (name, volume, nodes, drained, want) in cases {
        let disks = Disks::new(&claims, &volumes, nodes);
        assert_eq!(
            node_bound(&vmi(volume), drained, &disks).as_deref(),
            want,
            "{name}"
        );
    }
    let disks = Disks::new(&claims, &volumes, &nodes);
    let missing = json!({"metadata": {"namespace": "team", "name": "vm"}, "spec": {"volumes": [claim("nowhere")]}});
    assert_eq!(node_bound(&missing, "node-1", &disks), None);
    assert_eq!(node_bound(&json!({}), "node-1", &disks), None);
}

/// R10 on each runStrategy: a VM that would start again is down until the node is back; one that
/// stays off stays off, the disk named.
#[test]
fn a_bound_disk_by_run_strategy() {
    let bound =
        "claim root is bound to PersistentVolume pv-local, which only node node-1 can mount";
    let cases = [
        (
            "Always",
            DrainOutcome::DownUntilNodeReturns,
            "runStrategy Always (spec.runStrategy): KubeVirt starts it again; but claim root is bound to PersistentVolume pv-local, which only node node-1 can mount: it cannot start elsewhere, it stays down until the node is back",
        ),
        (
            "RerunOnFailure",
            DrainOutcome::DownUntilNodeReturns,
            "runStrategy RerunOnFailure (spec.runStrategy): it stays off after a clean guest shutdown (VMI Succeeded), and is started again only if the VMI fails (the guest outlasts its grace period or crashes); but claim root is bound to PersistentVolume pv-local, which only node node-1 can mount: it cannot start elsewhere, it stays down until the node is back",
        ),
        (
            "Manual",
            DrainOutcome::StaysOff,
            "runStrategy Manual (spec.runStrategy): it stays off until someone starts it (virtctl start); claim root is bound to PersistentVolume pv-local, which only node node-1 can mount",
        ),
    ];
    for (run, outcome, reason) in cases {
        let vm = json!({"spec": {"runStrategy": run}});
        let got = after_eviction(&RunStrategy::of(Some(&vm)), Some(bound));
        assert_eq!(
            (got.outcome, got.reason.as_str()),
            (outcome, reason),
            "{run}"
        );
    }
}
