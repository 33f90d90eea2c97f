//! Cluster lookups (docs/rules.md, "Cluster lookups"): the KubeVirt CR's eviction strategy and
//! PVC access modes, with the cluster's answers as plain data. Every row also asserts the exact
//! lookups made, so "no lookup when it cannot change the outcome" is tested too.

mod common;

use common::{Case, TestCluster, fixture, patched, run, vm_request};
use serde_json::{Value, json};

const FIELD: &str = "spec.template.spec.evictionStrategy";
/// db-01's `host-model` CPU: node-dependent, a warning of its own.
const CPU: &str = "spec.template.spec.evictionStrategy: may block drains (CPUModeLiveMigratable: host-model CPU, if the node has no host model)";
const GPU_REASONS: &str = "HostDeviceNotLiveMigratable: host device harvester-node-2-000081000; HostDeviceNotLiveMigratable: GPU vgpu-0 without gate VGPULiveMigration";

/// ml-train-01 (a host device and a GPU) without an eviction strategy of its own.
fn gpu_vm() -> Value {
    patched(
        fixture("ml-train-01-gpu"),
        &json!([{"op": "remove", "path": "/spec/template/spec/evictionStrategy"}]),
    )
}

/// web-01 under its own LiveMigrate, its disk's claim made outside the VM (no Harvester
/// `volumeClaimTemplates`): the claim `default/web-01-disk-0-k2x7q` must be read.
fn external_claim_vm() -> Value {
    patched(
        fixture("web-01-migratable"),
        &json!([
            {"op": "replace", "path": "/spec/template/spec/evictionStrategy", "value": "LiveMigrate"},
            {"op": "remove", "path": "/metadata/annotations/harvesterhci.io~1volumeClaimTemplates"},
        ]),
    )
}

fn cluster_strategy(strategy: &str) -> TestCluster {
    TestCluster::strategy(strategy)
}

fn claim(modes: Vec<&'static str>) -> TestCluster {
    TestCluster {
        claims: vec![("default", "web-01-disk-0-k2x7q", modes)],
        ..TestCluster::default()
    }
}

fn create(vm: Value) -> Value {
    vm_request("CREATE", vm, None)
}

