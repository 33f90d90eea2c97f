//! Helpers shared by the native, table-driven tests: fixtures, requests, and a checked case runner.
#![allow(dead_code)]

use std::cell::RefCell;

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

/// A JSON pointer token for a label key (`/` becomes `~1`).
pub fn labels_ptr(prefix: &str, key: &str) -> String {
    format!("{prefix}/{}", key.replace('~', "~0").replace('/', "~1"))
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

/// A cluster of plain data that records the lookups made, as `kubevirt`,
/// `KIND [NAMESPACE/]NAME` (instancetypes and preferences) and `claim NAMESPACE/NAME`.
pub struct TestCluster {
    /// The KubeVirt CR as JSON (`Ok(None)`: no CR), or why it fails.
    pub kubevirt: Result<Option<Value>, String>,
    /// `(kind, namespace, name, spec)` of instancetypes and preferences; any other is not found.
    pub instancetypes: Vec<(&'static str, Option<&'static str>, &'static str, Value)>,
    /// Every instancetype or preference lookup fails with this.
    pub instancetypes_fail: Option<String>,
    /// `(namespace, name, access modes)`; any other claim is not found.
    pub claims: Vec<(&'static str, &'static str, Vec<&'static str>)>,
    /// Every claim lookup fails with this.
    pub claims_fail: Option<String>,
    pub calls: RefCell<Vec<String>>,
}

impl Default for TestCluster {
    fn default() -> Self {
        TestCluster {
            kubevirt: Ok(None),
            instancetypes: Vec::new(),
            instancetypes_fail: None,
            claims: Vec::new(),
            claims_fail: None,
            calls: RefCell::new(Vec::new()),
        }
    }
}

impl TestCluster {
    /// A cluster whose KubeVirt CR sets `evictionStrategy: strategy`.
    pub fn strategy(strategy: &str) -> TestCluster {
        TestCluster::kubevirt(json!({"spec": {"configuration": {"evictionStrategy": strategy}}}))
    }
    /// A cluster with the KubeVirt CR `cr` (JSON).
    pub fn kubevirt(cr: Value) -> TestCluster {
        TestCluster {
            kubevirt: Ok(Some(cr)),
            ..TestCluster::default()
        }
    }
    /// The same cluster with one more instancetype or preference.
    pub fn with(
        mut self,
        kind: &'static str,
        namespace: Option<&'static str>,
        name: &'static str,
        spec: Value,
    ) -> TestCluster {
        self.instancetypes.push((kind, namespace, name, spec));
        self
    }
}

impl vm_maintenance_strategy::cluster::Cluster for TestCluster {
    fn kubevirt(&self) -> Result<Option<vm_maintenance_strategy::cluster::KubeVirtCr>, String> {
        self.calls.borrow_mut().push("kubevirt".to_owned());
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
        namespace: Option<&str>,
        name: &str,
    ) -> Result<String, String> {
        let at = namespace.map(|n| format!("{n}/")).unwrap_or_default();
        self.calls.borrow_mut().push(format!("{kind} {at}{name}"));
        if let Some(why) = &self.instancetypes_fail {
            return Err(why.clone());
        }
        self.instancetypes
            .iter()
            .find(|(k, ns, n, _)| *k == kind && *ns == namespace && *n == name)
            .map(|(_, _, _, spec)| spec.to_string())
            .ok_or_else(|| format!("{kind} \"{name}\" not found"))
    }

    fn claim_access_modes(&self, namespace: &str, name: &str) -> Result<Vec<String>, String> {
        self.calls
            .borrow_mut()
            .push(format!("claim {namespace}/{name}"));
        if let Some(why) = &self.claims_fail {
            return Err(why.clone());
        }
        self.claims
            .iter()
            .find(|(ns, n, _)| *ns == namespace && *n == name)
            .map(|(_, _, modes)| modes.iter().map(|m| (*m).to_owned()).collect())
            .ok_or_else(|| format!("persistentvolumeclaims \"{name}\" not found"))
    }
}

/// One row of a rule table.
pub struct Case {
    pub name: &'static str,
    pub request: Value,
    pub settings: Value,
    pub accepted: bool,
    pub message: Option<String>,
    pub warnings: Vec<String>,
    /// `None`: no `mutated_object`; `Some`: values expected at JSON pointers of it.
    pub mutated: Option<Vec<(String, Value)>>,
    pub cluster: TestCluster,
    /// The lookups expected, in order (none unless a row says so).
    pub calls: Vec<String>,
}

impl Case {
    pub fn new(name: &'static str, request: Value) -> Case {
        Case {
            name,
            request,
            settings: json!({}),
            accepted: true,
            message: None,
            warnings: Vec::new(),
            mutated: None,
            cluster: TestCluster::default(),
            calls: Vec::new(),
        }
    }
    pub fn cluster(mut self, cluster: TestCluster) -> Case {
        self.cluster = cluster;
        self
    }
    pub fn calls(mut self, calls: &[&str]) -> Case {
        self.calls = calls.iter().map(|c| (*c).to_owned()).collect();
        self
    }
    pub fn settings(mut self, settings: Value) -> Case {
        self.settings = settings;
        self
    }
    pub fn rejects(mut self, message: impl Into<String>) -> Case {
        self.accepted = false;
        self.message = Some(message.into());
        self
    }
    pub fn warns(mut self, warning: impl Into<String>) -> Case {
        self.warnings.push(warning.into());
        self
    }
    pub fn sets(mut self, pointer: impl Into<String>, value: Value) -> Case {
        self.mutated
            .get_or_insert_with(Vec::new)
            .push((pointer.into(), value));
        self
    }

    /// The differences between what the policy answered and what the row expects.
    pub fn check(&self) -> Vec<String> {
        self.cluster.calls.borrow_mut().clear();
        let answer = evaluate_with(self.request.clone(), self.settings.clone(), &self.cluster);
        let mut problems = Vec::new();
        let calls = self.cluster.calls.borrow().clone();
        if calls != self.calls {
            problems.push(format!("calls: want {:?}, got {calls:?}", self.calls));
        }
        if answer["accepted"] != json!(self.accepted) {
            problems.push(format!("accepted: want {}, got {answer}", self.accepted));
        }
        let message = answer["message"].as_str().map(str::to_owned);
        if message != self.message {
            problems.push(format!("message: want {:?}, got {message:?}", self.message));
        }
        if !self.accepted && answer["code"] != json!(422) {
            problems.push(format!("code: want 422, got {}", answer["code"]));
        }
        let warnings: Vec<String> = answer["warnings"]
            .as_array()
            .map(|w| {
                w.iter()
                    .filter_map(|s| s.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        if warnings != self.warnings {
            problems.push(format!(
                "warnings: want {:?}, got {warnings:?}",
                self.warnings
            ));
        }
        match (
            &self.mutated,
            answer.get("mutated_object").filter(|m| !m.is_null()),
        ) {
            (None, None) => {}
            (None, Some(_)) => problems.push("unexpected mutated_object".to_owned()),
            (Some(_), None) => problems.push("want mutated_object, got none".to_owned()),
            (Some(expected), Some(object)) => {
                for (pointer, value) in expected {
                    let got = object.pointer(pointer);
                    if got != Some(value) {
                        problems.push(format!("{pointer}: want {value}, got {got:?}"));
                    }
                }
            }
        }
        problems
    }
}

/// Runs every row and fails once, listing each row that went wrong.
pub fn run(cases: Vec<Case>) {
    assert!(!cases.is_empty(), "empty table");
    let failures: Vec<String> = cases
        .iter()
        .flat_map(|case| {
            case.check()
                .into_iter()
                .map(move |p| format!("{}: {p}", case.name))
        })
        .collect();
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
