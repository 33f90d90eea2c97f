//! `maintenance`: Harvester's maintenance mode, step by step, natively; one table each.
//!
//! Cases marked `DH_T:`, `ND_T:` or `NV_T:` are Harvester's own unit tests (harvester/harvester
//! master 3d63c2af: `pkg/util/drainhelper/helper_test.go`,
//! `pkg/controller/master/nodedrain/nodedrain_controller_test.go`,
//! `pkg/webhook/resources/node/validator_test.go`), their inputs and expectations re-stated;
//! cases marked `derived` follow the cited source line, not a Harvester test.

use cluster_model::drain::{DrainAction, DrainOutcome, drain_action};
use cluster_model::maintenance::{
    HA_CONTROL_PLANE_NODE, Index, LAST_HEALTHY_REPLICA, Longhorn,
    NODE_SCHEDULING_REQUIREMENTS_NOT_MET, Objects, Outcome, Restart, SINGLE_CONTROL_PLANE_NODE,
    VmRef, control_plane, last_available_node, last_healthy_replica, live_migratable_false,
    node_affinity_matches, node_ready, non_migratable, preview, scheduling_not_met,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use vm_maintenance_strategy::eviction::{Assessment, StrategySource};
use vm_maintenance_strategy::reason::{Reason, ReasonKind};
use vm_maintenance_strategy::strategy::EvictionStrategy;

/// A table row: its name, the input, what is expected.
type Case<'a, I, W> = (&'a str, I, W);

/// The VMs reported, or why Harvester's function fails.
type Reported<'a> = Result<Vec<&'a str>, &'a str>;
/// Key → VMs.
type Keyed<'a> = Vec<(&'a str, Vec<&'a str>)>;
/// Reported (`true`) or not, or Harvester's function fails.
type Scheduling = Result<bool, ()>;

const STRATEGY: &str = "harvesterhci.io/maintain-mode-strategy";

fn node(name: &str, labels: Value, annotations: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Node",
           "metadata": {"name": name, "labels": labels, "annotations": annotations},
           "spec": {}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
}

fn ready(name: &str) -> Value {
    node(name, json!({"kubernetes.io/hostname": name}), json!({}))
}

fn with(mut object: Value, pointer: &str, value: Value) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap_or(("", pointer));
    let mut at = &mut object;
    for part in parent.split('/').filter(|p| !p.is_empty()) {
        if at.get(part).is_none() {
            at[part] = json!({});
        }
        at = &mut at[part];
    }
    at[key] = value;
    object
}

/// A VMI on `node`, owned by the VM of the same name, LiveMigratable=True.
fn vmi(namespace: &str, name: &str, node: &str) -> Value {
    json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
           "metadata": {"name": name, "namespace": namespace,
                        "labels": {"kubevirt.io/nodeName": node},
                        "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "name": name}]},
           "spec": {},
           "status": {"nodeName": node, "conditions": [{"type": "LiveMigratable", "status": "True"}]}})
}

fn vm(namespace: &str, name: &str) -> Value {
    json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
           "metadata": {"name": name, "namespace": namespace, "labels": {}, "annotations": {}},
           "spec": {"runStrategy": "RerunOnFailure", "template": {"spec": {}}}})
}

fn pod(namespace: &str, vmi: &str, node: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": format!("virt-launcher-{vmi}-abcde"), "namespace": namespace, "labels": labels,
                        "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "name": vmi}]},
           "spec": {"nodeName": node}})
}

fn replica(volume: &str, node: &str, started: bool) -> Value {
    json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Replica",
           "metadata": {"name": format!("{volume}-r-{node}-{started}"), "namespace": "longhorn-system"},
           "spec": {"volumeName": volume, "nodeID": node}, "status": {"started": started}})
}

fn volume(name: &str, namespace: &str, vmi: &str) -> Value {
    json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Volume",
           "metadata": {"name": name, "namespace": "longhorn-system"},
           "status": {"kubernetesStatus": {"namespace": namespace,
               "workloadsStatus": [{"workloadName": vmi, "workloadType": "VirtualMachineInstance"}]}}})
}

/// VM references as Harvester writes them (`namespace/name`).
fn texts(vms: &[VmRef]) -> Vec<String> {
    vms.iter().map(ToString::to_string).collect()
}

fn shown(found: BTreeMap<String, Vec<VmRef>>) -> BTreeMap<String, Vec<String>> {
    found.into_iter().map(|(k, v)| (k, texts(&v))).collect()
}