#[test]
fn cluster_eviction_strategy() {
    let warning = format!("{FIELD}: LiveMigrate blocks drains, not migratable ({GPU_REASONS})");
    let rejection = format!(
        "{FIELD}: VM cannot live-migrate ({GPU_REASONS}) and would block node drains with LiveMigrate; use LiveMigrateIfPossible or None"
    );
    run(vec![
        Case::new("cluster LiveMigrate, GPU VM, warn", create(gpu_vm()))
            .cluster(cluster_strategy("LiveMigrate"))
            .calls(&["kubevirt"])
            .warns(&warning),
        Case::new("cluster LiveMigrate, GPU VM, reject", create(gpu_vm()))
            .settings(json!({"evictionStrategy": {"nonMigratable": "reject"}}))
            .cluster(cluster_strategy("LiveMigrate"))
            .calls(&["kubevirt"])
            .rejects(&rejection),
        Case::new("cluster LiveMigrate, GPU VM, fix: one lookup for both steps", create(gpu_vm()))
            .settings(json!({"evictionStrategy": {"nonMigratable": "fix"}}))
            .cluster(cluster_strategy("LiveMigrate"))
            .calls(&["kubevirt"])
            .sets(
                "/spec/template/spec/evictionStrategy",
                json!("LiveMigrateIfPossible"),
            )
            .warns(format!(
                "{FIELD}: set to LiveMigrateIfPossible, not migratable ({GPU_REASONS})"
            )),
        Case::new("cluster LiveMigrate, GPU VM, ignore: no lookup", create(gpu_vm()))
            .settings(json!({"evictionStrategy": {"nonMigratable": "ignore"}}))
            .cluster(cluster_strategy("LiveMigrate")),
        Case::new("cluster LiveMigrateIfPossible: no V7", create(gpu_vm()))
            .cluster(cluster_strategy("LiveMigrateIfPossible"))
            .calls(&["kubevirt"]),
        Case::new("no KubeVirt CR: None, no V7", create(gpu_vm())).calls(&["kubevirt"]),
        Case::new(
            "the VM's own LiveMigrate: the CR read for its configuration (one GPU), not its strategy",
            create(patched(
                gpu_vm(),
                &json!([{"op": "add", "path": "/spec/template/spec/evictionStrategy", "value": "LiveMigrate"}]),
            )),
        )
        .cluster(cluster_strategy("None"))
        .calls(&["kubevirt"])
        .warns(&warning),
        Case::new("clusterDefault set: the CR read for the configuration only", create(gpu_vm()))
            .settings(json!({"evictionStrategy": {"clusterDefault": "LiveMigrate"}}))
            .cluster(cluster_strategy("None"))
            .calls(&["kubevirt"])
            .warns(&warning),
        Case::new("clusterDefault, version and configuration set: no lookup", create(gpu_vm()))
            .settings(json!({"evictionStrategy": {"clusterDefault": "LiveMigrate"},
                "kubevirt": {"version": "v1.9.0", "configuration": {}}}))
            .cluster(cluster_strategy("None"))
            .warns(&warning),
        Case::new(
            "a migratable VM without claims to read: no lookup",
            create(fixture("legacy-01-unlabelled")),
        )
        .cluster(cluster_strategy("LiveMigrate"))
        .sets(
            "/metadata/labels/harvesterhci.io~1maintain-mode-strategy",
            json!("Migrate"),
        ),
        Case::new("KubeVirt lookup denied: settings and spec, one warning", create(gpu_vm()))
            .cluster(TestCluster {
                kubevirt: Err("not granted".to_owned()),
                ..TestCluster::default()
            })
            .calls(&["kubevirt"])
            .warns("cluster lookup failed: KubeVirt CR (not granted), treated as None"),
        Case::new("clusterLookups: false: no lookup at all", create(gpu_vm()))
            .settings(json!({"clusterLookups": false}))
            .cluster(cluster_strategy("LiveMigrate")),
        Case::new(
            "clusterLookups: false, clusterDefault still applies",
            create(gpu_vm()),
        )
        .settings(json!({"clusterLookups": false, "evictionStrategy": {"clusterDefault": "LiveMigrate"}}))
        .warns(&warning),
    ]);
}

