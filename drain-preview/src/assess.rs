//! What a drain meets in one VM: its effective eviction strategy, where that came from, and why it
//! cannot live-migrate, as far as the dump shows.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;
use serde_json::Value;
use vm_maintenance_strategy::migratability::non_migratable_reasons;
/// A VM as raw JSON (the type the policy crate reads).
type Object = serde_json::Map<String, Value>;

/// Harvester's annotation holding the VM's PVC templates as a JSON array.
const VOLUME_CLAIM_TEMPLATES: &str = "harvesterhci.io/volumeClaimTemplates";

/// Where the effective eviction strategy came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The VM's own `spec.template.spec.evictionStrategy`.
    Vm,
    /// The policy settings (`evictionStrategy.clusterDefault`, or `kubevirt.configuration`).
    Settings,
    /// The dump's KubeVirt CR, `spec.configuration.evictionStrategy`.
    Cluster,
    /// None of them: KubeVirt's own default, `None`.
    Default,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Vm => "vm",
            Source::Settings => "settings",
            Source::Cluster => "cluster",
            Source::Default => "default",
        }
    }
}

/// The cluster side of the dump that a VM's assessment reads.
pub struct ClusterView<'a> {
    /// The KubeVirt CR (the first one of the dump).
    pub kubevirt: Option<&'a Value>,
    /// PVCs by namespace and name.
    pub pvcs: HashMap<(&'a str, &'a str), &'a Value>,
}

impl<'a> ClusterView<'a> {
    pub fn new(kubevirts: &'a [Value], pvcs: &'a [Value]) -> ClusterView<'a> {
        let pvcs = pvcs
            .iter()
            .filter_map(|pvc| {
                let metadata = pvc.get("metadata")?;
                let name = metadata.get("name")?.as_str()?;
                let namespace = metadata
                    .get("namespace")
                    .and_then(Value::as_str)
                    .unwrap_or("default");
                Some(((namespace, name), pvc))
            })
            .collect();
        ClusterView {
            kubevirt: kubevirts.first(),
            pvcs,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assessment {
    /// The effective eviction strategy as written (a non-string value as its JSON text).
    pub strategy: String,
    pub source: Source,
    /// Definite reasons the VM cannot live-migrate.
    pub reasons: Vec<String>,
    /// What could not be checked (a claim missing from the dump, a malformed annotation).
    pub notes: Vec<String>,
}

/// The effective eviction strategy and the non-migratable reasons of one VM.
///
/// **The lead will replace this function with the policy crate's own assessment (issues 9/13)**:
/// it is the one place of the tool that decides what the drain meets, so that swap changes
/// nothing else.
///
/// - Strategy: the VM's own `spec.template.spec.evictionStrategy`, else the settings'
///   `evictionStrategy.clusterDefault` (then `kubevirt.configuration.evictionStrategy`), else the
///   dump's KubeVirt CR `spec.configuration.evictionStrategy`, else `None` (KubeVirt's default).
/// - Reasons: `migratability::non_migratable_reasons` of the VM, then for each
///   `persistentVolumeClaim.claimName` / `dataVolume.name` volume that is not one of the VM's own
///   templates (`spec.dataVolumeTemplates`, Harvester's `volumeClaimTemplates` annotation: those
///   are already judged from the VM), the dump's PVC of that name in the VM's namespace when its
///   `spec.accessModes` lack `ReadWriteMany` → `DisksNotLiveMigratable: volume NAME (MODES)` (the
///   policy's own wording). A claim missing from the
///   dump, or without access modes, is a note, not a reason.
pub fn assess(vm: &Object, namespace: &str, settings: &Value, cluster: &ClusterView) -> Assessment {
    let own = vm
        .get("spec")
        .and_then(|s| s.pointer("/template/spec/evictionStrategy"))
        .filter(|v| !v.is_null());
    let from_settings = settings
        .pointer("/evictionStrategy/clusterDefault")
        .or_else(|| settings.pointer("/kubevirt/configuration/evictionStrategy"))
        .filter(|v| !v.is_null());
    let from_cluster = cluster
        .kubevirt
        .and_then(|kv| kv.pointer("/spec/configuration/evictionStrategy"))
        .filter(|v| !v.is_null());
    let (strategy, source) = match (own, from_settings, from_cluster) {
        (Some(value), _, _) => (shown(value), Source::Vm),
        (None, Some(value), _) => (shown(value), Source::Settings),
        (None, None, Some(value)) => (shown(value), Source::Cluster),
        (None, None, None) => ("None".to_owned(), Source::Default),
    };

    let findings = non_migratable_reasons(vm);
    let mut reasons = findings.reasons;
    let mut notes = findings.warnings;
    let own_claims = own_claims(vm);
    let volumes = vm
        .get("spec")
        .and_then(|s| s.pointer("/template/spec/volumes"))
        .and_then(Value::as_array);
    for volume in volumes.into_iter().flatten() {
        let claim = volume
            .pointer("/persistentVolumeClaim/claimName")
            .or_else(|| volume.pointer("/dataVolume/name"))
            .and_then(Value::as_str);
        let Some(claim) = claim.filter(|c| !own_claims.contains(*c)) else {
            continue;
        };
        let Some(pvc) = cluster.pvcs.get(&(namespace, claim)) else {
            notes.push(format!(
                "volume {claim}: PVC {namespace}/{claim} not in the dump, access modes not checked"
            ));
            continue;
        };
        let Some(modes) = pvc.pointer("/spec/accessModes").and_then(Value::as_array) else {
            notes.push(format!(
                "volume {claim}: PVC {namespace}/{claim} has no spec.accessModes, not checked"
            ));
            continue;
        };
        if !modes.iter().any(|m| m == "ReadWriteMany") {
            let modes: Vec<&str> = modes.iter().filter_map(Value::as_str).collect();
            reasons.push(format!(
                "DisksNotLiveMigratable: volume {claim} ({})",
                modes.join(", ")
            ));
        }
    }
    Assessment {
        strategy,
        source,
        reasons,
        notes,
    }
}

/// The claim names of the VM's own templates: `spec.dataVolumeTemplates[].metadata.name` and
/// the names in Harvester's `volumeClaimTemplates` annotation (ignored when malformed).
fn own_claims(vm: &Object) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let templates = vm
        .get("spec")
        .and_then(|s| s.get("dataVolumeTemplates"))
        .and_then(Value::as_array);
    for template in templates.into_iter().flatten() {
        if let Some(name) = template.pointer("/metadata/name").and_then(Value::as_str) {
            names.insert(name.to_owned());
        }
    }
    let annotation = vm
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(VOLUME_CLAIM_TEMPLATES))
        .and_then(Value::as_str)
        .and_then(|raw| serde_json::from_str::<Vec<Value>>(raw).ok());
    for claim in annotation.into_iter().flatten() {
        if let Some(name) = claim.pointer("/metadata/name").and_then(Value::as_str) {
            names.insert(name.to_owned());
        }
    }
    names
}

