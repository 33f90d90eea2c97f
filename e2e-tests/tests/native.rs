//! Every case of `e2e-tests/cases/*.yaml`, each a test of its own, on the policy crate itself
//! (no wasm): `policy::validate_settings`, then `policy::validate_with` a cluster that answers from
//! the case's e2e cluster and records each call as the wasm host does. The payloads, the
//! AdmissionResponse built from the answer and every check are the wasm suite's
//! (`policy_host::admission::evaluate_through`, `Case::judge`).
//!
//! `cargo test -p e2e-tests --test native -- labels` runs the cases of `labels.yaml`. A case marked
//! `wasmOnly` is reported ignored with its reason (and fails if it passes natively after all); an
//! answer this runner cannot read back as the module's own reader would fails the case.

use std::cell::RefCell;

use e2e_tests::cases::{self, Case};
use kubewarden_policy_sdk::host_capabilities::kubernetes::{
    GetResourceRequest, ListAllResourcesRequest,
};
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use policy_host::admission::evaluate_through;
use policy_host::host::Error;
use serde::Serialize;
use serde_json::Value;
use vm_maintenance_strategy::cluster::{INSTANCETYPE_API_VERSION, KubeVirtCr, kubevirt_from_list};
use vm_maintenance_strategy::policy;

fn main() {
    let args = Arguments::from_args();
    let all = match cases::load_all(&cases::cases_dir()) {
        Ok(all) => all,
        Err(e) => {
            eprintln!("cannot read the cases: {e}");
            std::process::exit(2);
        }
    };
    let trials = all
        .into_iter()
        .map(|(name, case)| trial(name, case))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

fn trial(name: String, case: Case) -> Trial {
    match case.wasm_only.clone() {
        None => Trial::test(name, move || {
            run(&case).map_err(|e| Failed::from(e.to_string()))
        }),
        Some(why) => Trial::ignorable_test(name, move || match run(&case) {
            _ if why.trim().is_empty() => Err("wasmOnly needs a reason".into()),
            Ok(()) => Err("passes natively: remove its wasmOnly".into()),
            Err(native) => Ok(Completion::ignored_with(format!(
                "wasm only: {why} (natively: {native})"
            ))),
        }),
    }
}

/// The case's request and settings through the policy's functions; its checks.
fn run(case: &Case) -> Result<(), Error> {
    let request = case.request()?;
    let cluster = Native {
        cluster: case.cluster()?,
        unread: RefCell::new(Vec::new()),
    };
    let evaluation = evaluate_through(
        &request,
        &case.settings,
        |function, payload| match function {
            "validate_settings" => Ok(policy::validate_settings(payload)),
            "validate" => Ok(policy::validate_with(payload, &cluster)),
            other => Err(format!("the policy has no function {other}").into()),
        },
    )?;
    let unread = cluster.unread.into_inner();
    if !unread.is_empty() {
        return Err(format!(
            "cannot be checked natively (run it on wasm only, wasmOnly): {}",
            unread.join("; ")
        )
        .into());
    }
    case.judge(&request, &evaluation, &cluster.cluster.calls())
}

/// The policy's [`vm_maintenance_strategy::cluster::Cluster`] on a case's e2e cluster: each read
/// is the request the module's `Host` sends (the SDK's request types), answered and recorded by
/// the e2e cluster; the answer is read as `Host` reads it: the KubeVirt list by the policy's own
/// `kubevirt_from_list`, an instancetype's `spec` as its JSON text, a claim's `spec.accessModes`.
/// An answer `Host` would refuse with its reader's own words cannot be mirrored here: it is noted
/// in `unread`, and the case fails.
struct Native {
    cluster: policy_host::Cluster,
    unread: RefCell<Vec<String>>,
}

impl Native {
    fn call(&self, operation: &str, request: &impl Serialize) -> Result<Vec<u8>, String> {
        let payload = serde_json::to_vec(request).map_err(|e| e.to_string())?;
        self.cluster.kubernetes_call(operation, &payload)
    }

    /// A `get_resource` answer as JSON.
    fn object(&self, answer: &[u8]) -> Result<Value, String> {
        serde_json::from_slice(answer).map_err(|e| self.unread(format!("an answer: {e}")))
    }

    fn unread(&self, what: String) -> String {
        self.unread.borrow_mut().push(what.clone());
        what
    }
}

impl vm_maintenance_strategy::cluster::Cluster for Native {
    fn kubevirt(&self) -> Result<Option<KubeVirtCr>, String> {
        let request = ListAllResourcesRequest {
            api_version: "kubevirt.io/v1".to_owned(),
            kind: "KubeVirt".to_owned(),
            label_selector: None,
            field_selector: None,
            field_masks: None,
        };
        kubevirt_from_list(&self.call("list_resources_all", &request)?)
    }

    fn instancetype_spec(
        &self,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<String, String> {
        let request = GetResourceRequest {
            api_version: INSTANCETYPE_API_VERSION.to_owned(),
            kind: kind.to_owned(),
            name: name.to_owned(),
            namespace: namespace.map(str::to_owned),
            disable_cache: false,
            field_masks: None,
        };
        let object = self.object(&self.call("get_resource", &request)?)?;
        // The e2e cluster writes its answers compactly, so the spec's text is the same bytes.
        Ok(match object.get("spec") {
            Some(spec) => spec.to_string(),
            None => "null".to_owned(),
        })
    }

    fn claim_access_modes(&self, namespace: &str, name: &str) -> Result<Vec<String>, String> {
        let request = GetResourceRequest {
            api_version: "v1".to_owned(),
            kind: "PersistentVolumeClaim".to_owned(),
            name: name.to_owned(),
            namespace: Some(namespace.to_owned()),
            disable_cache: false,
            field_masks: None,
        };
        let object = self.object(&self.call("get_resource", &request)?)?;
        let modes = match object.get("spec") {
            None | Some(Value::Null) => &Value::Null,
            Some(Value::Object(spec)) => spec.get("accessModes").unwrap_or(&Value::Null),
            Some(other) => return Err(self.unread(format!("claim {name}: spec {other}"))),
        };
        match modes {
            Value::Null => Ok(Vec::new()),
            Value::Array(items) => items
                .iter()
                .map(|mode| match mode {
                    Value::String(mode) => Ok(mode.clone()),
                    other => Err(self.unread(format!("claim {name}: access mode {other}"))),
                })
                .collect(),
            other => Err(self.unread(format!("claim {name}: accessModes {other}"))),
        }
    }
}