#[test]
fn claims_from_the_cluster() {
    let rwo = format!(
        "{FIELD}: LiveMigrate blocks drains, not migratable (DisksNotLiveMigratable: volume web-01-disk-0-k2x7q (ReadWriteOnce))"
    );
    let other_ns = {
        let mut request = create(external_claim_vm());
        request["namespace"] = json!("team-a");
        request
    };
    let db_without_templates = patched(
        fixture("db-01-rwo-livemigrate"),
        &json!([{"op": "remove", "path": "/spec/dataVolumeTemplates"}]),
    );
    run(vec![
        Case::new("RWO claim: a reason", create(external_claim_vm()))
            .cluster(claim(vec!["ReadWriteOnce"]))
            .calls(&["claim default/web-01-disk-0-k2x7q"])
            .warns(&rwo),
        Case::new("RWO claim, reject", create(external_claim_vm()))
            .settings(json!({"evictionStrategy": {"nonMigratable": "reject"}}))
            .cluster(claim(vec!["ReadWriteOnce"]))
            .calls(&["claim default/web-01-disk-0-k2x7q"])
            .rejects(format!("{FIELD}: VM cannot live-migrate (DisksNotLiveMigratable: volume web-01-disk-0-k2x7q (ReadWriteOnce)) and would block node drains with LiveMigrate; use LiveMigrateIfPossible or None")),
        Case::new("RWX claim: no reason", create(external_claim_vm()))
            .cluster(claim(vec!["ReadWriteOnce", "ReadWriteMany"]))
            .calls(&["claim default/web-01-disk-0-k2x7q"]),
        Case::new("ReadOnlyMany is not shared", create(external_claim_vm()))
            .cluster(claim(vec!["ReadOnlyMany"]))
            .calls(&["claim default/web-01-disk-0-k2x7q"])
            .warns(format!("{FIELD}: LiveMigrate blocks drains, not migratable (DisksNotLiveMigratable: volume web-01-disk-0-k2x7q (ReadOnlyMany))")),
        Case::new("missing claim: not a reason, one warning", create(external_claim_vm()))
            .calls(&["claim default/web-01-disk-0-k2x7q"])
            .warns("cluster lookup failed: PVC default/web-01-disk-0-k2x7q (persistentvolumeclaims \"web-01-disk-0-k2x7q\" not found), not checked"),
        Case::new("claim lookup denied", create(external_claim_vm()))
            .cluster(TestCluster {
                claims_fail: Some("not granted".to_owned()),
                ..TestCluster::default()
            })
            .calls(&["claim default/web-01-disk-0-k2x7q"])
            .warns("cluster lookup failed: PVC default/web-01-disk-0-k2x7q (not granted), not checked"),
        Case::new("the request's namespace wins", other_ns)
            .cluster(claim(vec!["ReadWriteOnce"]))
            .calls(&["claim team-a/web-01-disk-0-k2x7q"])
            .warns("cluster lookup failed: PVC team-a/web-01-disk-0-k2x7q (persistentvolumeclaims \"web-01-disk-0-k2x7q\" not found), not checked"),
        Case::new("a DataVolume volume is read as its PVC", create(db_without_templates))
            .cluster(TestCluster {
                claims: vec![("prod", "db-01-data", vec!["ReadWriteOnce"])],
                ..TestCluster::default()
            })
            .calls(&["claim prod/db-01-data"])
            .warns(format!("{FIELD}: LiveMigrate blocks drains, not migratable (DisksNotLiveMigratable: volume db-01-data (ReadWriteOnce))"))
            .warns(CPU),
        Case::new(
            "claims from the VM's own templates are read from the spec",
            create(fixture("db-01-rwo-livemigrate")),
        )
        .cluster(claim(vec!["ReadWriteMany"]))
        .warns(format!("{FIELD}: LiveMigrate blocks drains, not migratable (DisksNotLiveMigratable: volume db-01-data (ReadWriteOnce))"))
        .warns(CPU),
        Case::new(
            "KubeVirt first, then claims",
            create(patched(
                external_claim_vm(),
                &json!([{"op": "remove", "path": "/spec/template/spec/evictionStrategy"}]),
            )),
        )
        .cluster(TestCluster {
            kubevirt: TestCluster::strategy("LiveMigrate").kubevirt,
            ..claim(vec!["ReadWriteOnce"])
        })
        .calls(&["kubevirt", "claim default/web-01-disk-0-k2x7q"])
        .warns(&rwo),
        Case::new(
            "under LiveMigrateIfPossible the claims are not read",
            create(patched(
                external_claim_vm(),
                &json!([{"op": "replace", "path": "/spec/template/spec/evictionStrategy", "value": "LiveMigrateIfPossible"}]),
            )),
        )
        .cluster(claim(vec!["ReadWriteOnce"])),
    ]);
}

