//! `upgrade`: the workload updater's decision per running VMI, and the whole update, natively.

use UpdateOutcome::*;
use cluster_model::upgrade::{Completion, UpdateOutcome, Updater, decide, preview};
use rstest::rstest;
use serde_json::{Value, json};
use vm_maintenance_strategy::strategy::EvictionStrategy;

const BOTH: &[&str] = &["LiveMigrate", "Evict"];
const EVICT: &[&str] = &["Evict"];
const MIGRATE_ONLY: &[&str] = &["LiveMigrate"];
const NO_METHOD: &[&str] = &[];
const MIGRATABLE: Option<&str> = Some("True");
const NOT_MIGRATABLE: Option<&str> = Some("False");
const NO_CONDITION: Option<&str> = None;

fn kubevirt(methods: &[&str], cluster: Option<&str>) -> Value {
    json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
           "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
           "spec": {"workloadUpdateStrategy": {"workloadUpdateMethods": methods},
                    "configuration": {"evictionStrategy": cluster}}})
}

fn vmi(name: &str, own: Option<&str>, condition: Option<&str>) -> Value {
    let conditions = match condition {
        Some(status) => {
            json!([{"type": "LiveMigratable", "status": status, "reason": "HostDeviceNotLiveMigratable"}])
        }
        None => json!([]),
    };
    json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
           "metadata": {"name": name, "namespace": "team", "labels": {"kubevirt.io/nodeName": "n1"}},
           "spec": {"evictionStrategy": own},
           "status": {"phase": "Running", "nodeName": "n1", "conditions": conditions}})
}

fn vm(name: &str, own: Option<&str>) -> Value {
    json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
           "metadata": {"name": name, "namespace": "team"},
           "spec": {"runStrategy": "Always", "template": {"spec": {"evictionStrategy": own}}}})
}

/// One VMI's case: the update methods, the cluster's strategy, the VMI's own and its
/// `LiveMigratable` condition, its VM's own strategy.
struct Given {
    methods: &'static [&'static str],
    cluster: Option<&'static str>,
    own: Option<&'static str>,
    condition: Option<&'static str>,
    vm_own: Option<&'static str>,
}

fn given(
    methods: &'static [&'static str],
    cluster: Option<&'static str>,
    own: Option<&'static str>,
    condition: Option<&'static str>,
    vm_own: Option<&'static str>,
) -> Given {
    Given {
        methods,
        cluster,
        own,
        condition,
        vm_own,
    }
}

/// What the updater decides of it: the outcome, the words, the strategy after a restart.
struct Want {
    outcome: UpdateOutcome,
    reason: &'static str,
    after_restart: Option<&'static str>,
}

fn want(outcome: UpdateOutcome, reason: &'static str, after_restart: Option<&'static str>) -> Want {
    Want {
        outcome,
        reason,
        after_restart,
    }
}

