//! A cluster held in memory: the objects the policy's [`Cluster`] reads (the first KubeVirt CR,
//! instancetypes and preferences, PersistentVolumeClaims), looked up by kind, namespace and name.
//! The drain preview reads a dump through it, the benchmarks a scenario's objects.

use std::collections::HashMap;

use crate::object::ObjectExt;
use serde_json::Value;
use vm_maintenance_strategy::cluster::{Cluster, KubeVirtCr, kubevirt_from_object};

const CLAIM: &str = "PersistentVolumeClaim";

/// Objects by `(kind, namespace, name)`; the namespace is `""` for the cluster-wide kinds and
/// `default` when a namespaced object names none (as kubectl applies it).
pub struct ObjectCluster<'a> {
    kubevirt: Option<&'a Value>,
    objects: HashMap<(&'a str, &'a str, &'a str), &'a Value>,
    /// Where the objects are, as the errors say it (`in the dump`: "not in the dump").
    place: &'static str,
}

impl<'a> ObjectCluster<'a> {
    /// The cluster of `objects`: the first `KubeVirt` among them is the CR; another object
    /// without a kind or a name is left out.
    pub fn new(objects: impl IntoIterator<Item = &'a Value>) -> ObjectCluster<'a> {
        let mut cluster = ObjectCluster {
            kubevirt: None,
            objects: HashMap::new(),
            place: "in the objects",
        };
        for object in objects {
            let Some(kind) = object.get("kind").and_then(Value::as_str) else {
                continue;
            };
            if kind == "KubeVirt" {
                cluster.kubevirt = cluster.kubevirt.or(Some(object));
                continue;
            }
            let Some(name) = object.text_at("/metadata/name") else {
                continue;
            };
            let namespace = if kind.starts_with("VirtualMachineCluster") {
                ""
            } else {
                object.namespace()
            };
            cluster.objects.insert((kind, namespace, name), object);
        }
        cluster
    }

    /// The same cluster, its errors naming `place` (`in the dump`).
    pub fn within(mut self, place: &'static str) -> ObjectCluster<'a> {
        self.place = place;
        self
    }

    fn get(&self, kind: &str, namespace: &str, name: &str) -> Result<&'a Value, String> {
        self.objects
            .get(&(kind, namespace, name))
            .copied()
            .ok_or_else(|| format!("not {}", self.place))
    }
}

impl Cluster for ObjectCluster<'_> {
    fn kubevirt(&self) -> Result<Option<KubeVirtCr>, String> {
        self.kubevirt.map(kubevirt_from_object).transpose()
    }

    fn instancetype_spec(
        &self,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<String, String> {
        let object = self.get(kind, namespace.unwrap_or_default(), name)?;
        Ok(object.get("spec").unwrap_or(&Value::Null).to_string())
    }

    fn claim_access_modes(&self, namespace: &str, name: &str) -> Result<Vec<String>, String> {
        let claim = self.get(CLAIM, namespace, name)?;
        let modes = claim
            .pointer("/spec/accessModes")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("no spec.accessModes {}", self.place))?;
        Ok(modes
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lookups_by_kind_namespace_and_name() {
        let objects = [
            json!({"kind": "KubeVirt", "metadata": {"name": "kubevirt", "namespace": "harvester-system"},
                   "spec": {"configuration": {"evictionStrategy": "LiveMigrate"}}}),
            json!({"kind": "KubeVirt", "metadata": {"name": "second"},
                   "spec": {"configuration": {"evictionStrategy": "None"}}}),
            json!({"kind": "PersistentVolumeClaim", "metadata": {"name": "a", "namespace": "team"},
                   "spec": {"accessModes": ["ReadWriteOnce"]}}),
            json!({"kind": "PersistentVolumeClaim", "metadata": {"name": "b"},
                   "spec": {"accessModes": ["ReadWriteMany"]}}),
            json!({"kind": "PersistentVolumeClaim", "metadata": {"name": "c", "namespace": "team"}}),
            json!({"kind": "VirtualMachineClusterInstancetype", "metadata": {"name": "big"},
                   "spec": {"cpu": {"guest": 8}}}),
            json!({"kind": "VirtualMachineInstancetype", "metadata": {"name": "small", "namespace": "team"},
                   "spec": {"cpu": {"guest": 1}}}),
            json!({"metadata": {"name": "no kind"}}),
        ];
        let cluster = ObjectCluster::new(&objects).within("in the dump");
        let cr = cluster.kubevirt().ok().flatten().map(|cr| cr.configuration);
        assert_eq!(
            cr.and_then(|c| c.eviction_strategy).as_deref(),
            Some("LiveMigrate")
        );
        let claims = [
            ("team", "a", Ok(vec!["ReadWriteOnce".to_owned()])),
            ("default", "b", Ok(vec!["ReadWriteMany".to_owned()])),
            ("team", "b", Err("not in the dump".to_owned())),
            (
                "team",
                "c",
                Err("no spec.accessModes in the dump".to_owned()),
            ),
        ];
        for (namespace, name, want) in claims {
            assert_eq!(
                cluster.claim_access_modes(namespace, name),
                want,
                "{namespace}/{name}"
            );
        }
        let types = [
            (
                "VirtualMachineClusterInstancetype",
                None,
                "big",
                Ok(json!({"cpu": {"guest": 8}})),
            ),
            (
                "VirtualMachineInstancetype",
                Some("team"),
                "small",
                Ok(json!({"cpu": {"guest": 1}})),
            ),
            (
                "VirtualMachineInstancetype",
                Some("other"),
                "small",
                Err("not in the dump".to_owned()),
            ),
        ];
        for (kind, namespace, name, want) in types {
            assert_eq!(
                cluster.instancetype_spec(kind, namespace, name),
                want.map(|spec: serde_json::Value| spec.to_string()),
                "{kind} {name}"
            );
        }
        assert!(
            ObjectCluster::new(&[])
                .kubevirt()
                .is_ok_and(|cr| cr.is_none())
        );
    }
}