#[test]
fn assessment_reads_everything() {
    use vm_maintenance_strategy::eviction::{StrategySource, assess};
    use vm_maintenance_strategy::reason::{Reason, ReasonKind};
    use vm_maintenance_strategy::settings::Settings;
    use vm_maintenance_strategy::strategy::EvictionStrategy;
    let settings = Settings::default();
    let cluster = TestCluster {
        kubevirt: TestCluster::strategy("LiveMigrate").kubevirt,
        ..claim(vec!["ReadWriteOnce"])
    };
    let vm = patched(
        external_claim_vm(),
        &json!([{"op": "remove", "path": "/spec/template/spec/evictionStrategy"}]),
    );
    let got = assess(&vm, &settings, &cluster);
    assert_eq!(got.eviction_strategy, Some(EvictionStrategy::LiveMigrate));
    assert_eq!(got.source, StrategySource::Cluster);
    assert_eq!(
        got.reasons,
        [Reason::new(
            ReasonKind::DisksNotLiveMigratable,
            "volume web-01-disk-0-k2x7q (ReadWriteOnce)"
        )]
    );
    assert!(got.warnings.is_empty(), "{:?}", got.warnings);

    let offline: Settings = Settings::load(br#"{"clusterLookups": false}"#).expect("settings");
    let got = assess(&vm, &offline, &cluster);
    assert_eq!(
        (got.eviction_strategy, got.source),
        (None, StrategySource::Default)
    );
    assert!(got.reasons.is_empty());
}

const IT: &str = "VirtualMachineClusterInstancetype";
const PREF: &str = "VirtualMachineClusterPreference";
const IT_GPU: &str = "HostDeviceNotLiveMigratable: GPU gpu0 without gate VGPULiveMigration";

/// legacy-01 (masquerade, an RWX claim template) of the cluster instancetype `gn1.xlarge` and
/// the cluster preference `windows`, `strategy` its own eviction strategy (`None`: none).
fn typed_vm(strategy: Option<&str>) -> Value {
    let mut vm = fixture("legacy-01-unlabelled");
    let labels = json!({"harvesterhci.io/maintain-mode-strategy": "Migrate"});
    vm["metadata"]["labels"] = labels.clone();
    vm["spec"]["template"]["metadata"] = json!({"labels": labels});
    vm["spec"]["instancetype"] = json!({"name": "gn1.xlarge"});
    vm["spec"]["preference"] =
        json!({"name": "windows", "kind": "VirtualMachineClusterPreference"});
    if let Some(strategy) = strategy {
        vm["spec"]["template"]["spec"]["evictionStrategy"] = json!(strategy);
    }
    vm
}

/// gn1.xlarge (one GPU) and windows (Hyper-V reenlightenment).
fn typed_cluster(base: TestCluster) -> TestCluster {
    base.with(
        IT,
        None,
        "gn1.xlarge",
        json!({"cpu": {"guest": 4}, "memory": {"guest": "16Gi"},
            "gpus": [{"name": "gpu0", "deviceName": "nvidia.com/TU104GL_Tesla_T4"}]}),
    )
    .with(
        PREF,
        None,
        "windows",
        json!({"features": {"preferredHyperv": {"reenlightenment": {}}}}),
    )
}

#[test]
fn instancetype_and_preference_lookups() {
    let warn = format!("{FIELD}: LiveMigrate blocks drains, not migratable ({IT_GPU})");
    let tsc = format!(
        "{FIELD}: may block drains (NoTSCFrequencyNotLiveMigratable: Hyper-V reenlightenment, if no TSC frequency is known)"
    );
    let known = json!({"kubevirt": {"version": "v1.9.0", "configuration": {}}});
    let with_claim = |mut vm: Value| {
        vm["metadata"]["annotations"]
            .as_object_mut()
            .map(|a| a.remove("harvesterhci.io/volumeClaimTemplates"));
        vm
    };
    let claim_cluster = |base: TestCluster| TestCluster {
        claims: vec![("default", "legacy-01-disk-0-9tcd4", vec!["ReadWriteMany"])],
        ..typed_cluster(base)
    };
    let namespaced = {
        let mut vm = typed_vm(Some("LiveMigrate"));
        vm["spec"]["instancetype"]["kind"] = json!("virtualmachineinstancetypes");
        vm["spec"].as_object_mut().map(|s| s.remove("preference"));
        vm
    };
    run(vec![
        Case::new("answered: the instancetype's GPU and the preference's Hyper-V", create(typed_vm(Some("LiveMigrate"))))
            .settings(known.clone())
            .cluster(typed_cluster(TestCluster::default()))
            .calls(&[&format!("{IT} gn1.xlarge"), &format!("{PREF} windows")])
            .warns(&warn)
            .warns(&tsc),
        Case::new("the CR after the instancetype when its GPU needs the configuration", create(typed_vm(Some("LiveMigrate"))))
            .cluster(typed_cluster(TestCluster::kubevirt(json!({"spec": {"configuration": {}}, "status": {"observedKubeVirtVersion": "v1.8.4"}}))))
            .calls(&[&format!("{IT} gn1.xlarge"), &format!("{PREF} windows"), "kubevirt"])
            .warns(format!("{FIELD}: LiveMigrate blocks drains, not migratable (HostDeviceNotLiveMigratable: GPU gpu0)"))
            .warns(&tsc),
        Case::new("call order: KubeVirt CR, instancetype, preference, claims", create(with_claim(typed_vm(None))))
            .cluster(claim_cluster(TestCluster::strategy("LiveMigrate")))
            .calls(&["kubevirt", &format!("{IT} gn1.xlarge"), &format!("{PREF} windows"), "claim default/legacy-01-disk-0-9tcd4"])
            .warns(&warn)
            .warns(&tsc),
        Case::new("call order with the strategy from the settings: the CR read for the configuration, then claims",
            create(with_claim(typed_vm(None))))
            .settings(json!({"evictionStrategy": {"clusterDefault": "LiveMigrate"}}))
            .cluster(claim_cluster(TestCluster::strategy("None")))
            .calls(&[&format!("{IT} gn1.xlarge"), &format!("{PREF} windows"), "kubevirt", "claim default/legacy-01-disk-0-9tcd4"])
            .warns(&warn)
            .warns(&tsc),
        Case::new("failed: the VM's own spec, one warning", create(typed_vm(Some("LiveMigrate"))))
            .settings(known.clone())
            .cluster(TestCluster { instancetypes_fail: Some("not granted".to_owned()), ..TestCluster::default() })
            .calls(&[&format!("{IT} gn1.xlarge"), &format!("{PREF} windows")])
            .warns(format!("cluster lookup failed: {IT} gn1.xlarge (not granted), not applied; {PREF} windows (not granted), not applied")),
        Case::new("not found: the same fallback", create(typed_vm(Some("LiveMigrate"))))
            .settings(known.clone())
            .calls(&[&format!("{IT} gn1.xlarge"), &format!("{PREF} windows")])
            .warns(format!("cluster lookup failed: {IT} gn1.xlarge ({IT} \"gn1.xlarge\" not found), not applied; {PREF} windows ({PREF} \"windows\" not found), not applied")),
        Case::new("not needed under LiveMigrateIfPossible: no call", create(typed_vm(Some("LiveMigrateIfPossible"))))
            .cluster(typed_cluster(TestCluster::strategy("LiveMigrate"))),
        Case::new("not needed with nonMigratable ignore: no call", create(typed_vm(Some("LiveMigrate"))))
            .settings(json!({"evictionStrategy": {"nonMigratable": "ignore"}}))
            .cluster(typed_cluster(TestCluster::strategy("LiveMigrate"))),
        Case::new("clusterLookups false: no call, the VM's own spec", create(typed_vm(Some("LiveMigrate"))))
            .settings(json!({"clusterLookups": false}))
            .cluster(typed_cluster(TestCluster::strategy("LiveMigrate"))),
        Case::new("the cluster CR says None: the instancetype is not read", create(typed_vm(None)))
            .cluster(typed_cluster(TestCluster::strategy("None")))
            .calls(&["kubevirt"]),
        Case::new("a namespaced kind, matched case-insensitively, in the VM's namespace", create(namespaced))
            .settings(known.clone())
            .cluster(TestCluster::default().with(
                "VirtualMachineInstancetype",
                Some("default"),
                "gn1.xlarge",
                json!({"hostDevices": [{"name": "nic", "deviceName": "intel.com/e810"}]}),
            ))
            .calls(&["VirtualMachineInstancetype default/gn1.xlarge"])
            .warns(format!("{FIELD}: LiveMigrate blocks drains, not migratable (HostDeviceNotLiveMigratable: host device nic)")),
        Case::new("an unknown kind: no call, a warning", create({
            let mut vm = typed_vm(Some("LiveMigrate"));
            vm["spec"]["instancetype"]["kind"] = json!("Flavor");
            vm["spec"].as_object_mut().map(|s| s.remove("preference"));
            vm
        }))
            .settings(known.clone())
            .warns("spec.instancetype.kind: unknown kind \"flavor\", not applied"),
        Case::new("a conflict with the VM: a warning, nothing applied", create({
            let mut vm = typed_vm(Some("LiveMigrate"));
            vm["spec"]["template"]["spec"]["domain"]["devices"]["gpus"] = json!([{"name": "own", "deviceName": "x"}]);
            vm
        }))
            .settings(json!({"kubevirt": {"version": "v1.8.4", "configuration": {}}}))
            .cluster(typed_cluster(TestCluster::default()))
            .calls(&[&format!("{IT} gn1.xlarge"), &format!("{PREF} windows")])
            .warns(format!("spec.instancetype: {IT} gn1.xlarge conflicts with the VM in gpus; KubeVirt rejects the VM"))
            .warns(format!("{FIELD}: LiveMigrate blocks drains, not migratable (HostDeviceNotLiveMigratable: GPU own)")),
        Case::new("fix: each lookup once for mutation and validation", create(typed_vm(None)))
            .settings(json!({"evictionStrategy": {"nonMigratable": "fix"}}))
            .cluster(typed_cluster(TestCluster::strategy("LiveMigrate")))
            .calls(&["kubevirt", &format!("{IT} gn1.xlarge"), &format!("{PREF} windows")])
            .sets("/spec/template/spec/evictionStrategy", json!("LiveMigrateIfPossible"))
            .warns(format!("{FIELD}: set to LiveMigrateIfPossible, not migratable ({IT_GPU})")),
    ]);
}

/// The host's reading of a `list_resources_all` answer: the items count, the list's own
/// `apiVersion`/`kind` do not (`kubevirt.io/v1 KubeVirtList` or kube-rs' plain `v1 List`).
#[test]
fn kubevirt_list_answers() {
    use vm_maintenance_strategy::cluster::kubevirt_from_list;
    let cr = json!({
        "apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"configuration": {"evictionStrategy": "LiveMigrate", "network": {"defaultNetworkInterface": "masquerade"}}},
        "status": {"observedKubeVirtVersion": "v1.9.0"},
    });
    // (what, the list answer, the CR's (evictionStrategy, observed version) or no CR)
    type Want = Option<(&'static str, &'static str)>;
    let table: Vec<(&str, Value, Want)> = vec![
        (
            "KubeVirtList",
            json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirtList", "metadata": {}, "items": [cr]}),
            Some(("LiveMigrate", "v1.9.0")),
        ),
        (
            "plain v1 List",
            json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [cr]}),
            Some(("LiveMigrate", "v1.9.0")),
        ),
        (
            "items without apiVersion and kind",
            json!({"apiVersion": "v1", "kind": "List", "items": [{"spec": cr["spec"], "status": cr["status"]}]}),
            Some(("LiveMigrate", "v1.9.0")),
        ),
        (
            "empty list",
            json!({"apiVersion": "v1", "kind": "List", "items": []}),
            None,
        ),
        (
            "items null",
            json!({"apiVersion": "v1", "kind": "List", "items": null}),
            None,
        ),
        (
            "no items",
            json!({"apiVersion": "v1", "kind": "List"}),
            None,
        ),
    ];
    for (what, list, want) in table {
        let got = kubevirt_from_list(list.to_string().as_bytes())
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let read = got.as_ref().map(|cr| {
            (
                cr.configuration
                    .eviction_strategy
                    .as_deref()
                    .unwrap_or_default(),
                cr.observed_version.as_deref().unwrap_or_default(),
            )
        });
        assert_eq!(read, want, "{what}");
        if let Some(cr) = got {
            let network = cr
                .configuration
                .network
                .and_then(|n| n.default_network_interface);
            assert_eq!(network.as_deref(), Some("masquerade"), "{what}");
        }
    }
    let malformed = kubevirt_from_list(b"{\"items\": 3}");
    assert!(
        malformed
            .as_ref()
            .is_err_and(|e| e.starts_with("list all resources response: invalid type")),
        "{malformed:?}"
    );
}