/// One VMI: what is given, what the updater decides.
#[rstest]
#[case::migratable_is_live_migrated(
    given(BOTH, None, Some("LiveMigrate"), MIGRATABLE, None),
    want(
        Migrate,
        "workloadUpdateMethods has LiveMigrate and the VMI is migratable: live-migrated, at most 5 at a time",
        None
    )
)]
#[case::live_migrate_not_migratable_blocks_forever(
    given(BOTH, None, Some("LiveMigrate"), NOT_MIGRATABLE, None),
    want(
        Blocks,
        "evicted in a batch: LiveMigrate, LiveMigratable=False (HostDeviceNotLiveMigratable): the eviction is refused (429) at every batch, forever",
        None
    )
)]
#[case::the_cluster_strategy_when_the_vmi_has_none(
    given(EVICT, Some("LiveMigrate"), None, NO_CONDITION, None),
    want(
        Blocks,
        "evicted in a batch: LiveMigrate, no LiveMigratable condition: not migratable: the eviction is refused (429) at every batch, forever",
        None
    )
)]
#[case::if_possible_not_migratable_restarts(
    given(
        BOTH,
        None,
        Some("LiveMigrateIfPossible"),
        NOT_MIGRATABLE,
        Some("LiveMigrateIfPossible")
    ),
    want(
        Restart,
        "evicted in a batch: LiveMigrateIfPossible, LiveMigratable=False (HostDeviceNotLiveMigratable): stopped; runStrategy Always (spec.runStrategy): KubeVirt starts it again",
        Some("LiveMigrateIfPossible")
    )
)]
#[case::none_restarts_under_the_cluster_strategy_after(
    given(EVICT, Some("LiveMigrateIfPossible"), Some("None"), MIGRATABLE, None),
    want(
        Restart,
        "evicted in a batch: None: stopped; runStrategy Always (spec.runStrategy): KubeVirt starts it again",
        Some("LiveMigrateIfPossible")
    )
)]
#[case::no_strategy_restarts(
    given(EVICT, None, None, NOT_MIGRATABLE, None),
    want(
        Restart,
        "evicted in a batch: no eviction strategy: stopped; runStrategy Always (spec.runStrategy): KubeVirt starts it again",
        None
    )
)]
#[case::evict_only_migratable_is_migrated_by_the_webhook(
    given(EVICT, None, Some("LiveMigrate"), MIGRATABLE, None),
    want(
        Migrate,
        "evicted in a batch: LiveMigrate and migratable: marked for evacuation and migrated",
        None
    )
)]
#[case::external_is_evacuated(
    given(EVICT, None, Some("External"), MIGRATABLE, None),
    want(
        Evacuate,
        "evicted in a batch: External: marked for evacuation (429), an external controller must move it",
        None
    )
)]
#[case::without_evict_a_non_migratable_stays(
    given(
        MIGRATE_ONLY,
        None,
        Some("LiveMigrateIfPossible"),
        NOT_MIGRATABLE,
        None
    ),
    want(
        StaysOutdated,
        "LiveMigratable=False (HostDeviceNotLiveMigratable), and workloadUpdateMethods lacks Evict: it stays on the old launcher",
        None
    )
)]
#[case::no_method_no_update(
    given(NO_METHOD, None, Some("LiveMigrate"), MIGRATABLE, None),
    want(
        StaysOutdated,
        "workloadUpdateMethods holds neither LiveMigrate nor Evict: no automated update, it stays on the old launcher",
        None
    )
)]
fn one_vmi(#[case] given: Given, #[case] want: Want) {
    let updater = Updater::of(Some(&kubevirt(given.methods, given.cluster))).expect("an updater");
    let vmi = vmi("a", given.own, given.condition);
    let got = decide(&vmi, Some(&vm("a", given.vm_own)), &updater);
    assert_eq!(got.outcome, want.outcome);
    assert_eq!(got.reasons, [want.reason]);
    assert_eq!(
        got.after_restart,
        want.after_restart.map(EvictionStrategy::parse)
    );
    assert_eq!(got.node.as_deref(), Some("n1"));
}

#[test]
fn the_update_counts_batches_and_completion() {
    let mut cr = kubevirt(BOTH, Some("LiveMigrateIfPossible"));
    cr["spec"]["workloadUpdateStrategy"]["batchEvictionSize"] = json!(2);
    cr["spec"]["workloadUpdateStrategy"]["batchEvictionInterval"] = json!("1m30s");
    cr["spec"]["configuration"]["migrations"] = json!({"parallelMigrationsPerCluster": 3});
    let updater = Updater::of(Some(&cr)).expect("an updater");
    assert_eq!(
        (
            updater.batch_size,
            updater.interval_seconds,
            updater.parallel_migrations
        ),
        (2, 90, 3)
    );
    let mut stopped = vmi("stopped", None, MIGRATABLE);
    stopped["status"]["phase"] = json!("Succeeded");
    let vmis = vec![
        vmi("m1", None, MIGRATABLE),
        vmi("m2", None, MIGRATABLE),
        vmi("r1", None, NOT_MIGRATABLE),
        vmi("r2", None, NO_CONDITION),
        vmi("r3", Some("None"), NOT_MIGRATABLE),
        vmi("x1", Some("External"), NOT_MIGRATABLE),
        stopped,
    ];
    // r3 has no VM: nothing starts it again (R8).
    let vms = [vm("r1", None), vm("r2", None)];
    let got = preview(&vmis, &vms, &updater, false);
    let names: Vec<(&str, UpdateOutcome)> = got
        .vmis
        .iter()
        .map(|u| (u.name.as_str(), u.outcome))
        .collect();
    assert_eq!(
        names,
        [
            ("m1", Migrate),
            ("m2", Migrate),
            ("r1", Restart),
            ("r2", Restart),
            ("r3", StaysOff),
            ("x1", Evacuate)
        ]
    );
    assert_eq!((got.migrations.count, got.migrations.parallel), (2, 3));
    let e = &got.evictions;
    assert_eq!(
        (
            e.count,
            e.batch_size,
            e.interval_seconds,
            e.batches,
            e.minimum_seconds
        ),
        (4, 2, 90, 2, 90)
    );
    assert_eq!(
        got.outcome,
        Completion::NeverCompletes,
        "External without a controller"
    );
    assert_eq!(
        preview(&vmis, &[], &updater, true).outcome,
        Completion::Completes
    );
    let json = serde_json::to_value(&got).expect("json");
    assert_eq!(json["evictions"]["minimumSeconds"], 90);
    assert_eq!(json["vmis"][0]["evictionStrategy"], "LiveMigrateIfPossible");
    assert_eq!(json["outcome"], "NeverCompletes");
}

