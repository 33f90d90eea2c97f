//! Helpers shared by the native tests that call the policy crate's functions directly (the rule
//! tables are the YAML cases of e2e-tests/cases/): fixtures, requests, a cluster of plain data.
#![allow(dead_code)]

use serde_json::{Value, json};

pub const K: &str = "harvesterhci.io/maintain-mode-strategy";

/// A fixture from `fixtures/` as JSON.
pub fn fixture(name: &str) -> Value {
    let path = format!("{}/fixtures/{name}.yaml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `doc` with an RFC 6902 patch applied.
pub fn patched(mut doc: Value, patch: &Value) -> Value {
    let patch: json_patch::Patch = serde_json::from_value(patch.clone()).expect("patch syntax");
    json_patch::patch(&mut doc, &patch).expect("patch applies");
    doc
}

pub fn vm_request(operation: &str, object: Value, old: Option<Value>) -> Value {
    json!({
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
        "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
        "resource": {"group": "kubevirt.io", "version": "v1", "resource": "virtualmachines"},
        "operation": operation,
        "object": object,
        "oldObject": old,
        "dryRun": false,
    })
}

/// Evaluates natively through the crate's `rlib`: the same function the waPC export calls, with
/// an empty cluster (no KubeVirt CR, no claims).
pub fn evaluate(request: Value, settings: Value) -> Value {
    evaluate_with(request, settings, &TestCluster::default())
}

/// Evaluates with the cluster's answers from `cluster`.
pub fn evaluate_with(request: Value, settings: Value, cluster: &TestCluster) -> Value {
    let payload = serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap();
    let answer = vm_maintenance_strategy::policy::validate_with(&payload, cluster);
    serde_json::from_slice(&answer).expect("the policy answers JSON")
}

/// A cluster of plain data: the KubeVirt CR and claims; every instancetype or preference is not
/// found. (The policy's lookups with the exact calls made are e2e cases: e2e-tests/cases/.)
pub struct TestCluster {
    /// The KubeVirt CR as JSON (`Ok(None)`: no CR), or why it fails.
    pub kubevirt: Result<Option<Value>, String>,
    /// `(namespace, name, access modes)`; any other claim is not found.
    pub claims: Vec<(&'static str, &'static str, Vec<&'static str>)>,
}

impl Default for TestCluster {
    fn default() -> Self {
        TestCluster {
            kubevirt: Ok(None),
            claims: Vec::new(),
        }
    }
}

impl TestCluster {
    /// A cluster whose KubeVirt CR sets `evictionStrategy: strategy`.
    pub fn strategy(strategy: &str) -> TestCluster {
        TestCluster {
            kubevirt: Ok(Some(
                json!({"spec": {"configuration": {"evictionStrategy": strategy}}}),
            )),
            ..TestCluster::default()
        }
    }
}

impl vm_maintenance_strategy::cluster::Cluster for TestCluster {
    fn kubevirt(&self) -> Result<Option<vm_maintenance_strategy::cluster::KubeVirtCr>, String> {
        let Some(cr) = self.kubevirt.clone()? else {
            return Ok(None);
        };
        // Through the host's own reading of a list answer, as kube-rs' default `v1 List`.
        let list = json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": [cr]});
        vm_maintenance_strategy::cluster::kubevirt_from_list(list.to_string().as_bytes())
    }

    fn instancetype_spec(
        &self,
        kind: &str,
        _namespace: Option<&str>,
        name: &str,
    ) -> Result<String, String> {
        Err(format!("{kind} \"{name}\" not found"))
    }

    fn claim_access_modes(&self, namespace: &str, name: &str) -> Result<Vec<String>, String> {
        self.claims
            .iter()
            .find(|(ns, n, _)| *ns == namespace && *n == name)
            .map(|(_, _, modes)| modes.iter().map(|m| (*m).to_owned()).collect())
            .ok_or_else(|| format!("persistentvolumeclaims \"{name}\" not found"))
    }
}