/// The three situations found through the real kwctl: own templates under reject, the CR's
/// configuration read through the lookup, the CR's strategy followed by a namespaced instancetype.
#[test]
fn own_templates_and_the_cr_read_through_a_lookup() {
    let reject = json!({"evictionStrategy": {"nonMigratable": "reject"}});
    let rejection = |reasons: &str| {
        format!(
            "{FIELD}: VM cannot live-migrate ({reasons}) and would block node drains with LiveMigrate; use LiveMigrateIfPossible or None"
        )
    };
    let pvc_template = patched(
        fixture("db-01-rwo-livemigrate"),
        &json!([{"op": "move", "from": "/spec/dataVolumeTemplates/0/spec/storage", "path": "/spec/dataVolumeTemplates/0/spec/pvc"}]),
    );
    let rwx_in_cluster = TestCluster {
        claims: vec![("prod", "db-01-data", vec!["ReadWriteMany"])],
        ..TestCluster::default()
    };
    let harvester_rwo = patched(
        fixture("web-01-migratable"),
        &json!([
            {"op": "replace", "path": "/spec/template/spec/evictionStrategy", "value": "LiveMigrate"},
            {"op": "replace", "path": "/metadata/annotations/harvesterhci.io~1volumeClaimTemplates",
             "value": "[{\"metadata\": {\"name\": \"web-01-disk-0-k2x7q\"}, \"spec\": {\"accessModes\": [\"ReadWriteOnce\"]}}]"},
        ]),
    );
    let no_interfaces = patched(
        fixture("legacy-01-unlabelled"),
        &json!([
            {"op": "add", "path": "/spec/template/spec/evictionStrategy", "value": "LiveMigrate"},
            {"op": "remove", "path": "/spec/template/spec/domain/devices/interfaces"},
            {"op": "remove", "path": "/spec/template/spec/networks"},
        ]),
    );
    let masquerade = TestCluster::kubevirt(
        json!({"spec": {"configuration": {"network": {"defaultNetworkInterface": "masquerade"}}}}),
    );
    let vgpu_vm = patched(
        fixture("web-01-migratable"),
        &json!([
            {"op": "replace", "path": "/spec/template/spec/evictionStrategy", "value": "LiveMigrate"},
            {"op": "add", "path": "/spec/instancetype", "value": {"name": "gl40s"}},
        ]),
    );
    let vgpu_cluster = TestCluster::kubevirt(json!({
        "spec": {"configuration": {
            "developerConfiguration": {"featureGates": ["VGPULiveMigration"]},
            "permittedHostDevices": {"mediatedDevices": [{"resourceName": "nvidia.com/L40S-24Q"}]},
        }},
        "status": {"observedKubeVirtVersion": "v1.9.0"},
    }))
    .with(
        "VirtualMachineClusterInstancetype",
        None,
        "gl40s",
        json!({"gpus": [{"name": "vgpu0", "deviceName": "nvidia.com/L40S-24Q"}]}),
    );
    let host_device_vm = patched(
        fixture("web-01-migratable"),
        &json!([
            {"op": "remove", "path": "/spec/template/spec/evictionStrategy"},
            {"op": "add", "path": "/spec/instancetype", "value": {"name": "passthrough", "kind": "VirtualMachineInstancetype"}},
        ]),
    );
    let host_device_cluster = cluster_strategy("LiveMigrate").with(
        "VirtualMachineInstancetype",
        Some("default"),
        "passthrough",
        json!({"hostDevices": [{"name": "nic-vf", "deviceName": "intel.com/sriov_vf"}]}),
    );
    run(vec![
        Case::new(
            "own RWO dataVolumeTemplate (pvc form), RWX claim in the cluster",
            create(pvc_template),
        )
        .settings(reject.clone())
        .cluster(rwx_in_cluster)
        .rejects(rejection(
            "DisksNotLiveMigratable: volume db-01-data (ReadWriteOnce)",
        ))
        .warns(CPU),
        Case::new(
            "own RWO template in Harvester's annotation",
            create(harvester_rwo),
        )
        .settings(reject.clone())
        .cluster(claim(vec!["ReadWriteMany"]))
        .rejects(rejection(
            "DisksNotLiveMigratable: volume web-01-disk-0-k2x7q (ReadWriteOnce)",
        )),
        Case::new(
            "the CR's default interface masquerade, read for the configuration",
            create(no_interfaces),
        )
        .settings(reject.clone())
        .cluster(masquerade)
        .calls(&["kubevirt"])
        .sets(
            "/metadata/labels/harvesterhci.io~1maintain-mode-strategy",
            json!("Migrate"),
        ),
        Case::new(
            "the CR's vGPU gate and mediated device, after the instancetype",
            create(vgpu_vm),
        )
        .settings(reject.clone())
        .cluster(vgpu_cluster)
        .calls(&["VirtualMachineClusterInstancetype gl40s", "kubevirt"]),
        Case::new(
            "the CR's LiveMigrate, then a namespaced instancetype's host device",
            create(host_device_vm),
        )
        .settings(reject)
        .cluster(host_device_cluster)
        .calls(&["kubevirt", "VirtualMachineInstancetype default/passthrough"])
        .rejects(rejection("HostDeviceNotLiveMigratable: host device nic-vf")),
    ]);
}