#[test]
fn updater_defaults_and_errors() {
    let updater = Updater::of(None).expect("defaults");
    assert_eq!(
        (
            updater.live_migrate,
            updater.evict,
            updater.batch_size,
            updater.interval_seconds,
            updater.parallel_migrations
        ),
        (false, false, 10, 60, 5)
    );
    let mut cr = kubevirt(EVICT, None);
    cr["spec"]["workloadUpdateStrategy"]["batchEvictionInterval"] = json!("soon");
    let error = Updater::of(Some(&cr)).expect_err("a bad duration");
    assert_eq!(
        error,
        r#"workloadUpdateStrategy.batchEvictionInterval "soon": time: invalid duration "soon""#
    );
}

/// `batchEvictionInterval` is read as Go's `time.ParseDuration` reads it: whole seconds, a
/// negative interval is 0 (the next batch is always due), Go's texts only.
#[rstest]
#[case("1m0s", Ok(60))]
#[case("1.5s", Ok(1))]
#[case("0", Ok(0))]
#[case("-1m", Ok(0))]
#[case("1h30m", Ok(5400))]
#[case("1", Err(r#""1": time: missing unit in duration "1""#))]
#[case("1d", Err(r#""1d": time: unknown unit "d" in duration "1d""#))]
#[case("1 s", Err(r#""1 s": time: unknown unit " s" in duration "1 s""#))]
fn updater_reads_go_durations(#[case] text: &str, #[case] expected: Result<u64, &str>) {
    let mut cr = kubevirt(EVICT, None);
    cr["spec"]["workloadUpdateStrategy"]["batchEvictionInterval"] = json!(text);
    let got = Updater::of(Some(&cr)).map(|updater| updater.interval_seconds);
    let expected =
        expected.map_err(|e| format!("workloadUpdateStrategy.batchEvictionInterval {e}"));
    assert_eq!(got, expected);
}

/// U10: a VMI waiting for a live update gets the same outcome, says so, and lists the conditions
/// (any `HotVCPUChange`, the others only `True`); a pending volume migration is migrated even
/// when the VMI is not migratable.
#[test]
fn pending_live_updates_take_the_same_path() {
    let updater = Updater::of(Some(&kubevirt(BOTH, None))).expect("an updater");
    let mut hot = vmi("hot", Some("LiveMigrate"), NOT_MIGRATABLE);
    hot["status"]["conditions"]
        .as_array_mut()
        .expect("conditions")
        .extend([
            json!({"type": "HotVCPUChange", "status": "False"}),
            json!({"type": "HotMemoryChange", "status": "False"}),
            json!({"type": "MigrationRequired", "status": "True"}),
        ]);
    let got = decide(&hot, Some(&vm("hot", None)), &updater);
    assert_eq!(got.outcome, Blocks);
    assert_eq!(
        got.pending_live_updates,
        ["HotVCPUChange", "MigrationRequired"]
    );
    assert_eq!(
        got.reasons,
        [
            "pending live update (HotVCPUChange, MigrationRequired): applied by the same migration or eviction",
            "evicted in a batch: LiveMigrate, LiveMigratable=False (HostDeviceNotLiveMigratable): the eviction is refused (429) at every batch, forever",
        ]
    );
    let json = serde_json::to_value(&got).expect("JSON");
    assert_eq!(
        json["pendingLiveUpdates"],
        json!(["HotVCPUChange", "MigrationRequired"])
    );

    let mut volumes = vmi("volumes", Some("LiveMigrate"), NOT_MIGRATABLE);
    volumes["status"]["conditions"]
        .as_array_mut()
        .expect("conditions")
        .push(json!({"type": "VolumesChange", "status": "True"}));
    volumes["status"]["migratedVolumes"] = json!([{"volumeName": "disk0"}]);
    let got = decide(&volumes, Some(&vm("volumes", None)), &updater);
    assert_eq!(got.outcome, Migrate);
    assert_eq!(
        got.reasons[1],
        "workloadUpdateMethods has LiveMigrate and a volume migration is pending (whatever LiveMigratable says): live-migrated, at most 5 at a time"
    );

    let plain = decide(&vmi("plain", None, MIGRATABLE), None, &updater);
    let json = serde_json::to_value(&plain).expect("JSON");
    assert!(
        json.get("pendingLiveUpdates").is_none(),
        "no field without a pending update: {json}"
    );
}