fn predict_nothing(_: &Value) -> Assessment {
    Assessment {
        eviction_strategy: Some(EvictionStrategy::LiveMigrate),
        source: StrategySource::Vm,
        reasons: Vec::new(),
        warnings: Vec::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// Step 1: DrainPossible.

#[test]
fn step1_control_plane_rule() {
    // DH_T:20-57 fixtures.
    let cp1 = node(
        "cp1",
        json!({"node-role.kubernetes.io/control-plane": "true"}),
        json!({}),
    );
    let cp2 = node(
        "cp2",
        json!({"node-role.kubernetes.io/control-plane": "true", "node-role.kubernetes.io/etcd": "true"}),
        json!({}),
    );
    let cp3 = node(
        "cp3",
        json!({"node-role.kubernetes.io/etcd": "true"}),
        json!({}),
    );
    let test_node = node("testNode", json!({}), json!({}));
    let cp1_in_maintenance = with(
        cp1.clone(),
        "/metadata/annotations/harvesterhci.io~1maintain-status",
        json!("running"),
    );
    let cp1_in_maintenance = fix_tilde(cp1_in_maintenance);
    let cp_false = node(
        "cpf",
        json!({"node-role.kubernetes.io/control-plane": "false"}),
        json!({}),
    );
    let master = node(
        "m",
        json!({"node-role.kubernetes.io/master": "true"}),
        json!({}),
    );
    let all = vec![test_node.clone(), cp1.clone(), cp2.clone(), cp3.clone()];
    #[rustfmt::skip]
    let cases: Vec<(&str, Vec<Value>, &Value, Option<&str>)> = vec![
        ("DH_T:74 Test_meetsControlPlaneRequirementsHA: worker", all.clone(), &test_node, None),
        ("DH_T:82 Test_meetsControlPlaneRequirementsHA: cp2, 3 available", all.clone(), &cp2, None),
        ("DH_T:86 Test_failsControlPlaneRequirementsHA: cp1 in maintenance",
         vec![test_node.clone(), cp1_in_maintenance.clone(), cp2.clone(), cp3.clone()], &cp2, Some(HA_CONTROL_PLANE_NODE)),
        ("DH_T:106 Test_failsControlPlaneRequirementsSingleNode: cp1 not in the cache",
         vec![test_node.clone(), cp2.clone()], &cp1, Some(SINGLE_CONTROL_PLANE_NODE)),
        ("DH_T:120 Test_meetsWorkerRequirement", all.clone(), &test_node, None),
        ("derived DH:146: 2 control-plane nodes, none in maintenance",
         vec![cp1.clone(), cp2.clone()], &cp1, Some(HA_CONTROL_PLANE_NODE)),
        ("derived DH:146: 4 control-plane nodes (exactly 3, not at least 3)",
         vec![cp1.clone(), cp2.clone(), cp3.clone(), cp_false.clone()], &cp1, Some(HA_CONTROL_PLANE_NODE)),
        ("derived DH:96-131: etcd-only witness + 2 control-plane nodes",
         vec![cp1.clone(), cp2.clone(), cp3.clone(), test_node.clone()], &cp3, None),
        ("derived DH:89: control-plane=false still counts (existence)",
         vec![cp1.clone(), cp2.clone(), cp_false.clone()], &cp_false, None),
        ("derived DH:89: node-role.kubernetes.io/master is not read",
         vec![master.clone()], &master, None),
    ];
    for (name, nodes, checked, want) in cases {
        let got = control_plane(&nodes, checked);
        assert_eq!(got.as_ref().map(|r| r.reason.as_str()), want, "{name}");
        if let Some(refusal) = got {
            assert!(
                refusal
                    .message
                    .starts_with("draining of this node is not possible: "),
                "{name}: {}",
                refusal.message
            );
            assert!(refusal.vms.is_empty(), "{name}");
        }
    }
}

/// `with` writes `a~1b` keys literally; JSON pointer escaping is for reading only.
fn fix_tilde(mut node: Value) -> Value {
    if let Some(annotations) = node
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        let entries: Vec<(String, Value)> = annotations
            .iter()
            .map(|(k, v)| (k.replace("~1", "/"), v.clone()))
            .collect();
        annotations.clear();
        annotations.extend(entries);
    }
    node
}

// ---------------------------------------------------------------------------------------------
// The drain filter the steps rely on (DH_T:128-198).

#[test]
fn drain_filter_as_harvester_tests_it() {
    #[rustfmt::skip]
    let cases = [
        ("DH_T:128", json!({"harvesterhci.io/vmName": "foobar", STRATEGY: "Shutdown"}), DrainAction::Skip),
        ("DH_T:142", json!({"harvesterhci.io/vmName": "foobar", STRATEGY: "ShutdownAndRestartAfterEnable"}), DrainAction::Skip),
        ("DH_T:156", json!({"harvesterhci.io/vmName": "foobar", STRATEGY: "ShutdownAndRestartAfterDisable"}), DrainAction::Skip),
        ("DH_T:172 _Okay_1", json!({}), DrainAction::Evict),
        ("DH_T:182 _Okay_2", json!({"harvesterhci.io/vmName": "foobar", STRATEGY: "Migrate"}), DrainAction::Evict),
        ("DH_T:198 _Okay_3", json!({"harvesterhci.io/vmName": "foobar", STRATEGY: "invalid"}), DrainAction::Evict),
    ];
    for (name, labels, want) in cases {
        let labels = labels.as_object().cloned().unwrap_or_default();
        assert_eq!(drain_action(&labels), want, "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// Step 2: FindNonMigratableVMS, its three sources.

#[test]
fn step2_last_healthy_replica() {
    // ND_T:262-285: N = harvester-58rk8.
    let n = "harvester-58rk8";
    let vmis = vec![
        vmi("default", "healthy-vm", "harvester-1111"),
        vmi("default", "failing-vm", "harvester-1111"),
        vmi("default", "failing-vm2", "harvester-1111"),
    ];
    let volumes = vec![
        volume("healthy-volume", "default", "healthy-vm"),
        volume("failing-volume", "default", "failing-vm"),
        volume("failing-volume2", "default", "failing-vm2"),
    ];
    #[rustfmt::skip]
    let cases: Vec<Case<Vec<Value>, Reported>> = vec![
        ("ND_T:31-101 healthy-volume: 3 started replicas", vec![
            replica("healthy-volume", n, true), replica("healthy-volume", "harvester-1111", true),
            replica("healthy-volume", "harvester-2222", true)], Ok(vec![])),
        ("ND_T:110-180 failing-volume: the only started replica on N", vec![
            replica("failing-volume", n, true), replica("failing-volume", "harvester-1111", false),
            replica("failing-volume", "harvester-2222", false)], Ok(vec!["default/failing-vm"])),
        ("ND_T:189-259 failing-volume2: the only started replica elsewhere", vec![
            replica("failing-volume2", "harvester-1111", true), replica("failing-volume2", "harvester-1111", false),
            replica("failing-volume2", "harvester-2222", false)], Ok(vec![])),
        ("derived ND:329-337: (N, started) alone", vec![replica("failing-volume", n, true)],
         Ok(vec!["default/failing-vm"])),
        ("derived ND:329-337: (N, not started) alone: 0 started, not selected",
         vec![replica("failing-volume", n, false)], Ok(vec![])),
        ("derived ND:318: (N, started) + (other, started, rebuilding) hides it", vec![
            replica("failing-volume", n, true), replica("failing-volume", "harvester-1111", true)], Ok(vec![])),
        ("derived ND:341-345: volume missing from longhorn-system", vec![replica("nowhere", n, true)],
         Err("volume longhorn-system/nowhere not found")),
    ];
    for (name, replicas, want) in cases {
        let objects = Objects {
            vmis: &vmis,
            ..Objects::default()
        };
        let index = Index::new(&objects);
        let longhorn = Longhorn {
            volumes: &volumes,
            replicas: &replicas,
        };
        let got = last_healthy_replica(n, longhorn, &index).map(|vms| texts(&vms));
        let want = want
            .map(|v| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())
            .map_err(str::to_owned);
        assert_eq!(got, want, "{name}");
    }
    // ND:286-289 / 361-364: the workload VMI missing, or owner-less, fails the whole function.
    let replicas = vec![replica("failing-volume", n, true)];
    let owner_less = vec![with(
        vmi("default", "failing-vm", "harvester-1111"),
        "/metadata/ownerReferences",
        json!([]),
    )];
    for (name, vmis, want) in [
        (
            "derived ND:287: VMI not found",
            vec![],
            "volume failing-volume: VirtualMachineInstance default/failing-vm not found",
        ),
        (
            "derived ND:361-364: no VM owner",
            owner_less,
            "no valid VM owner found for VMI failing-vm",
        ),
    ] {
        let objects = Objects {
            vmis: &vmis,
            ..Objects::default()
        };
        let index = Index::new(&objects);
        let longhorn = Longhorn {
            volumes: &volumes,
            replicas: &replicas,
        };
        assert_eq!(
            last_healthy_replica(n, longhorn, &index),
            Err(want.to_owned()),
            "{name}"
        );
    }
}

#[test]
fn step2_live_migratable_false() {
    let cond = |status: Option<&str>, reason: &str| {
        let mut v = vmi("ns", "v", "n");
        v["status"]["conditions"] = match status {
            Some(s) => json!([{"type": "LiveMigratable", "status": s, "reason": reason}]),
            None => json!([]),
        };
        v
    };
    #[rustfmt::skip]
    let cases: Vec<Case<Value, Keyed>> = vec![
        ("derived ND:415: False, DisksNotLiveMigratable", cond(Some("False"), "DisksNotLiveMigratable"),
         vec![("DisksNotLiveMigratable", vec!["ns/v"])]),
        ("derived ND:415: False without reason: key \"\"", cond(Some("False"), ""), vec![("", vec!["ns/v"])]),
        ("derived ND:415: Unknown is migratable", cond(Some("Unknown"), "X"), vec![]),
        ("derived ND:415: True", cond(Some("True"), ""), vec![]),
        ("derived ND:415: no condition is migratable", cond(None, ""), vec![]),
    ];
    for (name, v, want) in cases {
        let got = shown(live_migratable_false(&[&v]));
        let want: std::collections::BTreeMap<String, Vec<String>> = want
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
            .collect();
        assert_eq!(got, want, "{name}");
    }
}

#[test]
fn step2_scheduling_requirements() {
    // ND_T:287-633: VMI on harvester-kfs2c, affinity mgmt In [true], nodeSelector hostname.
    let mgmt = |name: &str| {
        node(
            name,
            json!({"kubernetes.io/hostname": name, "network.harvesterhci.io/mgmt": "true"}),
            json!({}),
        )
    };
    let nodes = vec![
        mgmt("harvester-kfs2c"),
        mgmt("harvester-qhgd4"),
        mgmt("harvester-rmvzg"),
    ];
    let affinity = |terms: Value| json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}});
    let mgmt_in = affinity(
        json!([{"matchExpressions": [{"key": "network.harvesterhci.io/mgmt", "operator": "In", "values": ["true"]}]}]),
    );
    let base = with(
        vmi("default", "vm", "harvester-kfs2c"),
        "/spec/affinity",
        mgmt_in.clone(),
    );
    let pinned = with(
        base.clone(),
        "/spec/nodeSelector",
        json!({"kubernetes.io/hostname": "harvester-kfs2c"}),
    );
    let not_ready = |name: &str| with(mgmt(name), "/status/conditions", json!([]));
    let unschedulable = |name: &str| with(mgmt(name), "/spec/unschedulable", json!(true));
    let ready_false = |name: &str| {
        with(
            mgmt(name),
            "/status/conditions",
            json!([{"type": "Ready", "status": "False"}]),
        )
    };
    #[rustfmt::skip]
    let cases: Vec<(&str, Vec<Value>, Value, Scheduling)> = vec![
        ("ND_T:624-627 as is: nodeSelector pins it to N", nodes.clone(), pinned.clone(), Ok(true)),
        ("ND_T:628-631 affinity nil: the nodeSelector alone", nodes.clone(),
         with(pinned.clone(), "/spec/affinity", Value::Null), Ok(true)),
        ("derived ND:463-465: affinity only, other mgmt nodes", nodes.clone(), base.clone(), Ok(false)),
        ("derived NA: NotIn [x] where no other node has the key", nodes.clone(),
         with(base.clone(), "/spec/affinity", affinity(json!([{"matchExpressions": [{"key": "gpu", "operator": "NotIn", "values": ["x"]}]}]))), Ok(false)),
        ("derived NA:60-64: nodeSelectorTerms [{}] matches nothing", nodes.clone(),
         with(base.clone(), "/spec/affinity", affinity(json!([{}]))), Ok(true)),
        ("derived NA: nodeSelectorTerms [] matches nothing", nodes.clone(),
         with(base.clone(), "/spec/affinity", affinity(json!([]))), Ok(true)),
        ("derived ND:495-506: the others unschedulable / Ready=False / no Ready",
         vec![mgmt("harvester-kfs2c"), unschedulable("a"), ready_false("b"), not_ready("c")], base.clone(), Ok(true)),
        ("derived ND:453-456: an unknown operator is an error, not a refusal", nodes.clone(),
         with(base.clone(), "/spec/affinity", affinity(json!([{"matchExpressions": [{"key": "a", "operator": "Near", "values": ["x"]}]}]))), Err(())),
        ("derived ND:453-456: the error even without a candidate", vec![mgmt("harvester-kfs2c")],
         with(base.clone(), "/spec/affinity", affinity(json!([{"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["x"]}]}]))), Err(())),
    ];
    for (name, nodes, v, want) in cases {
        let got = scheduling_not_met("harvester-kfs2c", &nodes, &[&v]);
        let got = got.map(|found| {
            assert!(texts(&found).iter().all(|f| f == "default/vm"), "{name}");
            !found.is_empty()
        });
        assert_eq!(got.map_err(|_| ()), want, "{name}");
    }
}

#[test]
fn node_affinity_semantics() {
    let node = node(
        "worker-1",
        json!({"zone": "a", "cores": "16", "gpu": "", "bad": "x"}),
        json!({}),
    );
    let term =
        |expressions: Value| json!({"nodeSelectorTerms": [{"matchExpressions": expressions}]});
    let fields = |fields: Value| json!({"nodeSelectorTerms": [{"matchFields": fields}]});
    let e =
        |key: &str, op: &str, values: Value| json!({"key": key, "operator": op, "values": values});
    #[rustfmt::skip]
    let cases: Vec<(&str, Value, Result<bool, ()>)> = vec![
        ("In hit", term(json!([e("zone", "In", json!(["a", "b"]))])), Ok(true)),
        ("In miss", term(json!([e("zone", "In", json!(["b"]))])), Ok(false)),
        ("In absent", term(json!([e("rack", "In", json!(["b"]))])), Ok(false)),
        ("In without values", term(json!([e("zone", "In", json!([]))])), Err(())),
        ("NotIn hit", term(json!([e("zone", "NotIn", json!(["a"]))])), Ok(false)),
        ("NotIn absent label matches", term(json!([e("rack", "NotIn", json!(["a"]))])), Ok(true)),
        ("Exists with empty value", term(json!([e("gpu", "Exists", json!(null))])), Ok(true)),
        ("Exists with values", term(json!([e("gpu", "Exists", json!(["x"]))])), Err(())),
        ("DoesNotExist", term(json!([e("gpu", "DoesNotExist", json!([]))])), Ok(false)),
        ("DoesNotExist absent", term(json!([e("rack", "DoesNotExist", json!([]))])), Ok(true)),
        ("Gt", term(json!([e("cores", "Gt", json!(["8"]))])), Ok(true)),
        ("Gt equal", term(json!([e("cores", "Gt", json!(["16"]))])), Ok(false)),
        ("Lt", term(json!([e("cores", "Lt", json!(["32"]))])), Ok(true)),
        ("Gt on a non-integer label", term(json!([e("bad", "Gt", json!(["1"]))])), Ok(false)),
        ("Gt on an absent label", term(json!([e("rack", "Gt", json!(["1"]))])), Ok(false)),
        ("Gt with two values", term(json!([e("cores", "Gt", json!(["1", "2"]))])), Err(())),
        ("Lt with a non-integer value", term(json!([e("cores", "Lt", json!(["x"]))])), Err(())),
        ("expressions ANDed", term(json!([e("zone", "In", json!(["a"])), e("cores", "Gt", json!(["64"]))])), Ok(false)),
        ("terms ORed", json!({"nodeSelectorTerms": [
            {"matchExpressions": [e("zone", "In", json!(["b"]))]},
            {"matchExpressions": [e("zone", "In", json!(["a"]))]}]}), Ok(true)),
        ("an empty term next to a matching one", json!({"nodeSelectorTerms": [{}, {"matchExpressions": [e("zone", "In", json!(["a"]))]}]}), Ok(true)),
        ("a bad term fails even when another matches", json!({"nodeSelectorTerms": [
            {"matchExpressions": [e("zone", "In", json!(["a"]))]},
            {"matchExpressions": [e("zone", "Like", json!(["a"]))]}]}), Err(())),
        ("matchFields metadata.name In", fields(json!([e("metadata.name", "In", json!(["worker-1"]))])), Ok(true)),
        ("matchFields metadata.name NotIn", fields(json!([e("metadata.name", "NotIn", json!(["worker-1"]))])), Ok(false)),
        ("matchFields two values", fields(json!([e("metadata.name", "In", json!(["a", "b"]))])), Err(())),
        ("matchFields other key", fields(json!([e("metadata.uid", "In", json!(["a"]))])), Err(())),
        ("matchFields Exists", fields(json!([e("metadata.name", "Exists", json!([]))])), Err(())),
        ("expressions and fields ANDed", json!({"nodeSelectorTerms": [{
            "matchExpressions": [e("zone", "In", json!(["a"]))],
            "matchFields": [e("metadata.name", "In", json!(["other"]))]}]}), Ok(false)),
        ("no terms", json!({"nodeSelectorTerms": []}), Ok(false)),
    ];
    for (name, selector, want) in cases {
        let got = node_affinity_matches(&selector, &node).map_err(|_| ());
        assert_eq!(got, want, "{name}");
    }
    assert!(node_ready(&ready("n")));
}

#[test]
fn step2_merged_as_harvester_merges() {
    // ND:353-397: LastHealthyReplica (owner names, any node), KubeVirt reasons, then
    // NodeSchedulingRequirementsNotMet; a VMI may be under several keys.
    let n = "n1";
    let nodes = vec![ready(n), ready("n2")];
    let mut host_device = vmi("a", "gpu", n);
    host_device["status"]["conditions"] = json!([{"type": "LiveMigratable", "status": "False", "reason": "HostDeviceNotLiveMigratable"}]);
    let host_device = with(
        host_device,
        "/spec/nodeSelector",
        json!({"kubernetes.io/hostname": n}),
    );
    let elsewhere = vmi("b", "db", "n2");
    let vmis = vec![host_device, elsewhere, vmi("a", "web", n)];
    let volumes = vec![volume("pvc-1", "b", "db")];
    let replicas = vec![replica("pvc-1", n, true)];
    let objects = Objects {
        nodes: &nodes,
        vmis: &vmis,
        longhorn: Some(Longhorn {
            volumes: &volumes,
            replicas: &replicas,
        }),
        ..Objects::default()
    };
    let index = Index::new(&objects);
    let got = shown(non_migratable(n, &objects, &index).unwrap_or_default());
    let want: std::collections::BTreeMap<String, Vec<String>> = [
        (LAST_HEALTHY_REPLICA, vec!["b/db"]),
        ("HostDeviceNotLiveMigratable", vec!["a/gpu"]),
        (NODE_SCHEDULING_REQUIREMENTS_NOT_MET, vec!["a/gpu"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
    .collect();
    assert_eq!(got, want);
}

// ---------------------------------------------------------------------------------------------
// The last-available-node webhook (NV_T:32-236), on the controller's cordon of node1.

#[test]
fn last_available_node_webhook() {
    let node1 = ready("node1");
    let plain = ready("node2");
    let unschedulable = with(ready("node2"), "/spec/unschedulable", json!(true));
    let status = |value: &str| {
        let mut n = ready("node2");
        n["metadata"]["annotations"] = json!({"harvesterhci.io/maintain-status": value});
        n
    };
    #[rustfmt::skip]
    let cases = [
        ("NV_T:41 cordon, node2 plain", plain.clone(), false),
        ("NV_T:70 maintain-status, node2 plain", plain.clone(), false),
        ("NV_T:99 node2 maintain-status=completed", status("completed"), true),
        ("NV_T:131 node2 unschedulable", unschedulable.clone(), true),
        ("NV_T:163 node2 maintain-status=running", status("running"), true),
        ("NV_T:195 node2 unschedulable (maintain-status on node1)", unschedulable.clone(), true),
    ];
    for (name, node2, denied) in cases {
        let got = last_available_node("node1", &[node1.clone(), node2]);
        assert_eq!(got.is_some(), denied, "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// Steps 3 and 4, and the node's outcome, through `preview`.

struct World {
    nodes: Vec<Value>,
    vms: Vec<Value>,
    vmis: Vec<Value>,
    pods: Vec<Value>,
    volumes: Vec<Value>,
    replicas: Vec<Value>,
    longhorn: bool,
    claims: Vec<Value>,
    persistent_volumes: Vec<Value>,
}

impl World {
    fn new() -> World {
        World {
            nodes: vec![ready("n1"), ready("n2"), ready("n3")],
            vms: Vec::new(),
            vmis: Vec::new(),
            pods: Vec::new(),
            volumes: Vec::new(),
            replicas: Vec::new(),
            longhorn: true,
            claims: Vec::new(),
            persistent_volumes: Vec::new(),
        }
    }

    /// A running VM on `node`: VM metadata label `vm_label`, VMI label `vmi_label`, Pod labels
    /// `vmName` + `pod_label`.
    fn add(
        &mut self,
        name: &str,
        node: &str,
        vm_label: Option<&str>,
        vmi_label: Option<&str>,
        pod_label: Option<&str>,
    ) -> &mut World {
        let mut vm = vm("ns", name);
        if let Some(l) = vm_label {
            vm["metadata"]["labels"][STRATEGY] = json!(l);
        }
        let mut v = vmi("ns", name, node);
        if let Some(l) = vmi_label {
            v["metadata"]["labels"][STRATEGY] = json!(l);
        }
        v["spec"]["evictionStrategy"] = json!("LiveMigrate");
        let mut labels = json!({"harvesterhci.io/vmName": name, "kubevirt.io/nodeName": node});
        if let Some(l) = pod_label {
            labels[STRATEGY] = json!(l);
        }
        self.vms.push(vm);
        self.vmis.push(v);
        self.pods.push(pod("ns", name, node, labels));
        self
    }

    fn run(&self, node: &str, force: bool) -> cluster_model::maintenance::Preview {
        let objects = Objects {
            nodes: &self.nodes,
            vms: &self.vms,
            vmis: &self.vmis,
            pods: &self.pods,
            longhorn: self.longhorn.then_some(Longhorn {
                volumes: &self.volumes,
                replicas: &self.replicas,
            }),
            external_controller: false,
            claims: &self.claims,
            persistent_volumes: &self.persistent_volumes,
        };
        preview(node, force, &objects, &predict_nothing)
    }
}

type Row<'a> = (&'a str, DrainOutcome, Option<Restart>);

fn rows(p: &cluster_model::maintenance::Preview) -> Vec<(String, DrainOutcome, Option<Restart>)> {
    p.vms
        .iter()
        .map(|v| (format!("{}/{}", v.namespace, v.name), v.outcome, v.restart))
        .collect()
}

fn want(rows: &[Row]) -> Vec<(String, DrainOutcome, Option<Restart>)> {
    rows.iter()
        .map(|(n, o, r)| ((*n).to_owned(), *o, *r))
        .collect()
}

/// R11 in words, as docs/rules.md quotes it: a Manual VM set back to Manual is never started.
#[test]
fn r11_a_manual_vm_stays_off_after_maintenance() {
    let mut w = World::new();
    w.add(
        "m",
        "n1",
        Some(AFTER_ENABLE),
        Some(AFTER_ENABLE),
        Some(AFTER_ENABLE),
    );
    w.vms[0]["spec"]["runStrategy"] = json!("Manual");
    let got = w.run("n1", false);
    assert_eq!(
        got.vms[0].reasons,
        [
            "VMI label ShutdownAndRestartAfterEnable: stopped before the drain",
            "VM label ShutdownAndRestartAfterEnable: started again when maintenance completes, but Harvester sets its runStrategy back to Manual (harvesterhci.io/vmRunStrategy) and KubeVirt starts such a VM only on a start request: it stays off"
        ]
    );
    assert_eq!(got.vms[0].restart, Some(Restart::Never));
}

const AFTER_ENABLE: &str = "ShutdownAndRestartAfterEnable";

#[test]
fn step3_not_forced() {
    use DrainOutcome::{Blocks, Migrate, ShutDown};
    const E: &str = "ShutdownAndRestartAfterEnable";
    const D: &str = "ShutdownAndRestartAfterDisable";
    const S: &str = "Shutdown";
    #[rustfmt::skip]
    let cases: Vec<(&str, World, Outcome, Vec<Row>)> = vec![
        ("ND:139-192, MC:73-83: each Shutdown-family label, consistent", {
            let mut w = World::new();
            w.add("e", "n1", Some(E), Some(E), Some(E)).add("d", "n1", Some(D), Some(D), Some(D))
             .add("s", "n1", Some(S), Some(S), Some(S)).add("m", "n1", None, None, None)
             .add("other", "n2", None, None, None);
            w
        }, Outcome::Completes, vec![
            ("ns/d", ShutDown, Some(Restart::AfterDisable)), ("ns/e", ShutDown, Some(Restart::AfterEnable)),
            ("ns/m", Migrate, None), ("ns/s", ShutDown, Some(Restart::Never))]),
        ("derived (ND:152-189, MC:73-77): VMI label AfterEnable, VM label only in the template", {
            let mut w = World::new();
            w.add("e", "n1", None, Some(E), Some(E));
            w
        }, Outcome::Completes, vec![("ns/e", ShutDown, Some(Restart::Never))]),
        ("derived: VMI AfterEnable, VM label AfterDisable: the VM's label decides when", {
            let mut w = World::new();
            w.add("e", "n1", Some(D), Some(E), Some(E));
            w
        }, Outcome::Completes, vec![("ns/e", ShutDown, Some(Restart::AfterDisable))]),
        ("derived: label Shutdown -> Migrate after start: Pod skipped, VM not stopped", {
            let mut w = World::new();
            w.add("changed", "n1", Some("Migrate"), Some("Migrate"), Some(S)).add("e", "n1", Some(E), Some(E), Some(E));
            w
        }, Outcome::NeverCompletes, vec![
            ("ns/changed", Blocks, None), ("ns/e", ShutDown, Some(Restart::Never))]),
        ("derived: label Migrate -> Shutdown after start: stopped", {
            let mut w = World::new();
            w.add("changed", "n1", Some(S), Some(S), Some("Migrate"));
            w
        }, Outcome::Completes, vec![("ns/changed", ShutDown, Some(Restart::Never))]),
        ("derived ND:239, 205: a Shutdown-family VMI whose VM does not exist: retried forever", {
            let mut w = World::new();
            w.add("a", "n1", Some(S), Some(S), Some(S)).add("gone", "n1", Some(S), Some(S), Some(S))
             .add("z", "n1", Some(S), Some(S), Some(S));
            w.vms.retain(|v| v["metadata"]["name"] != "gone");
            w
        }, Outcome::NeverCompletes, vec![("ns/a", ShutDown, Some(Restart::Never))]),
        ("R11 (MC:93-102, VC:1088-1114): AfterEnable, runStrategy Manual: set back to Manual, not started", {
            let mut w = World::new();
            w.add("e", "n1", Some(E), Some(E), Some(E)).add("d", "n1", Some(D), Some(D), Some(D));
            for vm in &mut w.vms {
                vm["spec"]["runStrategy"] = json!("Manual");
            }
            w
        }, Outcome::Completes, vec![
            ("ns/d", ShutDown, Some(Restart::Never)), ("ns/e", ShutDown, Some(Restart::Never))]),
        ("R11: the annotation decides: Manual kept there, Once and Always started", {
            let mut w = World::new();
            w.add("a", "n1", Some(E), Some(E), Some(E)).add("m", "n1", Some(E), Some(E), Some(E))
             .add("o", "n1", Some(D), Some(D), Some(D));
            let stored = ["Always", "Manual", "Once"];
            for (vm, stored) in w.vms.iter_mut().zip(stored) {
                vm["metadata"]["annotations"]["harvesterhci.io/vmRunStrategy"] = json!(stored);
                vm["spec"]["runStrategy"] = json!("Manual");
            }
            w
        }, Outcome::Completes, vec![
            ("ns/a", ShutDown, Some(Restart::AfterEnable)), ("ns/m", ShutDown, Some(Restart::Never)),
            ("ns/o", ShutDown, Some(Restart::AfterDisable))]),
        ("D6 with R2 and R10: evicted without migration, by runStrategy and a disk bound to the node", {
            let mut w = World::new();
            w.add("always", "n1", None, None, None).add("local", "n1", None, None, None)
             .add("rerun", "n1", None, None, None);
            for vmi in &mut w.vmis {
                vmi["spec"]["evictionStrategy"] = json!("None");
            }
            w.vms[0]["spec"]["runStrategy"] = json!("Always");
            w.vmis[1]["spec"]["volumes"] = json!([{"name": "root", "persistentVolumeClaim": {"claimName": "root"}}]);
            w.claims.push(json!({"metadata": {"namespace": "ns", "name": "root"}, "spec": {"volumeName": "pv-n1"}}));
            w.persistent_volumes.push(json!({"metadata": {"name": "pv-n1"}, "spec": {"nodeAffinity": {"required": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}}}));
            w
        }, Outcome::Completes, vec![
            ("ns/always", DrainOutcome::Restart, None), ("ns/local", DrainOutcome::DownUntilNodeReturns, None),
            ("ns/rerun", DrainOutcome::MayStayOff, None)]),
        ("derived NV:132-147: the last available node: stopped, then the cordon fails forever", {
            let mut w = World::new();
            let mut n2 = ready("n2");
            // Ready and schedulable (a scheduling candidate, ND:495-506), but in maintenance.
            n2["metadata"]["annotations"] = json!({"harvesterhci.io/maintain-status": "completed"});
            w.nodes = vec![ready("n1"), n2];
            w.add("e", "n1", Some(E), Some(E), Some(E)).add("m", "n1", None, None, None);
            w
        }, Outcome::NeverCompletes, vec![("ns/e", ShutDown, Some(Restart::Never))]),
    ];
    for (name, world, outcome, vms) in cases {
        let got = world.run("n1", false);
        assert_eq!(got.outcome, outcome, "{name}: {got:#?}");
        assert_eq!(rows(&got), want(&vms), "{name}: {got:#?}");
        assert!(got.refusal.is_empty(), "{name}");
        assert_eq!(
            got.stuck.is_empty(),
            outcome != Outcome::NeverCompletes || got.vms.iter().any(|v| v.outcome == Blocks),
            "{name}: {got:#?}"
        );
    }
}

#[test]
fn step3_refused_and_step4_forced() {
    use DrainOutcome::{Blocks, Migrate, ShutDown};
    const E: &str = "ShutdownAndRestartAfterEnable";
    const S: &str = "Shutdown";
    let mut w = World::new();
    w.add("gpu", "n1", Some(E), Some(E), Some(E))
        .add("pinned", "n1", None, None, None)
        .add("labelled", "n1", Some(S), Some(S), Some(S))
        .add("web", "n1", None, None, None)
        .add("db", "n2", None, None, None);
    w.vmis[0]["status"]["conditions"] = json!([{"type": "LiveMigratable", "status": "False", "reason": "HostDeviceNotLiveMigratable"}]);
    w.vmis[1]["spec"]["nodeSelector"] = json!({"kubernetes.io/hostname": "n1"});
    w.volumes.push(volume("pvc-db", "ns", "db"));
    w.replicas.push(replica("pvc-db", "n1", true));
    w.replicas.push(replica("pvc-db", "n3", false));

    // Not forced: refused, keyed as Harvester keys it, nothing acted on.
    let refused = w.run("n1", false);
    assert_eq!(refused.outcome, Outcome::Refused);
    let keys: Vec<(&str, Vec<&str>)> = refused
        .refusal
        .iter()
        .map(|r| {
            (
                r.reason.as_str(),
                r.vms.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            ("HostDeviceNotLiveMigratable", vec!["ns/gpu"]),
            (LAST_HEALTHY_REPLICA, vec!["ns/db"]),
            (NODE_SCHEDULING_REQUIREMENTS_NOT_MET, vec!["ns/pinned"]),
        ]
    );
    assert_eq!(
        refused.refusal[1].message,
        "ns/db cannot be migrated due to LastHealthyReplica"
    );
    assert!(refused.vms.is_empty());

    // Forced (ND:197-199): exactly those stopped, never restarted (even AfterEnable); the
    // Shutdown-labelled migratable VM is not stopped and its Pod is skipped: NeverCompletes.
    let forced = w.run("n1", true);
    assert_eq!(forced.outcome, Outcome::NeverCompletes, "{forced:#?}");
    assert_eq!(
        rows(&forced),
        want(&[
            ("ns/db", ShutDown, Some(Restart::Never)),
            ("ns/gpu", ShutDown, Some(Restart::Never)),
            ("ns/labelled", Blocks, None),
            ("ns/pinned", ShutDown, Some(Restart::Never)),
            ("ns/web", Migrate, None),
        ])
    );
    assert_eq!(forced.vms[0].node.as_deref(), Some("n2"));
    assert!(forced.refusal.is_empty() && forced.stuck.is_empty());

    // Forced on a healthy node with a labelled VM: worse than not forcing.
    let mut healthy = World::new();
    healthy
        .add("labelled", "n1", Some(S), Some(S), Some(S))
        .add("web", "n1", None, None, None);
    assert_eq!(healthy.run("n1", false).outcome, Outcome::Completes);
    let worse = healthy.run("n1", true);
    assert_eq!(worse.outcome, Outcome::NeverCompletes);
    assert_eq!(
        rows(&worse),
        want(&[("ns/labelled", Blocks, None), ("ns/web", Migrate, None)])
    );

    // A stale node-name annotation from an earlier attempt: the VM's label decides (MC:81-83).
    let mut stale = w.clone_world();
    stale.vms[0]["metadata"]["annotations"]["harvesterhci.io/maintain-mode-strategy-node-name"] =
        json!("n1");
    stale.vmis[2]["metadata"]["labels"][STRATEGY] = json!("Migrate");
    stale.pods[2]["metadata"]["labels"][STRATEGY] = json!("Migrate");
    let got = stale.run("n1", true);
    assert_eq!(got.outcome, Outcome::Completes, "{got:#?}");
    assert_eq!(got.vms[1].name, "gpu");
    assert_eq!(got.vms[1].restart, Some(Restart::AfterEnable));

    // The control-plane rule refuses forced and not forced alike (ND:94-105).
    let mut cp = World::new();
    cp.nodes[0]["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] = json!("true");
    for force in [false, true] {
        let got = cp.run("n1", force);
        assert_eq!(got.outcome, Outcome::Refused);
        assert_eq!(got.refusal[0].reason, SINGLE_CONTROL_PLANE_NODE);
    }

    // No Longhorn objects: said, not guessed.
    let mut unknown = w.clone_world();
    unknown.longhorn = false;
    let got = unknown.run("n1", false);
    assert_eq!(
        got.notes,
        ["LastHealthyReplica not checked: no Longhorn volumes or replicas in the objects"]
    );
    assert!(got.refusal.iter().all(|r| r.reason != LAST_HEALTHY_REPLICA));
}

#[test]
fn missing_condition_is_migratable_and_the_prediction_is_shown() {
    let mut w = World::new();
    w.add("legacy", "n1", None, None, None);
    w.vmis[0]["status"]["conditions"] = json!([]);
    let objects = Objects {
        nodes: &w.nodes,
        vms: &w.vms,
        vmis: &w.vmis,
        pods: &w.pods,
        longhorn: None,
        external_controller: false,
        ..Objects::default()
    };
    let predict = |_: &Value| Assessment {
        eviction_strategy: Some(EvictionStrategy::LiveMigrate),
        source: StrategySource::Vm,
        reasons: vec![Reason::new(
            ReasonKind::HostDeviceNotLiveMigratable,
            "GPU gpu1",
        )],
        warnings: Vec::new(),
    };
    let got = preview("n1", false, &objects, &predict);
    assert_eq!(got.outcome, Outcome::Completes);
    assert_eq!(got.vms[0].outcome, DrainOutcome::Migrate);
    assert_eq!(
        got.vms[0].warnings,
        [
            "predicted: no LiveMigratable condition, Harvester counts it as migratable; the policy predicts it cannot live-migrate (HostDeviceNotLiveMigratable: GPU gpu1)"
        ]
    );
}

impl World {
    fn clone_world(&self) -> World {
        World {
            nodes: self.nodes.clone(),
            vms: self.vms.clone(),
            vmis: self.vmis.clone(),
            pods: self.pods.clone(),
            volumes: self.volumes.clone(),
            replicas: self.replicas.clone(),
            longhorn: self.longhorn,
            claims: self.claims.clone(),
            persistent_volumes: self.persistent_volumes.clone(),
        }
    }
}
