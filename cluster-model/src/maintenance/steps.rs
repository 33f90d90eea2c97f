//! The refusals: the control-plane rule (step 1), the VMs that cannot move (step 2: ND
//! `FindNonMigratableVMS`, `CheckVMISchedulingRequirements`) and the last healthy Longhorn replica.

use super::index::*;
use super::outcome::*;
use crate::affinity::*;
use crate::object::ObjectExt;
use serde_json::Value;
use std::collections::BTreeMap;

// ---------------------------------------------------------------------------------------------
// Step 1: the control-plane rule (DrainPossible, DH:88-151).

/// `None` when the rule lets `node` through: not labelled control-plane or etcd (existence,
/// any value; `node-role.kubernetes.io/master` is not read), or exactly 3 such nodes of `nodes`
/// (the node itself included when listed) without `harvesterhci.io/maintain-status`. Else the
/// refusal: `SingleControlPlaneNode` when `nodes` hold one such node, `HAControlPlaneNode`
/// otherwise.
pub fn control_plane(nodes: &[Value], node: &Value) -> Option<Refusal> {
    let is_cp =
        |n: &Value| has_key(n.labels(), CONTROL_PLANE_LABEL) || has_key(n.labels(), ETCD_LABEL);
    if !is_cp(node) {
        return None;
    }
    let members: BTreeMap<&str, &Value> = nodes
        .iter()
        .filter(|n| is_cp(n))
        .map(|n| (n.name(), n))
        .collect();
    if members.len() == 1 {
        return Some(Refusal {
            reason: SINGLE_CONTROL_PLANE_NODE.to_owned(),
            vms: Vec::new(),
            message: "draining of this node is not possible: single controlplane cluster, cannot place controlplane in maintenance mode".to_owned(),
        });
    }
    let available = members
        .values()
        .filter(|n| !has_key(n.annotations(), MAINTAIN_STATUS))
        .count();
    (available != 3).then(|| Refusal {
        reason: HA_CONTROL_PLANE_NODE.to_owned(),
        vms: Vec::new(),
        message: format!(
            "draining of this node is not possible: another controlplane is already in maintenance mode, cannot place current node in maintenance mode ({available} control-plane/etcd nodes out of maintenance, exactly 3 needed)"
        ),
    })
}

// ---------------------------------------------------------------------------------------------
// Step 2: the non-migratable VMs (FindNonMigratableVMS, ND:353-397).

/// Harvester's map: key → `namespace/name` list, in Harvester's order of writing:
/// `LastHealthyReplica` (owner VM names, VMIs on any node), then each KubeVirt reason of a
/// `LiveMigratable=False` VMI on the node (overwriting, ND:383-385), then
/// `NodeSchedulingRequirementsNotMet`. An `Err` is what makes Harvester's function fail (the
/// controller then retries forever).
pub fn non_migratable<'a>(
    node: &str,
    objects: &Objects<'a>,
    index: &Index<'a>,
) -> Result<BTreeMap<String, Vec<VmRef<'a>>>, String> {
    let mut found = BTreeMap::new();
    if let Some(longhorn) = objects.longhorn {
        let vms = last_healthy_replica(node, longhorn, index)?;
        if !vms.is_empty() {
            found.insert(LAST_HEALTHY_REPLICA.to_owned(), vms);
        }
    }
    let on_node = index.vmis_on(node);
    for (reason, vmis) in live_migratable_false(&on_node) {
        found.insert(reason, vmis);
    }
    let unschedulable = scheduling_not_met(node, objects.nodes, &on_node)?;
    if !unschedulable.is_empty() {
        found.insert(
            NODE_SCHEDULING_REQUIREMENTS_NOT_MET.to_owned(),
            unschedulable,
        );
    }
    Ok(found)
}

/// The refusal (ND:122-135): one entry per key, sorted by key.
pub(crate) fn refusals(found: &BTreeMap<String, Vec<VmRef>>) -> Vec<Refusal> {
    found
        .iter()
        .map(|(reason, vms)| {
            let vms: Vec<String> = vms.iter().map(ToString::to_string).collect();
            Refusal {
                reason: reason.clone(),
                message: format!("{} cannot be migrated due to {reason}", vms.join(",")),
                vms,
            }
        })
        .collect()
}

/// `IdentifyNonMigratableVMS` (ND:411-423): VMIs with a `LiveMigratable` condition whose status
/// is exactly `False`, by the condition's reason verbatim (possibly `""`). No condition, or
/// `Unknown`, is migratable.
pub fn live_migratable_false<'a>(vmis: &[&'a Value]) -> BTreeMap<String, Vec<VmRef<'a>>> {
    let mut found: BTreeMap<String, Vec<VmRef<'a>>> = BTreeMap::new();
    for vmi in vmis {
        for condition in conditions(vmi) {
            if condition.get("type").and_then(Value::as_str) == Some("LiveMigratable")
                && condition.get("status").and_then(Value::as_str) == Some("False")
            {
                let reason = condition
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                found
                    .entry(reason.to_owned())
                    .or_default()
                    .push(VmRef::of(vmi));
            }
        }
    }
    found
}

