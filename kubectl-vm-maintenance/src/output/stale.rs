//! How what lags behind a running VM is shown (`running::staleness` finds it): the tables'
//! `STALE` cell and `-o wide`'s label and eviction cells, the "Stale" section's lines below a
//! table, and the `staleness` field the data of `maintenance` and `upgrade` carry.

use serde_json::Value;

use crate::running::staleness::{Found, Staleness};

impl Found {
    /// Writes `staleness` into every object of `data[list]` (by its `namespace` and `name`).
    /// `data` is a `serde_yaml::Value`, whose maps keep the order of the struct it was written
    /// from (serde_json's would sort the keys).
    pub fn annotate(&self, data: &mut serde_yaml::Value, list: &str) -> Result<(), String> {
        let items = data
            .get_mut(list)
            .and_then(serde_yaml::Value::as_sequence_mut);
        for item in items.into_iter().flatten() {
            let found = {
                let field = |name: &str| {
                    item.get(name)
                        .and_then(serde_yaml::Value::as_str)
                        .unwrap_or_default()
                };
                self.of(field("namespace"), field("name"))
            };
            if let Some(object) = item.as_mapping_mut() {
                let value = serde_yaml::to_value(found).map_err(|e| e.to_string())?;
                object.insert("staleness".into(), value);
            }
        }
        Ok(())
    }

    /// The section below a table: `namespace/name: what is stale`, a line each.
    pub fn lines<'n>(&self, names: impl Iterator<Item = (&'n str, &'n str)>) -> Vec<String> {
        names
            .filter_map(|(namespace, name)| Some((namespace, name, self.of(namespace, name)?)))
            .flat_map(|(namespace, name, stale)| {
                stale
                    .words(&self.key)
                    .into_iter()
                    .map(move |w| format!("{namespace}/{name}: {w}"))
            })
            .collect()
    }
}

impl Staleness {
    /// The table's `STALE` cell: `no`, else `label(OBJECTS)` and/or `eviction`.
    pub fn cell(&self) -> String {
        let mut parts = Vec::new();
        if let Some(label) = self.label.as_ref().filter(|l| !l.differs.is_empty()) {
            parts.push(format!("label({})", label.differs.join(",")));
        }
        if self.eviction_strategy.stale {
            parts.push("eviction".to_owned());
        }
        if parts.is_empty() {
            "no".to_owned()
        } else {
            parts.join(",")
        }
    }

    /// `-o wide`'s `LABEL VM/VMI/POD` cell: the three values, `<unset>` for none, `-` for a Pod
    /// the input lacks.
    pub fn labels_cell(&self) -> String {
        let Some(label) = &self.label else {
            return String::new();
        };
        let pod = if label.pod_name.is_some() {
            shown(label.pod.as_ref())
        } else {
            "-".to_owned()
        };
        format!(
            "{}/{}/{pod}",
            shown(label.vm.as_ref()),
            shown(label.vmi.as_ref())
        )
    }

    /// `-o wide`'s `VMI EVICTION` cell: `LiveMigrate` when current, `LiveMigrate->None` when stale.
    pub fn eviction_cell(&self) -> String {
        let e = &self.eviction_strategy;
        match (&e.vmi, e.stale) {
            (Some(own), true) => format!("{own}->{}", e.current.as_deref().unwrap_or("None")),
            (Some(own), false) => own.clone(),
            (None, _) => "<cluster>".to_owned(),
        }
    }

    /// What is stale, in words, one line each (nothing when nothing is).
    pub fn words(&self, key: &str) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(label) = self.label.as_ref().filter(|l| !l.differs.is_empty()) {
            let mut values = vec![
                format!("VM {}", shown(label.vm.as_ref())),
                format!("template {}", shown(label.template.as_ref())),
                format!("VMI {}", shown(label.vmi.as_ref())),
            ];
            if label.pod_name.is_some() {
                values.push(format!("launcher Pod {}", shown(label.pod.as_ref())));
            }
            let readers = if label.drain_reads == "pod" {
                "the drain reads the Pod's, Harvester's maintenance the VMI's"
            } else {
                "the drain and Harvester's maintenance read the VMI's"
            };
            let fix = match label.synced_by_kube_virt {
                Some(true) if !label.differs.contains(&"template") => {
                    "KubeVirt's label sync brings the VMI and Pod to the template's value".to_owned()
                }
                Some(true) => {
                    "KubeVirt syncs the template's value, which differs: run kubectl vm-maintenance sync --apply".to_owned()
                }
                Some(false) => format!(
                    "KubeVirt does not sync {key}: restart the VM or run kubectl vm-maintenance sync --apply"
                ),
                None => "restart the VM or run kubectl vm-maintenance sync --apply".to_owned(),
            };
            lines.push(format!("label {} ({readers}): {fix}", values.join(", ")));
        }
        let e = &self.eviction_strategy;
        if e.stale {
            let current = e.current.as_deref().unwrap_or("None");
            let source = match e.current_source {
                "vm" => "the VM's",
                "cluster" => "the KubeVirt CR's",
                _ => "KubeVirt's default",
            };
            lines.push(format!(
                "evictionStrategy {} on the VMI, {current} now ({source}): stale: restart once to get {current}",
                e.vmi.as_deref().unwrap_or_default()
            ));
        }
        lines
    }
}

/// A label value as the tables show it: a string verbatim, another value as its JSON text,
/// `<unset>` when absent.
pub fn shown(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "<unset>".to_owned(),
    }
}
