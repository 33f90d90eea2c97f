//! Whether the cluster's KubeVirt CR makes virt-controller keep a label of running VMIs and
//! their launcher Pods in sync with the VM's template (docs/rules.md K4:
//! `--additional-launcher-labels-sync` through `spec.customizeComponents`, from KubeVirt v1.7.0).
//!
//! The judgement is the policy's own: K4 through
//! `vm_maintenance_strategy::label_sync::syncs_label`, and the label counts as synced exactly when
//! K4 has nothing to say. Its messages, when several, are joined by `; `.

use serde::Serialize;
use serde_json::Value;
use vm_maintenance_strategy::label_sync::syncs_label;

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
    match syncs_label(cr, key, version) {
        Ok(()) => LabelSync {
            key: key.to_owned(),
            synced: Some(true),
            message: format!(
                "the KubeVirt CR makes virt-controller sync label {key} from each VM's template to its running VMI and launcher Pod (--additional-launcher-labels-sync)"
            ),
        },
        Err(findings) => LabelSync {
            key: key.to_owned(),
            synced: Some(false),
            message: findings.join("; "),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every message of K4 starts with this field.
    const FIELD: &str = "spec.customizeComponents";

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
        // Several findings: one message, joined.
        let empty = of(Some(&cr(flags(""), "v1.9.0")), KEY, None);
        assert_eq!(
            empty.message,
            format!(
                "{FIELD}.flags.controller.additional-launcher-labels-sync: empty; virt-operator passes --additional-launcher-labels-sync without a value and virt-controller does not start; {FIELD}: virt-controller does not sync label {KEY} (no --additional-launcher-labels-sync); a changed label reaches running VMIs and launcher Pods only when the VM restarts"
            )
        );
    }
}
