//! The benchmark scenarios as `validate` payloads, and the peer's Namespace requests matched to
//! ours in bytes and JSON nodes.

use policy_host::fixture;
use serde_json::{Value, json};

use crate::{bytes, nodes};

pub const K: &str = "harvesterhci.io/maintain-mode-strategy";

pub struct Scenario {
    /// Short id (criterion directory names; letters, digits and `-`).
    pub id: &'static str,
    pub what: &'static str,
    pub request: Value,
    pub settings: Value,
    /// The cluster the host answers lookups from (`None`: the plain host, no lookups expected).
    pub cluster: Option<Vec<Value>>,
}

impl Scenario {
    /// The bytes `validate` receives.
    pub fn payload(&self) -> Vec<u8> {
        payload(&self.request, &self.settings)
    }
}

pub fn payload(request: &Value, settings: &Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap_or_default()
}

/// An AdmissionRequest as the API server sends it.
pub fn admission_request(
    group: &str,
    kind: &str,
    resource: &str,
    operation: &str,
    object: &Value,
    old: Option<&Value>,
) -> Value {
    let gvk = json!({"group": group, "version": "v1", "kind": kind});
    let gvr = json!({"group": group, "version": "v1", "resource": resource});
    let mut request = json!({
        "uid": "1299d386-525b-4032-98ae-1949f69f9cfc",
        "kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
        "name": object.pointer("/metadata/name").cloned().unwrap_or(Value::Null),
        "namespace": object.pointer("/metadata/namespace").cloned().unwrap_or(Value::Null),
        "operation": operation,
        "userInfo": {"username": "system:serviceaccount:harvester-system:harvester", "uid": "7c3a1f52-0d2e-4b8e-9f1a-3e5d2c4b6a70", "groups": ["system:serviceaccounts", "system:serviceaccounts:harvester-system", "system:authenticated"]},
        "object": object,
        "oldObject": old.cloned().unwrap_or(Value::Null),
        "dryRun": false,
        "options": {"kind": if operation == "UPDATE" { "UpdateOptions" } else { "CreateOptions" }, "apiVersion": "meta.k8s.io/v1", "fieldManager": "harvester"},
    });
    // The API server omits what a cluster-scoped object lacks (the SDK wants strings there).
    if let Some(fields) = request.as_object_mut() {
        fields.retain(|key, value| !(value.is_null() && (key == "name" || key == "namespace")));
    }
    request
}

fn vm_request(operation: &str, object: &Value, old: Option<&Value>) -> Value {
    admission_request(
        "kubevirt.io",
        "VirtualMachine",
        "virtualmachines",
        operation,
        object,
        old,
    )
}

