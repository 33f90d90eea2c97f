//! The dump as the cluster the policy's assessment reads: its KubeVirt CR (the first one read),
//! its instancetypes and preferences, and its PVCs. What the dump lacks is an `Err` ("not in the
//! dump"), which the assessment reports as not checked, in the policy's words.

use std::collections::HashMap;

use serde_json::Value;
use vm_maintenance_strategy::cluster::{Cluster, KubeVirtCr, kubevirt_from_object};
use vm_maintenance_strategy::eviction::{self, Assessment};
use vm_maintenance_strategy::settings::Settings;

use crate::input::Dump;

/// Objects of the dump by `(kind, namespace, name)`; the namespace is `""` for the cluster-wide
/// kinds and `default` when a namespaced object names none (as kubectl applies it).
pub struct DumpCluster<'a> {
    kubevirt: Option<&'a Value>,
    objects: HashMap<(&'a str, &'a str, &'a str), &'a Value>,
}

const CLAIM: &str = "PersistentVolumeClaim";

impl<'a> DumpCluster<'a> {
    pub fn new(dump: &'a Dump) -> DumpCluster<'a> {
        let objects = dump
            .instancetypes
            .iter()
            .chain(&dump.pvcs)
            .filter_map(|object| {
                let kind = object.get("kind")?.as_str()?;
                let metadata = object.get("metadata")?;
                let name = metadata.get("name")?.as_str()?;
                let namespace = if kind.starts_with("VirtualMachineCluster") {
                    ""
                } else {
                    metadata
                        .get("namespace")
                        .and_then(Value::as_str)
                        .unwrap_or("default")
                };
                Some(((kind, namespace, name), object))
            })
            .collect();
        DumpCluster {
            kubevirt: dump.kubevirts.first(),
            objects,
        }
    }

    fn get(&self, kind: &str, namespace: &str, name: &str) -> Result<&'a Value, String> {
        self.objects
            .get(&(kind, namespace, name))
            .copied()
            .ok_or_else(|| "not in the dump".to_owned())
    }
}

impl Cluster for DumpCluster<'_> {
    fn kubevirt(&self) -> Result<Option<KubeVirtCr>, String> {
        self.kubevirt.map(kubevirt_from_object).transpose()
    }

    fn instancetype_spec(
        &self,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, String> {
        let object = self.get(kind, namespace.unwrap_or_default(), name)?;
        Ok(object.get("spec").cloned().unwrap_or(Value::Null))
    }

    fn claim_access_modes(&self, namespace: &str, name: &str) -> Result<Vec<String>, String> {
        let claim = self.get(CLAIM, namespace, name)?;
        let modes = claim
            .pointer("/spec/accessModes")
            .and_then(Value::as_array)
            .ok_or_else(|| "no spec.accessModes in the dump".to_owned())?;
        Ok(modes
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect())
    }
}

/// The policy's assessment of one VM of the dump (`eviction::assess`) with the dump as the
/// cluster. A VM that names no namespace is read in `default`, as kubectl applies it.
pub fn assess(vm: &Value, settings: &Settings, cluster: &DumpCluster) -> Assessment {
    if vm.pointer("/metadata/namespace").is_some() || !vm.is_object() {
        return eviction::assess(vm, settings, cluster);
    }
    let mut vm = vm.clone();
    if let Some(metadata) = vm
        .as_object_mut()
        .map(|o| {
            o.entry("metadata")
                .or_insert_with(|| Value::Object(Default::default()))
        })
        .and_then(Value::as_object_mut)
    {
        metadata.insert("namespace".to_owned(), Value::from("default"));
    }
    eviction::assess(&vm, settings, cluster)
}

