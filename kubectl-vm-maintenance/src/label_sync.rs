//! Whether the cluster's KubeVirt CR makes virt-controller keep a label of running VMIs and
//! their launcher Pods in sync with the VM's template (docs/rules.md K4:
//! `--additional-launcher-labels-sync` through `spec.customizeComponents`, from KubeVirt v1.7.0).
//!
//! The judgement is the policy's own: the CR is evaluated natively by
//! `vm_maintenance_strategy::policy::validate_with` as a CREATE with `kubevirt.labelSync: warn`,
//! and the label counts as synced exactly when K4 has nothing to say (all of K4's messages, and
//! only K4's, name `spec.customizeComponents`).
//!
//! STUB until the policy crate exposes its own function (asked of the lead): `pub fn
//! syncs_label(cr: &serde_json::Value, key: &str, release: Option<(u64, u64)>) -> Result<(),
//! String>` in `vm_maintenance_strategy::label_sync` (`Ok`: synced, `Err`: K4's message). Then
//! [`of`] calls it and the evaluation below goes.

use cluster_model::objects::ObjectCluster;
use serde::Serialize;
use serde_json::{Value, json};
use vm_maintenance_strategy::policy::validate_with;

/// Every message of K4 starts with this field.
const FIELD: &str = "spec.customizeComponents";

/// What the KubeVirt CR does with one label key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSync {
    /// The label key judged.
    pub key: String,
    /// `true`: virt-controller syncs it; `false`: it does not; `null`: no KubeVirt CR was read.
    pub synced: Option<bool>,
    /// In words: K4's message when not synced, else what is known.
    pub message: String,
}

impl LabelSync {
    /// Whether KubeVirt itself brings a running VMI and its Pod to the template's value.
    pub fn synced(&self) -> bool {
        self.synced == Some(true)
    }
}

/// K4 for `key` on the first KubeVirt CR (`None`: none read); `version` is the settings'
/// `kubevirt.version`, which the policy reads before the CR's `status.observedKubeVirtVersion`.
pub fn of(cr: Option<&Value>, key: &str, version: Option<&str>) -> LabelSync {
    let Some(cr) = cr else {
        return LabelSync {
            key: key.to_owned(),
            synced: None,
            message: format!(
                "no KubeVirt CR read: not known whether virt-controller syncs label {key} (--additional-launcher-labels-sync)"
            ),
        };
    };
    match findings(cr, key, version) {
        Ok(findings) if findings.is_empty() => LabelSync {
            key: key.to_owned(),
            synced: Some(true),
            message: format!(
                "the KubeVirt CR makes virt-controller sync label {key} from each VM's template to its running VMI and launcher Pod (--additional-launcher-labels-sync)"
            ),
        },
        Ok(findings) => LabelSync {
            key: key.to_owned(),
            synced: Some(false),
            message: findings.join("; "),
        },
        Err(why) => LabelSync {
            key: key.to_owned(),
            synced: None,
            message: format!("the KubeVirt CR could not be judged: {why}"),
        },
    }
}

/// K4's messages for the CR (empty: the key is synced).
fn findings(cr: &Value, key: &str, version: Option<&str>) -> Result<Vec<String>, String> {
    let mut kubevirt = json!({"labelSync": "warn"});
    if let Some(version) = version {
        kubevirt["version"] = json!(version);
    }
    let settings = json!({"labelKey": key, "kubevirt": kubevirt});
    let gvk = json!({"group": "kubevirt.io", "version": "v1", "kind": "KubeVirt"});
    let gvr = json!({"group": "kubevirt.io", "version": "v1", "resource": "kubevirts"});
    let payload = json!({
        "request": {
            "uid": "vm-maintenance-label-sync",
            "kind": gvk,
            "resource": gvr,
            "requestKind": gvk,
            "requestResource": gvr,
            "name": cr.pointer("/metadata/name").cloned().unwrap_or(json!("kubevirt")),
            "namespace": cr.pointer("/metadata/namespace").cloned().unwrap_or(json!("kubevirt")),
            "operation": "CREATE",
            "userInfo": {"username": "kubectl-vm-maintenance"},
            "object": cr,
            "dryRun": true,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
        },
        "settings": settings,
    });
    let payload = serde_json::to_vec(&payload).map_err(|e| e.to_string())?;
    let objects: [Value; 0] = [];
    let cluster = ObjectCluster::new(&objects).within("read");
    let answer: Value = serde_json::from_slice(&validate_with(&payload, &cluster))
        .map_err(|e| format!("the policy's answer: {e}"))?;
    let k4 = |message: &str| message.starts_with(FIELD);
    let mut findings: Vec<String> = answer
        .get("warnings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|w| k4(w))
        .map(str::to_owned)
        .collect();
    // Under `warn` K4 never rejects; another rule's rejection (K1-K3) does not hide K4's warnings.
    if let Some(message) = answer.get("message").and_then(Value::as_str)
        && k4(message)
    {
        findings.push(message.to_owned());
    }
    Ok(findings)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "harvesterhci.io/maintain-mode-strategy";

    fn cr(customize: Value, version: &str) -> Value {
        json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
               "metadata": {"name": "kubevirt", "namespace": "harvester-system"},
               "spec": {"configuration": {"evictionStrategy": "LiveMigrateIfPossible"},
                        "customizeComponents": customize},
               "status": {"observedKubeVirtVersion": version}})
    }

    #[test]
    fn the_policy_judges_the_cr() {
        let flags = |value: &str| json!({"flags": {"controller": {"additional-launcher-labels-sync": value}}});
        let cases = [
            (flags(KEY), "v1.9.0", None, Some(true)),
            (flags("harvesterhci.io/*"), "v1.9.0", None, Some(true)),
            (flags("harvesterhci.io/*"), "v1.7.0", None, Some(false)),
            (
                flags("harvesterhci.io/*"),
                "v1.9.0",
                Some("v1.8.4"),
                Some(false),
            ),
            (flags("other"), "v1.9.0", None, Some(false)),
            (json!({}), "v1.9.0", None, Some(false)),
            (flags(KEY), "v1.6.0", None, Some(false)),
        ];
        for (customize, observed, version, want) in cases {
            let got = of(Some(&cr(customize.clone(), observed)), KEY, version);
            assert_eq!(got.synced, want, "{customize} {observed}: {}", got.message);
            if want == Some(false) {
                assert!(got.message.starts_with(FIELD), "{}", got.message);
                assert!(
                    got.message.contains("--additional-launcher-labels-sync"),
                    "{}",
                    got.message
                );
            }
        }
        assert_eq!(of(None, KEY, None).synced, None);
    }
}
