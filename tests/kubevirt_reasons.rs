//! Every KubeVirt `LiveMigratable` reason (docs/rules.md, "Reasons"), one table each, ported from
//! KubeVirt's own unit tests: `pkg/virt-handler/vm_test.go` Context "check if migratable"
//! (v1.9.0 line / v1.8.4 line), `pkg/network/vmispec/interface_test.go`, `defaults_test.go`, and
//! the instancetype / preference `apply` tests. Each row is a VM with its own `LiveMigrate`, judged
//! through the policy; the reasons are read back from V7's warning, the node-dependent ones from
//! their own warnings.

mod common;

use common::{K, TestCluster, evaluate_with, vm_request};
use serde_json::{Value, json};

const WARN: &str =
    "spec.template.spec.evictionStrategy: LiveMigrate blocks drains, not migratable (";
const NODE: &str = "spec.template.spec.evictionStrategy: may block drains (";

/// A VM like KubeVirt's `NewMinimalVMI` (no interfaces: `autoattachPodInterface: false`) with
/// `domain` and the rest of the template spec from `spec`, under its own `LiveMigrate`.
fn vm(spec: Value) -> Value {
    let mut template_spec = json!({
        "evictionStrategy": "LiveMigrate",
        "domain": {"devices": {"autoattachPodInterface": false}},
    });
    merge(&mut template_spec, spec);
    json!({
        "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
        "metadata": {"name": "testvmi", "namespace": "default", "labels": {K: "Migrate"}},
        "spec": {"template": {"metadata": {"labels": {K: "Migrate"}}, "spec": template_spec}},
    })
}

/// JSON merge (objects recursively, anything else replaced).
fn merge(into: &mut Value, from: Value) {
    match (into, from) {
        (Value::Object(into), Value::Object(from)) => {
            for (key, value) in from {
                merge(into.entry(key).or_insert(Value::Null), value);
            }
        }
        (into, from) => *into = from,
    }
}

/// The definite reasons, the node-dependent ones, the other warnings.
fn judge(
    vm: Value,
    settings: Value,
    cluster: &TestCluster,
) -> (Vec<String>, Vec<String>, Vec<String>) {
    let answer = evaluate_with(vm_request("CREATE", vm, None), settings, cluster);
    assert_eq!(answer["accepted"], json!(true), "{answer}");
    let (mut reasons, mut node, mut other) = (Vec::new(), Vec::new(), Vec::new());
    for warning in answer["warnings"].as_array().into_iter().flatten() {
        let warning = warning.as_str().expect("a string").to_owned();
        if let Some(list) = warning.strip_prefix(WARN).and_then(|w| w.strip_suffix(')')) {
            reasons.extend(list.split("; ").map(str::to_owned));
        } else if let Some(reason) = warning.strip_prefix(NODE).and_then(|w| w.strip_suffix(')')) {
            node.push(reason.to_owned());
        } else {
            other.push(warning);
        }
    }
    (reasons, node, other)
}

/// Settings without lookups: the configuration and the release from the settings.
fn offline(version: &str, configuration: Value) -> Value {
    json!({"clusterLookups": false, "kubevirt": {"version": version, "configuration": configuration}})
}

/// One row: name, template spec, settings, cluster, definite reasons, node-dependent reasons.
type Row = (
    &'static str,
    Value,
    Value,
    TestCluster,
    Vec<&'static str>,
    Vec<&'static str>,
);

