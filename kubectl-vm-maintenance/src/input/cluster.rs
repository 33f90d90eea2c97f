//! The dump as the cluster the policy's assessment reads: its KubeVirt CR (the first one read),
//! its instancetypes and preferences, and its PVCs. What the dump lacks is an `Err` ("not in the
//! dump"), which the assessment reports as not checked, in the policy's words.

use cluster_model::objects::ObjectCluster;
use serde_json::Value;
use vm_maintenance_strategy::eviction::{self, Assessment};
use vm_maintenance_strategy::settings::Settings;

use super::Slice;

/// The dump as a cluster: its first KubeVirt CR, its instancetypes and preferences, its PVCs.
pub type DumpCluster<'a> = ObjectCluster<'a>;

/// The cluster the dump describes; what it lacks is "not in the dump".
pub fn dump_cluster(slice: &Slice) -> DumpCluster<'_> {
    let objects = slice
        .kubevirts
        .iter()
        .chain(&slice.instancetypes)
        .chain(&slice.pvcs);
    ObjectCluster::new(objects).within("in the dump")
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
    use vm_maintenance_strategy::strategy::EvictionStrategy;

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
        let with_cr = Slice {
            kubevirts: vec![json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
                "spec": {"configuration": {"evictionStrategy": "LiveMigrate"}}})],
            ..Slice::default()
        };
        let without = Slice::default();
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
                &dump_cluster(dump),
            );
            assert_eq!(
                (
                    got.eviction_strategy.as_ref().map(EvictionStrategy::as_str),
                    got.source.as_str()
                ),
                (strategy, source),
                "{name}"
            );
        }
    }

    #[test]
    fn claims_and_instancetypes_read_from_the_dump() {
        let dump = Slice {
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
            ..Slice::default()
        };
        let cluster = dump_cluster(&dump);
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
        let reasons: Vec<String> = got.reasons.iter().map(ToString::to_string).collect();
        assert_eq!(
            reasons,
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