/// A string verbatim, anything else as its JSON text.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vm(own: Option<&str>, volumes: Value) -> Object {
        let mut spec = json!({
            "domain": {"devices": {"interfaces": [{"name": "default", "masquerade": {}}]}},
            "networks": [{"name": "default", "pod": {}}],
            "volumes": volumes,
        });
        if let Some(own) = own {
            spec["evictionStrategy"] = json!(own);
        }
        json!({
            "metadata": {"name": "vm", "namespace": "team"},
            "spec": {
                "dataVolumeTemplates": [{"metadata": {"name": "own-dv"}, "spec": {"storage": {}}}],
                "template": {"spec": spec}
            }
        })
        .as_object()
        .cloned()
        .unwrap_or_default()
    }

    fn pvc(namespace: &str, name: &str, modes: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": {"name": name, "namespace": namespace}, "spec": {"accessModes": modes}})
    }

    #[test]
    fn strategy_and_its_source() {
        let kv = [json!({"spec": {"configuration": {"evictionStrategy": "LiveMigrate"}}})];
        let with_cr = ClusterView::new(&kv, &[]);
        let without = ClusterView::new(&[], &[]);
        let settings = json!({"evictionStrategy": {"clusterDefault": "External"}});
        let cases = [
            (Some("None"), &settings, &with_cr, "None", Source::Vm),
            (None, &settings, &with_cr, "External", Source::Settings),
            (None, &json!({}), &with_cr, "LiveMigrate", Source::Cluster),
            (None, &json!({}), &without, "None", Source::Default),
        ];
        for (own, settings, cluster, strategy, source) in cases {
            let got = assess(&vm(own, json!([])), "team", settings, cluster);
            assert_eq!(
                (got.strategy.as_str(), got.source),
                (strategy, source),
                "{own:?} {settings}"
            );
        }
    }

    #[test]
    fn claims_read_from_the_dump() {
        let pvcs = [
            pvc("team", "rwo", json!(["ReadWriteOnce"])),
            pvc("team", "rwx", json!(["ReadWriteMany", "ReadWriteOnce"])),
            pvc("other", "elsewhere", json!(["ReadWriteOnce"])),
            pvc("team", "own-dv", json!(["ReadWriteOnce"])),
            json!({"metadata": {"name": "nomodes", "namespace": "team"}, "spec": {}}),
        ];
        let cluster = ClusterView::new(&[], &pvcs);
        let volumes = json!([
            {"name": "a", "persistentVolumeClaim": {"claimName": "rwo"}},
            {"name": "b", "dataVolume": {"name": "rwx"}},
            {"name": "c", "persistentVolumeClaim": {"claimName": "elsewhere"}},
            {"name": "d", "dataVolume": {"name": "own-dv"}},
            {"name": "e", "persistentVolumeClaim": {"claimName": "nomodes"}},
            {"name": "f", "containerDisk": {"image": "x"}},
        ]);
        let got = assess(&vm(None, volumes), "team", &json!({}), &cluster);
        assert_eq!(
            got.reasons,
            ["DisksNotLiveMigratable: volume rwo (ReadWriteOnce)"]
        );
        assert_eq!(
            got.notes,
            [
                "volume elsewhere: PVC team/elsewhere not in the dump, access modes not checked",
                "volume nomodes: PVC team/nomodes has no spec.accessModes, not checked",
            ]
        );
    }
}