/// The settings as the policy reads them, with the cluster lookups on: the dump is the cluster
/// KubeVirt reads, whatever `clusterLookups` tells the policy at admission.
pub fn policy_settings(settings: &Value) -> Result<Settings, String> {
    let raw = serde_json::to_vec(settings).map_err(|e| e.to_string())?;
    let mut settings = Settings::load(&raw)?;
    settings.cluster_lookups = true;
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vm(own: Option<&str>, volumes: Value, instancetype: Option<&str>) -> Value {
        let mut spec = json!({
            "domain": {"devices": {"interfaces": [{"name": "default", "masquerade": {}}]}},
            "networks": [{"name": "default", "pod": {}}],
            "volumes": volumes,
        });
        if let Some(own) = own {
            spec["evictionStrategy"] = json!(own);
        }
        let mut vm = json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": "vm", "namespace": "team"},
            "spec": {
                "dataVolumeTemplates": [{"metadata": {"name": "own-dv"}, "spec": {"storage": {}}}],
                "template": {"spec": spec}
            }
        });
        if let Some(name) = instancetype {
            vm["spec"]["instancetype"] =
                json!({"kind": "VirtualMachineClusterInstancetype", "name": name});
        }
        vm
    }

    fn pvc(namespace: &str, name: &str, modes: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": {"name": name, "namespace": namespace}, "spec": {"accessModes": modes}})
    }

    fn settings(raw: Value) -> Settings {
        policy_settings(&raw).unwrap_or_else(|e| panic!("settings {raw}: {e}"))
    }

    #[test]
    fn strategy_and_its_source() {
        let with_cr = Dump {
            kubevirts: vec![json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
                "spec": {"configuration": {"evictionStrategy": "LiveMigrate"}}})],
            ..Dump::default()
        };
        let without = Dump::default();
        let external = json!({"evictionStrategy": {"clusterDefault": "External"}});
        let cases = [
            (
                "the VM's own",
                Some("None"),
                &external,
                &with_cr,
                Some("None"),
                "vm",
            ),
            (
                "the settings'",
                None,
                &external,
                &with_cr,
                Some("External"),
                "settings",
            ),
            (
                "the dump's CR",
                None,
                &json!({}),
                &with_cr,
                Some("LiveMigrate"),
                "cluster",
            ),
            (
                "KubeVirt's default",
                None,
                &json!({}),
                &without,
                None,
                "default",
            ),
        ];
        for (name, own, raw, dump, strategy, source) in cases {
            let got = assess(
                &vm(own, json!([]), None),
                &settings(raw.clone()),
                &DumpCluster::new(dump),
            );
            assert_eq!(
                (got.eviction_strategy.as_deref(), got.source.as_str()),
                (strategy, source),
                "{name}"
            );
        }
    }

    #[test]
    fn claims_and_instancetypes_read_from_the_dump() {
        let dump = Dump {
            pvcs: vec![
                pvc("team", "rwo", json!(["ReadWriteOnce"])),
                pvc("team", "rwx", json!(["ReadWriteMany", "ReadWriteOnce"])),
                pvc("other", "elsewhere", json!(["ReadWriteOnce"])),
                pvc("team", "own-dv", json!(["ReadWriteOnce"])),
            ],
            instancetypes: vec![json!({
                "apiVersion": "instancetype.kubevirt.io/v1beta1",
                "kind": "VirtualMachineClusterInstancetype",
                "metadata": {"name": "gpu"},
                "spec": {"cpu": {"guest": 2}, "memory": {"guest": "1Gi"},
                         "gpus": [{"name": "gpu1", "deviceName": "nvidia.com/A2"}]}
            })],
            ..Dump::default()
        };
        let cluster = DumpCluster::new(&dump);
        let volumes = json!([
            {"name": "a", "persistentVolumeClaim": {"claimName": "rwo"}},
            {"name": "b", "dataVolume": {"name": "rwx"}},
            {"name": "c", "persistentVolumeClaim": {"claimName": "elsewhere"}},
            {"name": "d", "dataVolume": {"name": "own-dv"}},
            {"name": "f", "containerDisk": {"image": "x"}},
        ]);
        let got = assess(
            &vm(None, volumes, Some("gpu")),
            &settings(json!({})),
            &cluster,
        );
        assert_eq!(
            got.reasons,
            [
                "HostDeviceNotLiveMigratable: GPU gpu1 without gate VGPULiveMigration",
                "DisksNotLiveMigratable: volume rwo (ReadWriteOnce)",
            ]
        );
        assert_eq!(
            got.warnings,
            ["cluster lookup failed: PVC team/elsewhere (not in the dump), not checked"]
        );
    }
}