fn run(rows: Vec<Row>) {
    let mut failures = Vec::new();
    for (name, spec, settings, cluster, want, want_node) in rows {
        let (reasons, node, other) = judge(vm(spec), settings, &cluster);
        if reasons != want || node != want_node || !other.is_empty() {
            failures.push(format!(
                "{name}:\n  reasons {reasons:?}\n     want {want:?}\n  node {node:?}\n  want {want_node:?}\n  other {other:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

fn none() -> Value {
    offline("v1.9.0", json!({}))
}

fn claims(modes: &[(&'static str, Vec<&'static str>)]) -> TestCluster {
    TestCluster {
        claims: modes
            .iter()
            .map(|(name, modes)| ("default", *name, modes.clone()))
            .collect(),
        ..TestCluster::default()
    }
}

/// Lookups on (claims only: the VM sets its strategy, the settings give release and configuration).
fn online() -> Value {
    json!({"kubevirt": {"version": "v1.9.0", "configuration": {}}})
}

#[test]
fn disks_not_live_migratable() {
    let pvc =
        |name: &str| json!({"name": name, "persistentVolumeClaim": {"claimName": "testblock"}});
    let rwo = "DisksNotLiveMigratable: volume testblock (ReadWriteOnce)";
    let virtiofs = |volume: Value| {
        json!({"domain": {"devices": {"filesystems": [{"name": "VIRTIOFS", "virtiofs": {}}]}},
            "volumes": [volume]})
    };
    run(vec![
        // vm_test.go:1993 / 1832
        (
            "ephemeral PVC: block migration only",
            json!({"volumes": [{"name": "v", "ephemeral": {"persistentVolumeClaim": {"claimName": "testblock"}}}]}),
            none(),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        // 2023 / 1862
        (
            "PVC RWX",
            json!({"volumes": [pvc("myvolume")]}),
            online(),
            claims(&[("testblock", vec!["ReadWriteMany"])]),
            vec![],
            vec![],
        ),
        // 2060 / 1899
        (
            "PVC RWO",
            json!({"volumes": [pvc("myvolume")]}),
            online(),
            claims(&[("testblock", vec!["ReadWriteOnce"])]),
            vec![rwo],
            vec![],
        ),
        // 2099 / 1938
        (
            "DataVolume RWO (its PVC has its name)",
            json!({"volumes": [{"name": "myvolume", "dataVolume": {"name": "testblock"}}]}),
            online(),
            claims(&[("testblock", vec!["ReadWriteOnce"])]),
            vec![rwo],
            vec![],
        ),
        // 2138 / 1977 and 2193 / 2032
        (
            "PVC RWX + ephemeral",
            json!({"volumes": [pvc("a"), {"name": "b", "ephemeral": {"persistentVolumeClaim": {"claimName": "e"}}}]}),
            online(),
            claims(&[("testblock", vec!["ReadWriteMany"])]),
            vec![],
            vec![],
        ),
        (
            "ephemeral + PVC RWX",
            json!({"volumes": [{"name": "b", "ephemeral": {"persistentVolumeClaim": {"claimName": "e"}}}, pvc("a")]}),
            online(),
            claims(&[("testblock", vec!["ReadWriteMany"])]),
            vec![],
            vec![],
        ),
        // 2248 / 2087
        (
            "shared hostDisk",
            json!({"volumes": [{"name": "h", "hostDisk": {"path": "/x", "shared": true}}]}),
            none(),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        // 2279 / 2118
        (
            "shared and non-shared hostDisk",
            json!({"volumes": [{"name": "a", "hostDisk": {"path": "/a", "shared": true}},
                {"name": "b", "hostDisk": {"path": "/b", "shared": false}}]}),
            none(),
            TestCluster::default(),
            vec!["DisksNotLiveMigratable: hostDisk b not shared"],
            vec![],
        ),
        // 2352 / 2191
        (
            "virtiofs without a volume",
            virtiofs(json!({"name": "other", "containerDisk": {"image": "x"}})),
            none(),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        // 2388 / 2227, 2390 / 2229, 2392 / 2231
        (
            "virtiofs on a PVC, RWO",
            virtiofs(
                json!({"name": "VIRTIOFS", "persistentVolumeClaim": {"claimName": "testblock"}}),
            ),
            online(),
            claims(&[("testblock", vec!["ReadWriteOnce"])]),
            vec![rwo],
            vec![],
        ),
        (
            "virtiofs on a PVC, ROX",
            virtiofs(
                json!({"name": "VIRTIOFS", "persistentVolumeClaim": {"claimName": "testblock"}}),
            ),
            online(),
            claims(&[("testblock", vec!["ReadOnlyMany"])]),
            vec!["DisksNotLiveMigratable: volume testblock (ReadOnlyMany)"],
            vec![],
        ),
        (
            "virtiofs on a PVC, RWX",
            virtiofs(
                json!({"name": "VIRTIOFS", "persistentVolumeClaim": {"claimName": "testblock"}}),
            ),
            online(),
            claims(&[("testblock", vec!["ReadWriteMany"])]),
            vec![],
            vec![],
        ),
        // 2394 / 2233, 2396 / 2235
        (
            "virtiofs on a DataVolume, RWX",
            virtiofs(json!({"name": "VIRTIOFS", "dataVolume": {"name": "testblock"}})),
            online(),
            claims(&[("testblock", vec!["ReadWriteMany"])]),
            vec![],
            vec![],
        ),
        (
            "virtiofs on a DataVolume, ROX",
            virtiofs(json!({"name": "VIRTIOFS", "dataVolume": {"name": "testblock"}})),
            online(),
            claims(&[("testblock", vec!["ReadOnlyMany"])]),
            vec!["DisksNotLiveMigratable: volume testblock (ReadOnlyMany)"],
            vec![],
        ),
        // 2412-2415 / 2251-2254
        (
            "virtiofs config shares",
            json!({"domain": {"devices": {"filesystems": [{"name": "c", "virtiofs": {}}, {"name": "s", "virtiofs": {}}]}},
                "volumes": [{"name": "c", "configMap": {"name": "x"}}, {"name": "s", "secret": {"secretName": "x"}},
                    {"name": "a", "serviceAccount": {"serviceAccountName": "x"}}, {"name": "d", "downwardAPI": {}}]}),
            none(),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        // 2794-2796 / 2479-2481
        (
            "CD-ROMs on containerDisks",
            json!({"domain": {"devices": {"disks": [{"name": "a", "cdrom": {}}, {"name": "b", "cdrom": {"readonly": true}},
                {"name": "c", "cdrom": {"readonly": false}}]}},
                "volumes": [{"name": "a", "containerDisk": {"image": "x"}}, {"name": "b", "containerDisk": {"image": "x"}},
                    {"name": "c", "containerDisk": {"image": "x"}}]}),
            none(),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        // 2822 / 2507
        (
            "utility volumes are not looked at",
            json!({"utilityVolumes": [{"name": "u", "claimName": "test-pvc"}]}),
            online(),
            TestCluster::default(),
            vec![],
            vec![],
        ),
    ]);
}

#[test]
fn interface_not_live_migratable() {
    let pod = |interface: Value| json!({"domain": {"devices": {"interfaces": [interface]}}, "networks": [{"name": "default", "pod": {}}]});
    let plugins = |version: &str| {
        offline(
            version,
            json!({"network": {"binding": {"mig": {"migration": {}}, "non_mig": {}}}}),
        )
    };
    let bridge = "InterfaceNotLiveMigratable: bridge on pod network \"default\"";
    let mut annotated = vm(pod(json!({"name": "default", "bridge": {}})));
    annotated["spec"]["template"]["metadata"]["annotations"] =
        json!({"kubevirt.io/allow-pod-bridge-network-live-migration": ""});
    let (reasons, _, _) = judge(annotated, none(), &TestCluster::default());
    // interface_test.go:94: bridge with the VMI annotation (any value, here "").
    assert!(reasons.is_empty(), "{reasons:?}");
    run(vec![
        // interface_test.go:88, 101, 107, 118, 124 (identical in v1.8.4)
        (
            "masquerade",
            pod(json!({"name": "default", "masquerade": {}})),
            plugins("v1.9.0"),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        (
            "plugin with migration",
            pod(json!({"name": "default", "binding": {"name": "mig"}})),
            plugins("v1.8.4"),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        (
            "passtBinding",
            pod(json!({"name": "default", "passtBinding": {}})),
            plugins("v1.9.0"),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        (
            "bridge without the annotation",
            pod(json!({"name": "default", "bridge": {}})),
            plugins("v1.8.4"),
            TestCluster::default(),
            vec![bridge],
            vec![],
        ),
        (
            "plugin without migration",
            pod(json!({"name": "default", "binding": {"name": "non_mig"}})),
            plugins("v1.9.0"),
            TestCluster::default(),
            vec![
                "InterfaceNotLiveMigratable: binding plugin \"non_mig\" without migration on pod network \"default\"",
            ],
            vec![],
        ),
        // vm_test.go:2419 / 2258 and 2697 / 2382, 2719 / 2404, 2741 / 2426
        (
            "bridge on the pod network X",
            json!({"domain": {"devices": {"interfaces": [{"name": "X", "bridge": {}}]}}, "networks": [{"name": "X", "pod": {}}]}),
            none(),
            TestCluster::default(),
            vec!["InterfaceNotLiveMigratable: bridge on pod network \"X\""],
            vec![],
        ),
        (
            "masquerade on the pod network X",
            json!({"domain": {"devices": {"interfaces": [{"name": "X", "masquerade": {}}]}}, "networks": [{"name": "X", "pod": {}}]}),
            none(),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        (
            "bridge on a Multus network never counts",
            json!({"domain": {"devices": {"interfaces": [{"name": "X", "bridge": {}}]}}, "networks": [{"name": "X", "multus": {"networkName": "n"}}]}),
            none(),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        // interface.go:69-73: a pod network without an interface of its name (≥1 interface).
        (
            "pod network without its interface",
            json!({"domain": {"devices": {"interfaces": [{"name": "other", "masquerade": {}}]}}, "networks": [{"name": "default", "pod": {}}]}),
            none(),
            TestCluster::default(),
            vec!["InterfaceNotLiveMigratable: no interface for pod network \"default\""],
            vec![],
        ),
        (
            "sriov on the pod network",
            pod(json!({"name": "default", "sriov": {}})),
            none(),
            TestCluster::default(),
            vec!["InterfaceNotLiveMigratable: sriov on pod network \"default\""],
            vec![],
        ),
    ]);
}

#[test]
fn default_pod_interface() {
    let autoattach = |on: Value| json!({"domain": {"devices": {"autoattachPodInterface": on}}});
    let default = |binding: &str| {
        offline(
            "v1.9.0",
            json!({"network": {"defaultNetworkInterface": binding}}),
        )
    };
    let bridge =
        "InterfaceNotLiveMigratable: bridge on pod network \"default\" (default interface)";
    run(vec![
        // defaults_test.go:40: autoattachPodInterface false → no interface.
        (
            "autoattach false",
            autoattach(json!(false)),
            none(),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        // defaults_test.go:41: the VM names its own interface and network.
        (
            "own interface and network",
            json!({"domain": {"devices": {"autoattachPodInterface": null, "interfaces": [{"name": "mynet", "bridge": {}}]}},
                "networks": [{"name": "mynet", "multus": {"networkName": "n"}}]}),
            none(),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        // defaults_test.go:60 / 61: bridge (the unset default).
        (
            "unset: bridge",
            autoattach(json!(null)),
            none(),
            TestCluster::default(),
            vec![bridge],
            vec![],
        ),
        (
            "autoattach true: bridge",
            autoattach(json!(true)),
            default("bridge"),
            TestCluster::default(),
            vec![bridge],
            vec![],
        ),
        // defaults_test.go:72 / 73: masquerade from the configuration.
        (
            "masquerade default",
            autoattach(json!(null)),
            default("masquerade"),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        // defaults_test.go:86: slirp is refused by KubeVirt; not migratable either.
        (
            "slirp default",
            autoattach(json!(null)),
            default("slirp"),
            TestCluster::default(),
            vec![
                "InterfaceNotLiveMigratable: slirp on pod network \"default\" (default interface)",
            ],
            vec![],
        ),
    ]);
}

#[test]
fn host_device_not_live_migratable() {
    let gpus = |gpus: Value| json!({"domain": {"devices": {"gpus": gpus}}});
    let m10 = || gpus(json!([{"name": "gpu1", "deviceName": "nvidia.com/GRID_M10-2B"}]));
    let mdev = |gates: Value| {
        json!({"developerConfiguration": {"featureGates": gates},
            "permittedHostDevices": {"mediatedDevices": [{"mdevNameSelector": "GRID M10-2B", "resourceName": "nvidia.com/GRID_M10-2B"}],
                "pciHostDevices": [{"pciVendorSelector": "10DE:1EB8", "resourceName": "nvidia.com/M10"}]}})
    };
    run(vec![
        // vm_test.go:2445 / 2284
        (
            "host device",
            json!({"domain": {"devices": {"hostDevices": [{"name": "name1", "deviceName": "dev1"}]}}}),
            none(),
            TestCluster::default(),
            vec!["HostDeviceNotLiveMigratable: host device name1"],
            vec![],
        ),
        // 2476, first half: the gate off
        (
            "one vGPU, gate off (v1.9)",
            m10(),
            offline("v1.9.0", mdev(json!([]))),
            TestCluster::default(),
            vec!["HostDeviceNotLiveMigratable: GPU gpu1 without gate VGPULiveMigration"],
            vec![],
        ),
        // 2476, second half: gate on, a permitted mediated device
        (
            "one vGPU, gate on (v1.9)",
            m10(),
            offline("v1.9.0", mdev(json!(["VGPULiveMigration"]))),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        // [1.8.4] 2300: any GPU blocks
        (
            "one vGPU, gate on (v1.8)",
            m10(),
            offline("v1.8.4", mdev(json!(["VGPULiveMigration"]))),
            TestCluster::default(),
            vec!["HostDeviceNotLiveMigratable: GPU gpu1"],
            vec![],
        ),
        // 2523: a generic PCI host device, even with the gate on
        (
            "PCI host device, gate on",
            json!({"domain": {"devices": {"hostDevices": [{"name": "e810", "deviceName": "intel.com/e810"}]}}}),
            offline("v1.9.0", mdev(json!(["VGPULiveMigration"]))),
            TestCluster::default(),
            vec!["HostDeviceNotLiveMigratable: host device e810"],
            vec![],
        ),
        // 2556: a GPU listed only in pciHostDevices
        (
            "GPU of pciHostDevices",
            gpus(json!([{"name": "gpu1", "deviceName": "nvidia.com/M10"}])),
            offline("v1.9.0", mdev(json!(["VGPULiveMigration"]))),
            TestCluster::default(),
            vec!["HostDeviceNotLiveMigratable: GPU gpu1 is not a permitted mediated device"],
            vec![],
        ),
        // 2589: two GPUs
        (
            "two GPUs",
            gpus(
                json!([{"name": "a", "deviceName": "nvidia.com/gpu"}, {"name": "b", "deviceName": "nvidia.com/gpu"}]),
            ),
            offline("v1.9.0", mdev(json!(["VGPULiveMigration"]))),
            TestCluster::default(),
            vec!["HostDeviceNotLiveMigratable: 2 GPUs (a, b), at most one migrates"],
            vec![],
        ),
        (
            "two GPUs (v1.8)",
            gpus(json!([{"name": "a", "deviceName": "x"}, {"name": "b", "deviceName": "x"}])),
            offline("v1.8.4", json!({})),
            TestCluster::default(),
            vec![
                "HostDeviceNotLiveMigratable: GPU a",
                "HostDeviceNotLiveMigratable: GPU b",
            ],
            vec![],
        ),
    ]);
}

#[test]
fn launch_security_and_hyperv() {
    let security = |value: Value| json!({"domain": {"launchSecurity": value}});
    run(vec![
        // vm_test.go:2619 / 2323, 2632 / 2336, 2644 / 2348
        (
            "SEV",
            security(json!({"sev": {}})),
            none(),
            TestCluster::default(),
            vec!["SEVNotLiveMigratable: launch security sev"],
            vec![],
        ),
        (
            "SNP",
            security(json!({"snp": {}})),
            none(),
            TestCluster::default(),
            vec!["SEVNotLiveMigratable: launch security snp"],
            vec![],
        ),
        (
            "Secure Execution",
            json!({"architecture": "s390x", "domain": {"launchSecurity": {}}}),
            none(),
            TestCluster::default(),
            vec!["SecureExecutionNotLiveMigratable: launch security on s390x"],
            vec![],
        ),
        (
            "TDX",
            security(json!({"tdx": {}})),
            none(),
            TestCluster::default(),
            vec!["TDXNotLiveMigratable: launch security tdx"],
            vec![],
        ),
        // amd64.go: SEV else TDX
        (
            "SEV and TDX: SEV only",
            security(json!({"sev": {}, "tdx": {}})),
            none(),
            TestCluster::default(),
            vec!["SEVNotLiveMigratable: launch security sev"],
            vec![],
        ),
        // 2811 / 2496
        (
            "Hyper-V passthrough",
            json!({"domain": {"features": {"hypervPassthrough": {"enabled": true}}}}),
            none(),
            TestCluster::default(),
            vec!["HypervPassthroughNotLiveMigratable: Hyper-V passthrough"],
            vec![],
        ),
        (
            "Hyper-V passthrough off",
            json!({"domain": {"features": {"hypervPassthrough": {"enabled": false}}}}),
            none(),
            TestCluster::default(),
            vec![],
            vec![],
        ),
    ]);
}

#[test]
fn persistent_reservation_by_version() {
    let lun = json!({"domain": {"devices": {"disks": [{"name": "lun0", "lun": {"bus": "scsi", "reservation": true}}]}}});
    run(vec![
        // vm_test.go:2657 (v1.9.0: migratable)
        (
            "reservation, v1.9",
            lun.clone(),
            none(),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        // [1.8.4] vm_test.go:2361
        (
            "reservation, v1.8",
            lun.clone(),
            offline("v1.8.4", json!({})),
            TestCluster::default(),
            vec!["PersistentReservationNotLiveMigratable: LUN lun0 with reservation"],
            vec![],
        ),
        (
            "no reservation, v1.8",
            json!({"domain": {"devices": {"disks": [{"name": "lun0", "lun": {"bus": "scsi"}}]}}}),
            offline("v1.8.4", json!({})),
            TestCluster::default(),
            vec![],
            vec![],
        ),
    ]);
}

#[test]
fn node_dependent_reasons() {
    let cpu = "CPUModeLiveMigratable: host-model CPU, if the node has no host model";
    let tsc =
        "NoTSCFrequencyNotLiveMigratable: Hyper-V reenlightenment, if no TSC frequency is known";
    let hyperv = |features: Value, cpu: Value| json!({"domain": {"features": {"hyperv": features}, "cpu": cpu}});
    run(vec![
        // vm_test.go:2345-2346 / 2184-2185: depends on the node's host model
        (
            "host-model",
            json!({"domain": {"cpu": {"model": "host-model"}}}),
            none(),
            TestCluster::default(),
            vec![],
            vec![cpu],
        ),
        (
            "host-passthrough is not checked",
            json!({"domain": {"cpu": {"model": "host-passthrough"}}}),
            none(),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        // 2800 / 2485: reenlightenment without topology hints
        (
            "reenlightenment",
            hyperv(json!({"reenlightenment": {"enabled": true}}), json!({})),
            none(),
            TestCluster::default(),
            vec![],
            vec![tsc],
        ),
        (
            "reenlightenment {} is enabled",
            hyperv(json!({"reenlightenment": {}}), json!({})),
            none(),
            TestCluster::default(),
            vec![],
            vec![tsc],
        ),
        (
            "reenlightenment off",
            hyperv(json!({"reenlightenment": {"enabled": false}}), json!({})),
            none(),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        // tsc.go:150-163: invtsc required → no migration requirement
        (
            "reenlightenment with invtsc required",
            hyperv(
                json!({"reenlightenment": {}}),
                json!({"features": [{"name": "invtsc", "policy": "require"}]}),
            ),
            none(),
            TestCluster::default(),
            vec![],
            vec![],
        ),
        // hinter.go:50-57: a cluster-wide minimum TSC frequency
        (
            "reenlightenment, minimumClusterTSCFrequency",
            hyperv(json!({"reenlightenment": {}}), json!({})),
            offline(
                "v1.9.0",
                json!({"developerConfiguration": {"minimumClusterTSCFrequency": 2_000_000_000_i64}}),
            ),
            TestCluster::default(),
            vec![],
            vec![],
        ),
    ]);
}

/// name, template spec, instancetype?, preference?, settings, cluster, reasons, node-dependent
/// reasons, other warnings.
type TypedRow = (
    &'static str,
    Value,
    bool,
    bool,
    Value,
    TestCluster,
    Vec<&'static str>,
    Vec<&'static str>,
    Vec<String>,
);

/// name, settings, cluster, reasons, calls.
type PrecedenceRow = (
    &'static str,
    Value,
    TestCluster,
    Vec<String>,
    Vec<&'static str>,
);

const IT: &str = "VirtualMachineClusterInstancetype";
const PREF: &str = "VirtualMachineClusterPreference";

/// A VM of the cluster instancetype `it` and cluster preference `pref` (when given).
fn typed(spec: Value, it: bool, pref: bool) -> Value {
    let mut vm = vm(spec);
    if it {
        vm["spec"]["instancetype"] = json!({"name": "it"});
    }
    if pref {
        vm["spec"]["preference"] =
            json!({"name": "pref", "kind": "virtualmachineclusterpreferences"});
    }
    vm
}

#[test]
fn instancetypes_and_preferences() {
    let settings = |version: &str| json!({"kubevirt": {"version": version, "configuration": {}}});
    let with_it = |spec: Value| TestCluster::default().with(IT, None, "it", spec);
    let with_pref = |spec: Value| TestCluster::default().with(PREF, None, "pref", spec);
    let both = |it: Value, pref: Value| with_it(it).with(PREF, None, "pref", pref);
    let gpu = json!({"gpus": [{"name": "gpu0", "deviceName": "nvidia.com/TU104GL"}]});
    let gate = "HostDeviceNotLiveMigratable: GPU gpu0 without gate VGPULiveMigration";
    let bridge = json!({"domain": {"devices": {"interfaces": [{"name": "default", "bridge": {}}]}},
        "networks": [{"name": "default", "pod": {}}]});
    let allow =
        json!({"annotations": {"kubevirt.io/allow-pod-bridge-network-live-migration": "true"}});
    let cases: Vec<TypedRow> = vec![
        // apply/gpu_test.go:56
        (
            "instancetype GPU applies",
            json!({}),
            true,
            false,
            settings("v1.9.0"),
            with_it(gpu.clone()),
            vec![gate],
            vec![],
            vec![],
        ),
        // apply/gpu_test.go:62: a conflict; KubeVirt rejects the VM, nothing is applied
        (
            "instancetype GPU conflicts with the VM's",
            json!({"domain": {"devices": {"gpus": [{"name": "own", "deviceName": "x"}]}}}),
            true,
            false,
            settings("v1.8.4"),
            with_it(gpu.clone()),
            vec!["HostDeviceNotLiveMigratable: GPU own"],
            vec![],
            vec![format!(
                "spec.instancetype: {IT} it conflicts with the VM in gpus; KubeVirt rejects the VM"
            )],
        ),
        // apply/hostdevices_test.go:56
        (
            "instancetype host device applies",
            json!({}),
            true,
            false,
            settings("v1.9.0"),
            with_it(json!({"hostDevices": [{"name": "hd", "deviceName": "intel.com/qat"}]})),
            vec!["HostDeviceNotLiveMigratable: host device hd"],
            vec![],
            vec![],
        ),
        // apply/launchsecurity_test.go:52
        (
            "instancetype launch security applies",
            json!({}),
            true,
            false,
            settings("v1.9.0"),
            with_it(json!({"launchSecurity": {"sev": {}}})),
            vec!["SEVNotLiveMigratable: launch security sev"],
            vec![],
            vec![],
        ),
        // apply/annotations_test.go:54: the bridge annotation from the instancetype
        (
            "instancetype annotation allows bridge",
            bridge.clone(),
            true,
            false,
            settings("v1.9.0"),
            with_it(allow.clone()),
            vec![],
            vec![],
            vec![],
        ),
        // apply/cpu.go:47-49: the instancetype's CPU model
        (
            "instancetype host-model",
            json!({}),
            true,
            false,
            settings("v1.9.0"),
            with_it(json!({"cpu": {"guest": 2, "model": "host-model"}})),
            vec![],
            vec!["CPUModeLiveMigratable: host-model CPU, if the node has no host model"],
            vec![],
        ),
        // preference/apply/annotations.go:23-35
        (
            "preference annotation allows bridge",
            bridge.clone(),
            false,
            true,
            settings("v1.9.0"),
            with_pref(allow.clone()),
            vec![],
            vec![],
            vec![],
        ),
        // preference/apply/launchsecurity_test.go:89-96 (v1.9.0 only)
        (
            "preferred launch security (v1.9)",
            json!({}),
            false,
            true,
            settings("v1.9.0"),
            with_pref(json!({"preferredLaunchSecurity": {"sev": {}}})),
            vec!["SEVNotLiveMigratable: launch security sev"],
            vec![],
            vec![],
        ),
        (
            "preferred launch security does not exist in v1.8",
            json!({}),
            false,
            true,
            settings("v1.8.4"),
            with_pref(json!({"preferredLaunchSecurity": {"sev": {}}})),
            vec![],
            vec![],
            vec![],
        ),
        (
            "the VM's launch security wins over the preference",
            json!({"domain": {"launchSecurity": {"tdx": {}}}}),
            false,
            true,
            settings("v1.9.0"),
            with_pref(json!({"preferredLaunchSecurity": {"sev": {}}})),
            vec!["TDXNotLiveMigratable: launch security tdx"],
            vec![],
            vec![],
        ),
        (
            "the instancetype's launch security wins over the preference",
            json!({}),
            true,
            true,
            settings("v1.9.0"),
            both(
                json!({"launchSecurity": {"tdx": {}}}),
                json!({"preferredLaunchSecurity": {"sev": {}}}),
            ),
            vec!["TDXNotLiveMigratable: launch security tdx"],
            vec![],
            vec![],
        ),
        // preference/apply/device_test.go:149, 160
        (
            "preferred masquerade on a binding-less pod interface",
            json!({"domain": {"devices": {"interfaces": [{"name": "default"}]}}, "networks": [{"name": "default", "pod": {}}]}),
            false,
            true,
            settings("v1.9.0"),
            with_pref(json!({"devices": {"preferredInterfaceMasquerade": {}}})),
            vec![],
            vec![],
            vec![],
        ),
        (
            "preferred masquerade does not replace sriov",
            json!({"domain": {"devices": {"interfaces": [{"name": "default", "sriov": {}}]}}, "networks": [{"name": "default", "pod": {}}]}),
            false,
            true,
            settings("v1.9.0"),
            with_pref(json!({"devices": {"preferredInterfaceMasquerade": {}}})),
            vec!["InterfaceNotLiveMigratable: sriov on pod network \"default\""],
            vec![],
            vec![],
        ),
        // preference/apply/device.go:34-50: preferredAutoattachPodInterface false → no default
        (
            "preferred autoattach false",
            json!({"domain": {"devices": {"autoattachPodInterface": null}}}),
            false,
            true,
            settings("v1.9.0"),
            with_pref(json!({"devices": {"preferredAutoattachPodInterface": false}})),
            vec![],
            vec![],
            vec![],
        ),
        // preference/apply/architecture_test.go:49, 58
        (
            "preferred architecture s390x",
            json!({"domain": {"launchSecurity": {}}}),
            false,
            true,
            settings("v1.9.0"),
            with_pref(json!({"preferredArchitecture": "s390x"})),
            vec!["SecureExecutionNotLiveMigratable: launch security on s390x"],
            vec![],
            vec![],
        ),
        (
            "the VM's architecture wins",
            json!({"architecture": "amd64", "domain": {"launchSecurity": {}}}),
            false,
            true,
            settings("v1.9.0"),
            with_pref(json!({"preferredArchitecture": "s390x"})),
            vec![],
            vec![],
            vec![],
        ),
        // preference/apply/features_test.go:90, 101
        (
            "preferred Hyper-V reenlightenment",
            json!({}),
            false,
            true,
            settings("v1.9.0"),
            with_pref(json!({"features": {"preferredHyperv": {"reenlightenment": {}}}})),
            vec![],
            vec![
                "NoTSCFrequencyNotLiveMigratable: Hyper-V reenlightenment, if no TSC frequency is known",
            ],
            vec![],
        ),
        (
            "the VM's reenlightenment wins",
            json!({"domain": {"features": {"hyperv": {"reenlightenment": {"enabled": false}}}}}),
            false,
            true,
            settings("v1.9.0"),
            with_pref(json!({"features": {"preferredHyperv": {"reenlightenment": {}}}})),
            vec![],
            vec![],
            vec![],
        ),
        // preference/apply/cpu.go:26-40: preferred invtsc
        (
            "preferred invtsc removes the TSC requirement",
            json!({"domain": {"features": {"hyperv": {"reenlightenment": {}}}}}),
            false,
            true,
            settings("v1.9.0"),
            with_pref(
                json!({"cpu": {"preferredCPUFeatures": [{"name": "invtsc", "policy": "require"}]}}),
            ),
            vec![],
            vec![],
            vec![],
        ),
    ];
    let mut failures = Vec::new();
    for (name, spec, it, pref, settings, cluster, want, want_node, want_other) in cases {
        let (reasons, node, other) = judge(typed(spec, it, pref), settings, &cluster);
        if reasons != want || node != want_node || other != want_other {
            failures.push(format!(
                "{name}: reasons {reasons:?} want {want:?}; node {node:?} want {want_node:?}; other {other:?} want {want_other:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn version_and_configuration_sources() {
    let one_gpu = || json!({"domain": {"devices": {"gpus": [{"name": "g", "deviceName": "nvidia.com/GRID_M10-2B"}]}}});
    let cr = |version: &str, gate: bool| {
        TestCluster::kubevirt(json!({
            "spec": {"configuration": {
                "developerConfiguration": {"featureGates": if gate { json!(["VGPULiveMigration"]) } else { json!([]) }},
                "permittedHostDevices": {"mediatedDevices": [{"resourceName": "nvidia.com/GRID_M10-2B"}]}}},
            "status": {"observedKubeVirtVersion": version}}))
    };
    let v18 = "HostDeviceNotLiveMigratable: GPU g";
    let gate = "HostDeviceNotLiveMigratable: GPU g without gate VGPULiveMigration";
    run(vec![
        (
            "the CR's observed v1.9 and its gate",
            one_gpu(),
            json!({}),
            cr("v1.9.0", true),
            vec![],
            vec![],
        ),
        (
            "the CR's observed v1.8.4",
            one_gpu(),
            json!({}),
            cr("v1.8.4", true),
            vec![v18],
            vec![],
        ),
        (
            "kubevirt.version wins over the CR",
            one_gpu(),
            json!({"kubevirt": {"version": "v1.9"}}),
            cr("v1.8.4", true),
            vec![],
            vec![],
        ),
        (
            "kubevirt.configuration wins over the CR",
            one_gpu(),
            json!({"kubevirt": {"configuration": {}}}),
            cr("v1.9.0", true),
            vec![gate],
            vec![],
        ),
        (
            "an unparseable observed version: the newest rules",
            one_gpu(),
            json!({}),
            cr("latest", true),
            vec![],
            vec![],
        ),
        (
            "no CR: defaults and v1.9 rules",
            one_gpu(),
            json!({}),
            TestCluster::default(),
            vec![gate],
            vec![],
        ),
        (
            "clusterLookups false: defaults and v1.9 rules",
            one_gpu(),
            json!({"clusterLookups": false}),
            cr("v1.8.4", true),
            vec![gate],
            vec![],
        ),
    ]);
}

#[test]
fn settings_version_and_configuration() {
    use vm_maintenance_strategy::settings::Settings;
    let table: Vec<(Value, Result<(), &str>)> = vec![
        (json!({"kubevirt": {"version": "v1.8.4"}}), Ok(())),
        (json!({"kubevirt": {"version": "1.9.0"}}), Ok(())),
        (json!({"kubevirt": {"version": "v1.9"}}), Ok(())),
        (
            json!({"kubevirt": {"version": "latest"}}),
            Err("kubevirt.version: \"latest\" is not a KubeVirt release such as v1.8.4"),
        ),
        (
            json!({"kubevirt": {"version": "v1.9.0-rc.1"}}),
            Err("kubevirt.version: \"v1.9.0-rc.1\" is not a KubeVirt release such as v1.8.4"),
        ),
        (
            json!({"kubevirt": {"version": "v1.7.4"}}),
            Err("kubevirt.version: v1.7.4 is not supported (supported: v1.8.x, v1.9.x)"),
        ),
        (
            json!({"kubevirt": {"version": "v2.0.0"}}),
            Err("kubevirt.version: v2.0.0 is not supported (supported: v1.8.x, v1.9.x)"),
        ),
        (
            json!({"kubevirt": {"version": 1.9}}),
            Err("kubevirt.version: invalid type: floating point `1.9`, expected a string"),
        ),
        // A copy of a real CR's configuration: the fields the policy does not read are ignored.
        (
            json!({"kubevirt": {"configuration": {"vmRolloutStrategy": "LiveUpdate", "imagePullPolicy": "IfNotPresent",
            "network": {"defaultNetworkInterface": "masquerade", "permitBridgeInterfaceOnPodNetwork": true},
            "developerConfiguration": {"featureGates": ["GPU"], "useEmulation": false}}}}),
            Ok(()),
        ),
        (
            json!({"kubevirt": {"configuration": {"network": {"defaultNetworkInterface": "passt"}}}}),
            Err(
                "kubevirt.configuration.network.defaultNetworkInterface: unknown value \"passt\" (valid: bridge, masquerade, slirp)",
            ),
        ),
        (
            json!({"kubevirt": {"configuration": {"network": {"defaultNetworkInterface": 1}}}}),
            Err(
                "kubevirt.configuration.network.defaultNetworkInterface: invalid type: integer `1`, expected a string",
            ),
        ),
        (
            json!({"kubevirt": {"configuration": {"developerConfiguration": {"featureGates": "VGPULiveMigration"}}}}),
            Err(
                "kubevirt.configuration.developerConfiguration.featureGates: invalid type: string \"VGPULiveMigration\", expected a sequence",
            ),
        ),
        (
            json!({"kubevirt": {"configuration": {"permittedHostDevices": {"mediatedDevices": [{"resourceName": 3}]}}}}),
            Err(
                "kubevirt.configuration.permittedHostDevices.mediatedDevices[0].resourceName: invalid type: integer `3`, expected a string",
            ),
        ),
        (
            json!({"kubevirt": {"configuration": {"evictionStrategy": "Drain"}}}),
            Err(
                "kubevirt.configuration.evictionStrategy: unknown value \"Drain\" (valid: LiveMigrate, LiveMigrateIfPossible, None, External)",
            ),
        ),
        (
            json!({"kubevirt": {"configuration": []}}),
            Err(
                "kubevirt.configuration: invalid type: sequence, expected an object (a copy of the KubeVirt CR's spec.configuration)",
            ),
        ),
    ];
    let mut failures = Vec::new();
    for (settings, want) in table {
        let got = Settings::load(settings.to_string().as_bytes()).map(|_| ());
        // serde's messages end with the position (` at line 1 column N`).
        let same = match (&got, &want) {
            (Ok(()), Ok(())) => true,
            (Err(got), Err(want)) => got.starts_with(want),
            _ => false,
        };
        if !same {
            failures.push(format!("{settings}: got {got:?}, want {want:?}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn eviction_strategy_precedence() {
    // clusterDefault, then kubevirt.configuration.evictionStrategy, then the live CR.
    let gpu = json!({"domain": {"devices": {"hostDevices": [{"name": "hd", "deviceName": "x"}]}}});
    let mut unset = vm(gpu);
    unset["spec"]["template"]["spec"]
        .as_object_mut()
        .map(|s| s.remove("evictionStrategy"));
    let reason = vec!["HostDeviceNotLiveMigratable: host device hd".to_owned()];
    let table: Vec<PrecedenceRow> = vec![
        (
            "clusterDefault wins over the configuration",
            json!({"evictionStrategy": {"clusterDefault": "LiveMigrate"}, "kubevirt": {"configuration": {"evictionStrategy": "None"}}}),
            TestCluster::strategy("None"),
            reason.clone(),
            vec![],
        ),
        (
            "the configuration setting wins over the CR",
            json!({"kubevirt": {"configuration": {"evictionStrategy": "LiveMigrate"}}}),
            TestCluster::strategy("None"),
            reason.clone(),
            vec![],
        ),
        (
            "the configuration setting None: no V7",
            json!({"kubevirt": {"configuration": {"evictionStrategy": "None"}}}),
            TestCluster::strategy("LiveMigrate"),
            vec![],
            vec![],
        ),
        (
            "the live CR last",
            json!({}),
            TestCluster::strategy("LiveMigrate"),
            reason.clone(),
            vec!["kubevirt"],
        ),
    ];
    let mut failures = Vec::new();
    for (name, settings, cluster, want, calls) in table {
        let (reasons, _, other) = judge(unset.clone(), settings, &cluster);
        let got_calls = cluster.calls.borrow().clone();
        if reasons != want || !other.is_empty() || got_calls != calls {
            failures.push(format!("{name}: {reasons:?} {other:?} calls {got_calls:?}"));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