fn load(name: &str) -> Value {
    fixture(name).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// What the API server adds to every stored object.
fn server_metadata(object: &mut Value, i: usize) {
    let meta = &mut object["metadata"];
    meta["uid"] = json!(format!("3f6b2a1c-8d4e-4f0a-9b7c-{i:012}"));
    meta["resourceVersion"] = json!("4811093");
    meta["generation"] = json!(3);
    meta["creationTimestamp"] = json!("2026-11-02T09:14:27Z");
    meta["finalizers"] = json!([
        "kubevirt.io/virtualMachineControllerFinalize",
        "wrangler.cattle.io/VMController.UnsetOwnerOfPVCs"
    ]);
}

/// `n` more disks (PVCs that are not the VM's own templates: not a V7 reason).
fn add_disks(vm: &mut Value, from: usize, n: usize) {
    for i in from..from + n {
        let name = format!("data-{i}");
        if let Some(disks) =
            vm["spec"]["template"]["spec"]["domain"]["devices"]["disks"].as_array_mut()
        {
            disks.push(json!({"name": name, "disk": {"bus": "virtio"}}));
        }
        if let Some(volumes) = vm["spec"]["template"]["spec"]["volumes"].as_array_mut() {
            volumes.push(json!({"name": name, "persistentVolumeClaim": {"claimName": format!("web-01-{name}-x8k2p")}}));
        }
    }
}

/// The web-01 fixture grown with disks until the request reaches `target` bytes.
fn vm_of_size(target: usize, labelled: bool) -> Value {
    let mut vm = load("web-01-migratable");
    server_metadata(&mut vm, 1);
    if !labelled {
        for labels in ["/metadata/labels", "/spec/template/metadata/labels"] {
            if let Some(map) = vm.pointer_mut(labels).and_then(Value::as_object_mut) {
                map.remove(K);
            }
        }
    }
    let mut i = 1;
    while bytes(&vm_request("CREATE", &vm, None)) < target {
        add_disks(&mut vm, i, 1);
        i += 1;
    }
    vm
}

/// A VM of 1 MiB without the label: 2,000 disks, then 4 KiB annotations up to 1 MiB.
fn vm_1mib() -> Value {
    let mut vm = vm_of_size(0, false);
    add_disks(&mut vm, 1, 2000);
    let mut i = 0;
    while bytes(&vm_request("CREATE", &vm, None)) < 1024 * 1024 {
        vm["metadata"]["annotations"][format!("example.com/note-{i}")] = json!("x".repeat(4096));
        i += 1;
    }
    vm
}

/// A VM of 1 MiB with many of everything a VM grows: 3,000 labels on the VM and as many in its
/// template, 1,000 disks, then 64-byte annotations up to 1 MiB; `labelled`: the label and its
/// template copy set (no change), else both added (the mutation edits two maps of 3,000 members).
fn vm_1mib_many(labelled: bool) -> Value {
    let mut vm = vm_of_size(0, labelled);
    add_disks(&mut vm, 1, 1000);
    for i in 0..3000 {
        for labels in ["/metadata/labels", "/spec/template/metadata/labels"] {
            if let Some(map) = vm.pointer_mut(labels).and_then(Value::as_object_mut) {
                map.insert(format!("example.com/team-{i}"), json!(format!("value-{i}")));
            }
        }
    }
    let mut i = 0;
    while bytes(&vm_request("CREATE", &vm, None)) < 1024 * 1024 {
        vm["metadata"]["annotations"][format!("example.com/note-{i}")] = json!("x".repeat(64));
        i += 1;
    }
    vm
}

/// `vm` with `spec.template.spec.evictionStrategy` set to `strategy`.
fn with_eviction_strategy(vm: &Value, strategy: &str) -> Value {
    let mut vm = vm.clone();
    vm["spec"]["template"]["spec"]["evictionStrategy"] = json!(strategy);
    vm
}

/// Every scenario of the table, in order.
pub fn all() -> Vec<Scenario> {
    let mutate = vm_of_size(5 * 1024, false);
    let consistent = vm_of_size(5 * 1024, true);
    let mut legacy = vm_of_size(5 * 1024, true);
    legacy["metadata"]["labels"][K] = json!("migrate");
    legacy["spec"]["template"]["metadata"]["labels"]
        .as_object_mut()
        .map(|m| m.remove(K));
    let mut kubevirt = load("kubevirt-cr");
    server_metadata(&mut kubevirt, 2);
    let mut config_map = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "app-config", "namespace": "default"}, "data": {}});
    server_metadata(&mut config_map, 3);
    for i in 0..40 {
        config_map["data"][format!("key-{i}.properties")] = json!("value=".repeat(16));
    }
    let live_migrate = with_eviction_strategy(&consistent, "LiveMigrate");
    let mut scenarios = vec![
        Scenario {
            id: "vm-create-mutate",
            what: "5 KB VM CREATE without the label (M1 + M2)",
            request: vm_request("CREATE", &mutate, None),
            settings: json!({}),
            cluster: None,
        },
        Scenario {
            id: "vm-consistent",
            what: "5 KB VM CREATE, label and template copy set (no change)",
            request: vm_request("CREATE", &consistent, None),
            settings: json!({}),
            cluster: None,
        },
        Scenario {
            id: "vm-live-migrate",
            what: "5 KB VM CREATE under LiveMigrate, no change (V7 reads its devices and volumes)",
            request: vm_request("CREATE", &live_migrate, None),
            settings: json!({"clusterLookups": false}),
            cluster: None,
        },
        Scenario {
            id: "vm-update-legacy",
            what: "5 KB VM UPDATE keeping an invalid value, oldObject (V2 + M2)",
            request: vm_request("UPDATE", &legacy, Some(&legacy)),
            settings: json!({}),
            cluster: None,
        },
        Scenario {
            id: "vm-1mib",
            what: "1 MiB VM CREATE without the label (2,000 disks, 4 KiB annotations)",
            request: vm_request("CREATE", &vm_1mib(), None),
            settings: json!({}),
            cluster: None,
        },
        Scenario {
            id: "kubevirt-cr",
            what: "KubeVirt CR UPDATE (K1-K3)",
            request: admission_request(
                "kubevirt.io",
                "KubeVirt",
                "kubevirts",
                "UPDATE",
                &kubevirt,
                Some(&kubevirt),
            ),
            settings: json!({}),
            cluster: None,
        },
        Scenario {
            id: "other-kind",
            what: "5 KB ConfigMap CREATE (gated out)",
            request: admission_request("", "ConfigMap", "configmaps", "CREATE", &config_map, None),
            settings: json!({}),
            cluster: None,
        },
    ];
    scenarios.extend(many_scenarios());
    scenarios.extend(cluster_lookup_scenario());
    scenarios
}

