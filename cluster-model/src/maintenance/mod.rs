//! Harvester's maintenance mode on one node, `force` or not, as a pure function over a cluster's
//! objects (docs/rules.md, "Harvester maintenance mode (cluster-model)").
//!
//! Followed: harvester/harvester master `3d63c2af` (same behaviour as v1.8.2). Short names of the
//! files cited below:
//! - ND: `pkg/controller/master/nodedrain/nodedrain_controller.go` (`OnNodeChange`,
//!   `FindNonMigratableVMS`, `CheckVMISchedulingRequirements`, `listVolumeNames`);
//! - DH: `pkg/util/drainhelper/helper.go` (`DrainPossible`, `maintainModeStrategyFilter`);
//! - MC: `pkg/controller/master/node/maintain_controller.go` (completion, restart after enable);
//! - FM: `pkg/api/node/formatter.go` (restart after disable);
//! - NV / UN: the node webhook's last-available-node rule (`pkg/webhook/resources/node/validator.go`,
//!   `pkg/util/node.go`);
//! - NA: `k8s.io/component-helpers/scheduling/corev1/nodeaffinity` (vendored).
//!
//! [`preview`] runs the four steps in Harvester's order: [`control_plane`] (step 1),
//! [`non_migratable`] (step 2), then [`not_forced`] (step 3) or [`forced`] (step 4), and reads the
//! node's fate from what is left on it.

mod actions;
mod index;
mod outcome;
mod steps;

pub use crate::affinity::{node_affinity_matches, node_selector_matches};
pub use actions::{Acted, forced, last_available_node, not_forced};
pub use index::{Index, VmRef, owner_vm, vmi_node};
pub use outcome::{
    CONTROL_PLANE_LABEL, ETCD_LABEL, HA_CONTROL_PLANE_NODE, LAST_HEALTHY_REPLICA,
    LONGHORN_NAMESPACE, Longhorn, MAINTAIN_STATUS, NODE_NAME_ANNOTATION, NODE_NAME_LABEL,
    NODE_SCHEDULING_REQUIREMENTS_NOT_MET, Objects, Outcome, Preview, RUN_STRATEGY_ANNOTATION,
    Refusal, Restart, SINGLE_CONTROL_PLANE_NODE, VmOutcome,
};
pub use steps::{
    control_plane, last_healthy_replica, live_migratable_false, node_ready, non_migratable,
    scheduling_not_met,
};

use serde_json::Value;

use crate::drain::DrainOutcome;
use crate::object::ObjectExt;
use steps::refusals;
use vm_maintenance_strategy::eviction::Assessment;

/// Maintenance mode on `node`, as Harvester's controllers carry it out.
///
/// `predict` is the policy's own reading of a VM (`eviction::assess`): its effective eviction
/// strategy when the VMI sets none, and the reasons it cannot live-migrate, shown (as
/// "predicted") only for a VMI without a `LiveMigratable` condition. Harvester itself treats such
/// a VMI as migratable (ND:415), and so does the outcome.
pub fn preview(
    node: &str,
    force: bool,
    objects: &Objects,
    predict: &dyn Fn(&Value) -> Assessment,
) -> Preview {
    let mut preview = Preview {
        node: node.to_owned(),
        force,
        outcome: Outcome::Completes,
        refusal: Vec::new(),
        vms: Vec::new(),
        stuck: Vec::new(),
        notes: Vec::new(),
    };
    let Some(this) = objects.nodes.iter().find(|n| n.name() == node) else {
        preview.outcome = Outcome::NeverCompletes;
        preview
            .stuck
            .push(format!("node {node} is not in the objects: nothing to do"));
        return preview;
    };
    if objects.longhorn.is_none() {
        preview.notes.push(format!(
            "{LAST_HEALTHY_REPLICA} not checked: no Longhorn volumes or replicas in the objects"
        ));
    }

    // Step 1 (ND:94-105): refused whether forced or not (the API refuses before the annotation).
    if let Some(refusal) = control_plane(objects.nodes, this) {
        preview.outcome = Outcome::Refused;
        preview.refusal.push(refusal);
        return preview;
    }

    let index = Index::new(objects);
    // Step 2 (ND:107-110): an error is retried forever, with nothing done.
    let found = match non_migratable(node, objects, &index) {
        Ok(found) => found,
        Err(error) => {
            preview.outcome = Outcome::NeverCompletes;
            preview.stuck.push(format!(
                "error getting non-migratable VMs: {error}; the controller retries forever and does nothing"
            ));
            return preview;
        }
    };

    let acted = if force {
        forced(node, objects, &index, &found, predict)
    } else if !found.is_empty() {
        preview.outcome = Outcome::Refused;
        preview.refusal = refusals(&found);
        return preview;
    } else {
        not_forced(node, objects, &index, predict)
    };
    settle(&mut preview, acted);
    preview
}

/// The node's fate from what the drain left on it: it never completes while a VM blocks or a
/// step is stuck, and then a VM that restarts after enabling never does.
fn settle(preview: &mut Preview, acted: Acted) {
    preview.vms = acted.vms;
    preview.stuck = acted.stuck;
    preview.notes.extend(acted.notes);
    let stays = preview
        .vms
        .iter()
        .any(|vm| vm.outcome == DrainOutcome::Blocks);
    if stays || !preview.stuck.is_empty() {
        preview.outcome = Outcome::NeverCompletes;
        // AfterEnable starts again only when the node completes (MC:57-83).
        for vm in &mut preview.vms {
            if vm.restart == Some(Restart::AfterEnable) {
                vm.restart = Some(Restart::Never);
                vm.reasons.push(
                    "it would start again when maintenance completes, which it never does"
                        .to_owned(),
                );
            }
        }
    }
    preview
        .vms
        .sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
}
