//! How the plan is made: the VMs in order of namespace and name, for each its label patches
//! (`labels.rs`) and, when its VMI runs, its restart (`restart.rs`); then the restarts, numbered
//! in batches.

use cluster_model::object::ObjectExt;
use serde_json::Value;
use vm_maintenance_strategy::settings::Settings;

use super::Options;
use super::plan::{Batches, Finding, Kind, Mode, Plan, Write};
use crate::input::Store;
use crate::input::store::SLICE;
use crate::running::Running;
use crate::running::label_sync::LabelSync;

/// The plan for the objects of `store`, a slice of VMs at a time (in order of namespace and
/// name).
pub fn plan(
    store: &Store,
    settings: &Settings,
    sync: LabelSync,
    options: &Options,
) -> Result<Plan, String> {
    let key: &str = &settings.label_key;
    let cluster = store
        .kubevirts()
        .first()
        .and_then(|cr| cr.text_at("/spec/configuration/evictionStrategy"));
    let mut planner = Planner {
        key,
        settings,
        syncs: sync.synced(),
        writes: Vec::new(),
        not_changed: Vec::new(),
        restarts: Vec::new(),
    };
    let keys = store.vm_keys();
    for slice in store.slices(&keys, SLICE) {
        let slice = slice?;
        let running = Running::new(&slice);
        let mut vms: Vec<&Value> = slice.vms.iter().collect();
        vms.sort_by_key(|vm| vm.key());
        for vm in vms {
            let (namespace, name) = vm.key();
            if name.is_empty() {
                continue;
            }
            let vmi = running.vmi(namespace, name);
            planner.labels(vm, namespace, name, vmi.as_ref());
            if let Some(vmi) = &vmi {
                planner.restart(vm, namespace, name, vmi, cluster, options.restart_stale);
            }
        }
    }
    let restart_batches = planner.batches(options);
    Ok(Plan {
        label_key: key.to_owned(),
        default_strategy: settings.default_strategy.to_string(),
        label_sync: sync,
        mode: Mode::Plan,
        writes: planner.writes,
        not_changed: planner.not_changed,
        restart_batches,
    })
}

/// The plan as it is made, VM by VM.
pub(super) struct Planner<'a> {
    pub(super) key: &'a str,
    pub(super) settings: &'a Settings,
    /// The KubeVirt CR syncs the key.
    pub(super) syncs: bool,
    pub(super) writes: Vec<Write>,
    pub(super) not_changed: Vec<Finding>,
    /// Sent after every patch, batch by batch.
    pub(super) restarts: Vec<Write>,
}

impl Planner<'_> {
    pub(super) fn finding(&mut self, namespace: &str, kind: Kind, name: &str, message: String) {
        self.not_changed.push(Finding {
            namespace: namespace.to_owned(),
            kind,
            name: name.to_owned(),
            message,
        });
    }

    /// The restarts after the patches, numbered in batches of `--batch-size`.
    fn batches(&mut self, options: &Options) -> Batches {
        let size = options.batch_size.max(1);
        let count = self.restarts.len().div_ceil(size);
        for (index, mut restart) in std::mem::take(&mut self.restarts).into_iter().enumerate() {
            let batch = index / size + 1;
            restart.batch = Some(batch);
            restart.change = format!("restart (batch {batch}/{count}): {}", restart.change);
            self.writes.push(restart);
        }
        Batches {
            count,
            size,
            interval_seconds: options.batch_interval.as_secs_f64(),
        }
    }
}