/// The 1 MiB VM with many labels, annotations and volumes, mutating and not: time per KB against
/// the 5 KB VMs (linear in the object).
fn many_scenarios() -> [Scenario; 2] {
    [
        Scenario {
            id: "vm-1mib-many-mutate",
            what: "1 MiB VM CREATE without the label: 3,000 labels on the VM and its template, 1,000 disks, annotations",
            request: vm_request("CREATE", &vm_1mib_many(false), None),
            settings: json!({}),
            cluster: None,
        },
        Scenario {
            id: "vm-1mib-many-consistent",
            what: "the same 1 MiB VM with the label and its template copy set (no change)",
            request: vm_request("CREATE", &vm_1mib_many(true), None),
            settings: json!({}),
            cluster: None,
        },
    ]
}

/// A VM whose V7 decision needs the cluster: no eviction strategy of its own and none in the
/// settings, so the KubeVirt CR is listed (it says `LiveMigrate`), then every PVC volume that is
/// not one of the VM's own templates is read (one is `ReadWriteOnce`: a V7 warning). The host
/// answers from memory (`policy_host::Cluster`; natively `cluster_model::objects::ObjectCluster`).
pub fn cluster_lookup_scenario() -> Option<Scenario> {
    let mut vm = vm_of_size(5 * 1024, true);
    vm["spec"]["template"]["spec"]
        .as_object_mut()
        .map(|s| s.remove("evictionStrategy"));
    let namespace = vm["metadata"]["namespace"]
        .as_str()
        .unwrap_or("default")
        .to_owned();
    let mut kubevirt = load("kubevirt-cr");
    kubevirt["spec"]["configuration"]["evictionStrategy"] = json!("LiveMigrate");
    let mut objects = vec![kubevirt];
    let claims: Vec<String> = vm["spec"]["template"]["spec"]["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| {
            v.pointer("/persistentVolumeClaim/claimName")?
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    for (i, claim) in claims.iter().enumerate() {
        let mode = if i == claims.len() - 1 {
            "ReadWriteOnce"
        } else {
            "ReadWriteMany"
        };
        objects.push(json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": claim, "namespace": namespace},
            "spec": {"accessModes": [mode], "resources": {"requests": {"storage": "10Gi"}}, "volumeMode": "Block"},
        }));
    }
    Some(Scenario {
        id: "vm-cluster-lookups",
        what: "5 KB VM CREATE without its own eviction strategy: KubeVirt CR list + a get per PVC",
        request: vm_request("CREATE", &vm, None),
        settings: json!({}),
        cluster: Some(objects),
    })
}

/// The peer's request: a Namespace padded with short annotations until the AdmissionRequest's
/// JSON has exactly `target_bytes` bytes and `target_nodes` nodes; `labelled` = it already has
/// the label the peer sets (no change).
pub fn peer_namespace(target_bytes: usize, target_nodes: usize, labelled: bool) -> Value {
    let mut namespace = json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "team-a", "labels": {"kubernetes.io/metadata.name": "team-a"}, "annotations": {}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    });
    server_metadata(&mut namespace, 4);
    if labelled {
        namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] = json!("restricted");
    }
    let build = |ns: &Value| admission_request("", "Namespace", "namespaces", "CREATE", ns, None);
    let base = build(&namespace);
    let count = target_nodes.saturating_sub(nodes(&base));
    for i in 0..count {
        namespace["metadata"]["annotations"][format!("a{i}")] = json!("");
    }
    // Spread the missing bytes over the annotation values.
    let missing = target_bytes.saturating_sub(bytes(&build(&namespace)));
    if count > 0 {
        for i in 0..count {
            let len = missing / count + usize::from(i < missing % count);
            namespace["metadata"]["annotations"][format!("a{i}")] = json!("x".repeat(len));
        }
    }
    build(&namespace)
}

/// The peer's settings: enforce `restricted`.
pub fn peer_settings() -> Value {
    json!({"modes": {"enforce": "restricted"}})
}