/// `CheckVMISchedulingRequirements` (ND:438-493): the VMIs of `vmis` (those on `node`) for which
/// no other node that is Ready and not `spec.unschedulable` matches the required node affinity
/// and then the `nodeSelector` (exact values). Nothing else is considered: taints, resources,
/// pod affinity. An affinity that cannot be parsed is an `Err` (ND:453-456).
pub fn scheduling_not_met<'a>(
    node: &str,
    nodes: &[Value],
    vmis: &[&'a Value],
) -> Result<Vec<VmRef<'a>>, String> {
    let candidates: Vec<&Value> = nodes
        .iter()
        .filter(|n| n.name() != node && node_ready(n))
        .collect();
    let mut found = Vec::new();
    for vmi in vmis {
        let required = vmi
            .pointer("/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution")
            .filter(|v| !v.is_null());
        let selector = vmi
            .pointer("/spec/nodeSelector")
            .and_then(Value::as_object)
            .filter(|s| !s.is_empty());
        let mut any = false;
        for candidate in &candidates {
            if let Some(required) = required {
                let matched = node_affinity_matches(required, candidate).map_err(|e| {
                    format!(
                        "{}: error generating nodeAffinitySelector: {e}",
                        VmRef::of(vmi)
                    )
                })?;
                if !matched {
                    continue;
                }
            }
            if selector.is_none_or(|s| node_selector_matches(s, candidate)) {
                any = true;
                break;
            }
        }
        // A parse error is reported even when no candidate is left to try it on (NewNodeSelector
        // parses before matching).
        if let (Some(required), false) = (required, any) {
            parse_node_selector(required).map_err(|e| {
                format!(
                    "{}: error generating nodeAffinitySelector: {e}",
                    VmRef::of(vmi)
                )
            })?;
        }
        if !any {
            found.push(VmRef::of(vmi));
        }
    }
    Ok(found)
}

/// `isNodeReady` (ND:495-506): not `spec.unschedulable`, and a `Ready` condition with status
/// exactly `True`.
pub fn node_ready(node: &Value) -> bool {
    if node.pointer("/spec/unschedulable") == Some(&Value::Bool(true)) {
        return false;
    }
    conditions(node).iter().any(|c| {
        c.get("type").and_then(Value::as_str) == Some("Ready")
            && c.get("status").and_then(Value::as_str) == Some("True")
    })
}

/// `listVMI` / `listVolumeNames` (ND:276-350): every Longhorn volume (replicas of
/// `longhorn-system`, grouped by `spec.volumeName`) with at most one replica whose
/// `status.started` is true, that one on `node`; each of its `workloadsStatus` of type
/// `VirtualMachineInstance` names a VMI (any node), reported as its owner VM. A selected volume
/// missing from `volumes`, a workload VMI missing, or a VMI without a `kubevirt.io/v1`
/// VirtualMachine owner is an `Err` (Harvester's function fails, ND:286-289, 341-345, 361-364).
pub fn last_healthy_replica<'a>(
    node: &str,
    longhorn: Longhorn<'a>,
    index: &Index<'a>,
) -> Result<Vec<VmRef<'a>>, String> {
    // volume → (started replicas, a started one on the node); BTreeMap: a stable order.
    let mut volumes: BTreeMap<&str, (usize, bool)> = BTreeMap::new();
    for replica in longhorn.replicas {
        if replica.namespace_field() != LONGHORN_NAMESPACE {
            continue;
        }
        let volume = replica.text_at("/spec/volumeName").unwrap_or_default();
        let started = replica.pointer("/status/started") == Some(&Value::Bool(true));
        let here = started && replica.text_at("/spec/nodeID") == Some(node);
        let entry = volumes.entry(volume).or_default();
        entry.0 += usize::from(started);
        entry.1 |= here;
    }
    let mut found = Vec::new();
    for (volume, (started, here)) in volumes {
        if started > 1 || !here {
            continue;
        }
        let object = longhorn
            .volumes
            .iter()
            .find(|v| v.namespace_field() == LONGHORN_NAMESPACE && v.name() == volume)
            .ok_or_else(|| format!("volume {LONGHORN_NAMESPACE}/{volume} not found"))?;
        let namespace = object
            .text_at("/status/kubernetesStatus/namespace")
            .unwrap_or_default();
        let workloads = object
            .pointer("/status/kubernetesStatus/workloadsStatus")
            .and_then(Value::as_array);
        for workload in workloads.into_iter().flatten() {
            if workload.get("workloadType").and_then(Value::as_str)
                != Some("VirtualMachineInstance")
            {
                continue;
            }
            let name = workload
                .get("workloadName")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let vmi = index.vmi(namespace, name).ok_or_else(|| {
                format!("volume {volume}: VirtualMachineInstance {namespace}/{name} not found")
            })?;
            let owner =
                owner_vm(vmi).ok_or_else(|| format!("no valid VM owner found for VMI {name}"))?;
            found.push(VmRef {
                namespace,
                name: owner,
            });
        }
    }
    Ok(found)
}
