//! Harvester's maintenance mode on one node, `force` or not, as a pure function over a cluster's
//! objects (docs/rules.md, "Harvester maintenance mode (drain::maintenance)").
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

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use serde_json::Value;

use crate::drain::{DEFAULT_LABEL_KEY, DrainAction, DrainOutcome, drain_action, drain_outcome};
use crate::eviction::Assessment;
use crate::strategy::is_shutdown_family;
use crate::vm::Object;

/// The VMI (and launcher Pod) label naming the node it runs on (VMIU:143-153).
pub const NODE_NAME_LABEL: &str = "kubevirt.io/nodeName";
/// The node role labels of `DrainPossible` (DH:89-90); their existence counts, not their value.
pub const CONTROL_PLANE_LABEL: &str = "node-role.kubernetes.io/control-plane";
pub const ETCD_LABEL: &str = "node-role.kubernetes.io/etcd";
/// The node annotation of a node in (or entering) maintenance (C:234).
pub const MAINTAIN_STATUS: &str = "harvesterhci.io/maintain-status";
/// The VM annotation that marks a VM for a restart by the node's maintenance (C:239).
pub const NODE_NAME_ANNOTATION: &str = "harvesterhci.io/maintain-mode-strategy-node-name";
/// Longhorn's namespace (C:139).
pub const LONGHORN_NAMESPACE: &str = "longhorn-system";

/// Refusal keys besides KubeVirt's `LiveMigratable` reasons (C:304-306).
pub const LAST_HEALTHY_REPLICA: &str = "LastHealthyReplica";
pub const NODE_SCHEDULING_REQUIREMENTS_NOT_MET: &str = "NodeSchedulingRequirementsNotMet";
/// The control-plane rule's two errors, keyed by Harvester's names (DH:40-42).
pub const SINGLE_CONTROL_PLANE_NODE: &str = "SingleControlPlaneNode";
pub const HA_CONTROL_PLANE_NODE: &str = "HAControlPlaneNode";

const AFTER_ENABLE: &str = "ShutdownAndRestartAfterEnable";
const AFTER_DISABLE: &str = "ShutdownAndRestartAfterDisable";

/// What the maintenance reads of the cluster: every object as `kubectl get -o json` writes it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Objects<'a> {
    pub nodes: &'a [Value],
    /// `kubevirt.io/v1` VirtualMachines.
    pub vms: &'a [Value],
    /// `kubevirt.io/v1` VirtualMachineInstances.
    pub vmis: &'a [Value],
    /// Pods (the virt-launcher Pods are the ones read).
    pub pods: &'a [Value],
    /// `volumes.longhorn.io` and `replicas.longhorn.io`; `None`: not known, `LastHealthyReplica`
    /// is not checked (a note says so).
    pub longhorn: Option<Longhorn<'a>>,
    /// A controller evacuates `External` VMIs (as in [`drain_outcome`]).
    pub external_controller: bool,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Longhorn<'a> {
    pub volumes: &'a [Value],
    pub replicas: &'a [Value],
}

/// What becomes of maintenance mode on the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Outcome {
    /// Harvester refuses it and removes the request: nothing changes.
    Refused,
    /// The node reaches `maintain-status=completed`.
    Completes,
    /// The node stays cordoned (or in `running`) forever, or the controller retries forever.
    NeverCompletes,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Refused => "Refused",
            Outcome::Completes => "Completes",
            Outcome::NeverCompletes => "NeverCompletes",
        }
    }
}

/// When a VM that Harvester stops starts again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Restart {
    /// When the node's maintenance completes (MC:73-107).
    AfterEnable,
    /// When maintenance mode is disabled (FM:247-276).
    AfterDisable,
    /// Never: it stays off.
    Never,
}

impl Restart {
    pub fn as_str(self) -> &'static str {
        match self {
            Restart::AfterEnable => "afterEnable",
            Restart::AfterDisable => "afterDisable",
            Restart::Never => "never",
        }
    }
}

/// One reason Harvester refuses, keyed as Harvester keys it, with the VMs it names
/// (`namespace/name`, in Harvester's order) and Harvester's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refusal {
    pub reason: String,
    pub vms: Vec<String>,
    pub message: String,
}

/// What the maintenance does with one VM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VmOutcome {
    pub namespace: String,
    pub name: String,
    /// The node its VMI runs on.
    pub node: Option<String>,
    pub outcome: DrainOutcome,
    /// For `ShutDown`: when it starts again.
    pub restart: Option<Restart>,
    /// Why, in words.
    pub reasons: Vec<String>,
    /// What the outcome does not rest on but an operator should know: the policy's predicted
    /// reasons for a VMI without a `LiveMigratable` condition, a missing launcher Pod.
    pub warnings: Vec<String>,
}

/// The preview of maintenance mode on one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Preview {
    pub node: String,
    pub force: bool,
    pub outcome: Outcome,
    /// For `Refused`: every reason, sorted by key (Harvester's own order is random).
    pub refusal: Vec<Refusal>,
    /// The VMs the maintenance acts on: those on the node, and the ones a forced
    /// `LastHealthyReplica` stops elsewhere; sorted by namespace and name.
    pub vms: Vec<VmOutcome>,
    /// For `NeverCompletes`: why, beyond the VMs that stay or block.
    pub stuck: Vec<String>,
    /// What the objects do not tell and was therefore not checked.
    pub notes: Vec<String>,
}

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
    let Some(this) = objects.nodes.iter().find(|n| name_of(n) == node) else {
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
    preview
}

// ---------------------------------------------------------------------------------------------
// Step 1: the control-plane rule (DrainPossible, DH:88-151).

/// `None` when the rule lets `node` through: not labelled control-plane or etcd (existence,
/// any value; `node-role.kubernetes.io/master` is not read), or exactly 3 such nodes of `nodes`
/// (the node itself included when listed) without `harvesterhci.io/maintain-status`. Else the
/// refusal: `SingleControlPlaneNode` when `nodes` hold one such node, `HAControlPlaneNode`
/// otherwise.
pub fn control_plane(nodes: &[Value], node: &Value) -> Option<Refusal> {
    let is_cp =
        |n: &Value| has_key(labels_of(n), CONTROL_PLANE_LABEL) || has_key(labels_of(n), ETCD_LABEL);
    if !is_cp(node) {
        return None;
    }
    let members: BTreeMap<&str, &Value> = nodes
        .iter()
        .filter(|n| is_cp(n))
        .map(|n| (name_of(n), n))
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
        .filter(|n| !has_key(annotations_of(n), MAINTAIN_STATUS))
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
pub fn non_migratable(
    node: &str,
    objects: &Objects,
    index: &Index,
) -> Result<BTreeMap<String, Vec<String>>, String> {
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
fn refusals(found: &BTreeMap<String, Vec<String>>) -> Vec<Refusal> {
    found
        .iter()
        .map(|(reason, vms)| Refusal {
            reason: reason.clone(),
            vms: vms.clone(),
            message: format!("{} cannot be migrated due to {reason}", vms.join(",")),
        })
        .collect()
}

/// `IdentifyNonMigratableVMS` (ND:411-423): VMIs with a `LiveMigratable` condition whose status
/// is exactly `False`, by the condition's reason verbatim (possibly `""`). No condition, or
/// `Unknown`, is migratable.
pub fn live_migratable_false(vmis: &[&Value]) -> BTreeMap<String, Vec<String>> {
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
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
                    .push(namespaced(vmi));
            }
        }
    }
    found
}

/// `CheckVMISchedulingRequirements` (ND:438-493): the VMIs of `vmis` (those on `node`) for which
/// no other node that is Ready and not `spec.unschedulable` matches the required node affinity
/// and then the `nodeSelector` (exact values). Nothing else is considered: taints, resources,
/// pod affinity. An affinity that cannot be parsed is an `Err` (ND:453-456).
pub fn scheduling_not_met(
    node: &str,
    nodes: &[Value],
    vmis: &[&Value],
) -> Result<Vec<String>, String> {
    let candidates: Vec<&Value> = nodes
        .iter()
        .filter(|n| name_of(n) != node && node_ready(n))
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
                        namespaced(vmi)
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
                    namespaced(vmi)
                )
            })?;
        }
        if !any {
            found.push(namespaced(vmi));
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

/// `labels.SelectorFromSet(nodeSelector).Matches(node labels)`: every key present with exactly
/// that value.
pub fn node_selector_matches(selector: &Object, node: &Value) -> bool {
    let labels = labels_of(node);
    selector
        .iter()
        .all(|(key, want)| labels.and_then(|l| l.get(key)) == Some(want))
}

/// One parsed requirement of a node selector term.
enum Requirement<'a> {
    In(&'a str, Vec<&'a str>),
    NotIn(&'a str, Vec<&'a str>),
    Exists(&'a str),
    DoesNotExist(&'a str),
    Gt(&'a str, i64),
    Lt(&'a str, i64),
    /// `matchFields` on `metadata.name`.
    NameIn(&'a str),
    NameNotIn(&'a str),
}

/// Kubernetes' required node affinity (`v1.NodeSelector`) on one node (NA:40-102): the terms
/// are ORed, the expressions and fields of a term ANDed; a term with neither matches nothing; no
/// terms match nothing. Operators `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`
/// (`matchExpressions`); `In`/`NotIn` with one value on `metadata.name` (`matchFields`). Any
/// term that cannot be parsed is an `Err`, whatever the other terms say.
pub fn node_affinity_matches(selector: &Value, node: &Value) -> Result<bool, String> {
    let terms = parse_node_selector(selector)?;
    let labels = labels_of(node);
    let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
    let name = name_of(node);
    Ok(terms.iter().any(|term| {
        term.iter().all(|requirement| match requirement {
            Requirement::In(key, values) => label(key).is_some_and(|v| values.contains(&v)),
            Requirement::NotIn(key, values) => !label(key).is_some_and(|v| values.contains(&v)),
            Requirement::Exists(key) => label(key).is_some(),
            Requirement::DoesNotExist(key) => label(key).is_none(),
            Requirement::Gt(key, bound) => label(key)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v > *bound),
            Requirement::Lt(key, bound) => label(key)
                .and_then(|v| v.parse::<i64>().ok())
                .is_some_and(|v| v < *bound),
            Requirement::NameIn(value) => name == *value,
            Requirement::NameNotIn(value) => name != *value,
        })
    }))
}

/// The non-empty terms of a `v1.NodeSelector`, each as its requirements; every parse error of
/// every term, joined.
fn parse_node_selector(selector: &Value) -> Result<Vec<Vec<Requirement<'_>>>, String> {
    let terms: &[Value] = match selector.get("nodeSelectorTerms") {
        None | Some(Value::Null) => &[],
        Some(Value::Array(terms)) => terms,
        Some(_) => return Err("nodeSelectorTerms: not a list".to_owned()),
    };
    let mut parsed = Vec::new();
    let mut errors = Vec::new();
    for (i, term) in terms.iter().enumerate() {
        let list = |field: &str| match term.get(field) {
            None | Some(Value::Null) => Ok(&[][..]),
            Some(Value::Array(items)) => Ok(items.as_slice()),
            Some(_) => Err(format!("nodeSelectorTerms[{i}].{field}: not a list")),
        };
        let (expressions, fields) = match (list("matchExpressions"), list("matchFields")) {
            (Ok(e), Ok(f)) => (e, f),
            (e, f) => {
                errors.extend(e.err());
                errors.extend(f.err());
                continue;
            }
        };
        // "nil or empty term selects no objects" (NA:60-64).
        if expressions.is_empty() && fields.is_empty() {
            continue;
        }
        let mut requirements = Vec::new();
        for (j, expression) in expressions.iter().enumerate() {
            match expression_requirement(expression) {
                Ok(r) => requirements.push(r),
                Err(e) => errors.push(format!("nodeSelectorTerms[{i}].matchExpressions[{j}]: {e}")),
            }
        }
        for (j, field) in fields.iter().enumerate() {
            match field_requirement(field) {
                Ok(r) => requirements.push(r),
                Err(e) => errors.push(format!("nodeSelectorTerms[{i}].matchFields[{j}]: {e}")),
            }
        }
        parsed.push(requirements);
    }
    if errors.is_empty() {
        Ok(parsed)
    } else {
        Err(errors.join("; "))
    }
}

fn key_operator_values(requirement: &Value) -> Result<(&str, &str, Vec<&str>), String> {
    let key = requirement
        .get("key")
        .and_then(Value::as_str)
        .filter(|k| !k.is_empty())
        .ok_or("key: missing")?;
    let operator = requirement
        .get("operator")
        .and_then(Value::as_str)
        .ok_or("operator: missing")?;
    let values = match requirement.get("values") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(values)) => values
            .iter()
            .map(|v| v.as_str().ok_or("values: not strings"))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err("values: not a list".to_owned()),
    };
    Ok((key, operator, values))
}

/// `nodeSelectorRequirementsAsSelector` (NA:214-251) with `labels.NewRequirement`'s checks.
fn expression_requirement(expression: &Value) -> Result<Requirement<'_>, String> {
    let (key, operator, values) = key_operator_values(expression)?;
    let int = |values: &[&str]| match values {
        [one] => one
            .parse::<i64>()
            .map_err(|_| format!("{operator}: value {one:?} is not an integer")),
        _ => Err(format!(
            "{operator}: exactly one value needed, got {}",
            values.len()
        )),
    };
    match operator {
        "In" | "NotIn" if values.is_empty() => Err(format!("{operator}: values can't be empty")),
        "In" => Ok(Requirement::In(key, values)),
        "NotIn" => Ok(Requirement::NotIn(key, values)),
        "Exists" | "DoesNotExist" if !values.is_empty() => {
            Err(format!("{operator}: values must be empty"))
        }
        "Exists" => Ok(Requirement::Exists(key)),
        "DoesNotExist" => Ok(Requirement::DoesNotExist(key)),
        "Gt" => Ok(Requirement::Gt(key, int(&values)?)),
        "Lt" => Ok(Requirement::Lt(key, int(&values)?)),
        other => Err(format!("{other:?} is not a valid node selector operator")),
    }
}

/// `nodeSelectorRequirementsAsFieldSelector` (NA:260-292): `metadata.name` only, `In` or
/// `NotIn`, exactly one value.
fn field_requirement(field: &Value) -> Result<Requirement<'_>, String> {
    let (key, operator, values) = key_operator_values(field)?;
    if key != "metadata.name" {
        return Err(format!("{key:?} is not a supported field (metadata.name)"));
    }
    match (operator, values.as_slice()) {
        ("In", [one]) => Ok(Requirement::NameIn(one)),
        ("NotIn", [one]) => Ok(Requirement::NameNotIn(one)),
        ("In" | "NotIn", _) => Err(format!(
            "{operator}: exactly one value needed, got {}",
            values.len()
        )),
        (other, _) => Err(format!("{other:?} is not a valid field selector operator")),
    }
}

/// `listVMI` / `listVolumeNames` (ND:276-350): every Longhorn volume (replicas of
/// `longhorn-system`, grouped by `spec.volumeName`) with at most one replica whose
/// `status.started` is true, that one on `node`; each of its `workloadsStatus` of type
/// `VirtualMachineInstance` names a VMI (any node), reported as its owner VM. A selected volume
/// missing from `volumes`, a workload VMI missing, or a VMI without a `kubevirt.io/v1`
/// VirtualMachine owner is an `Err` (Harvester's function fails, ND:286-289, 341-345, 361-364).
pub fn last_healthy_replica(
    node: &str,
    longhorn: Longhorn,
    index: &Index,
) -> Result<Vec<String>, String> {
    // volume → (started replicas, a started one on the node); BTreeMap: a stable order.
    let mut volumes: BTreeMap<&str, (usize, bool)> = BTreeMap::new();
    for replica in longhorn.replicas {
        if namespace_of(replica) != LONGHORN_NAMESPACE {
            continue;
        }
        let volume = replica
            .pointer("/spec/volumeName")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let started = replica.pointer("/status/started") == Some(&Value::Bool(true));
        let here = started && replica.pointer("/spec/nodeID").and_then(Value::as_str) == Some(node);
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
            .find(|v| namespace_of(v) == LONGHORN_NAMESPACE && name_of(v) == volume)
            .ok_or_else(|| format!("volume {LONGHORN_NAMESPACE}/{volume} not found"))?;
        let namespace = object
            .pointer("/status/kubernetesStatus/namespace")
            .and_then(Value::as_str)
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
            found.push(format!("{namespace}/{owner}"));
        }
    }
    Ok(found)
}

// ---------------------------------------------------------------------------------------------
// Steps 3 and 4.

/// What steps 3 and 4 leave: the VMs acted on, and why the node never completes.
#[derive(Debug, Default)]
pub struct Acted {
    pub vms: Vec<VmOutcome>,
    pub stuck: Vec<String>,
    pub notes: Vec<String>,
}

/// Step 3, not forced and nothing non-migratable (ND:137-193, 201-231): every VMI on the node
/// whose **VMI** label is a Shutdown-family value is stopped (VM `runStrategy: Halted`); the
/// AfterEnable / AfterDisable ones annotate their VM and start again by the **VM's**
/// `metadata.labels` value (MC:73-83, FM:247-257); then the node is cordoned (the webhook's
/// last-available-node rule) and drained: a launcher Pod that the filter skips stays, the
/// others follow their eviction strategy.
pub fn not_forced(
    node: &str,
    objects: &Objects,
    index: &Index,
    predict: &dyn Fn(&Value) -> Assessment,
) -> Acted {
    let mut acted = Acted::default();
    let on_node = index.vmis_on(node);
    // The stop list (ND:139-192), in listing order; an owner-less VMI fails it before any stop.
    let mut stop: BTreeMap<String, (&Value, Restart, String)> = BTreeMap::new();
    for vmi in &on_node {
        let Some(label) = label_of(vmi).filter(|l| is_shutdown_family(l)) else {
            continue;
        };
        let Some(owner) = owner_vm(vmi) else {
            acted.stuck.push(format!(
                "no valid VM owner found for VMI {} (label {label}): the controller retries forever before stopping anything",
                namespaced(vmi)
            ));
            return acted;
        };
        let namespace = namespace_of(vmi);
        let vm = index.vm(namespace, owner);
        let (restart, why) = restart_of(label, vm);
        stop.insert(format!("{namespace}/{owner}"), (*vmi, restart, why));
    }
    let names: Vec<String> = stop.keys().cloned().collect();
    if let Some((at, error)) = stop_vms(&names, index) {
        acted.stuck.push(error);
        // The VMs sorted before the failing one are stopped on every retry.
        for name in &names[..at] {
            if let Some((vmi, restart, why)) = stop.get(name) {
                acted.vms.push(stopped(vmi, name, *restart, why.clone()));
            }
        }
        return acted;
    }
    for (name, (vmi, restart, why)) in &stop {
        acted.vms.push(stopped(vmi, name, *restart, why.clone()));
    }
    if let Some(error) = last_available_node(node, objects.nodes) {
        acted.stuck.push(error);
        return acted;
    }
    for vmi in on_node {
        let name = vm_name(vmi);
        if stop.contains_key(&name) {
            continue;
        }
        acted.vms.push(drained(
            node,
            vmi,
            objects,
            index,
            predict,
            &mut acted.notes,
        ));
    }
    acted
}

/// Step 4, forced (ND:197-231): exactly the VMs of step 2 are stopped, wherever they run, and
/// never started again (no node-name annotation is written; a stale one left by an earlier
/// attempt on this node still counts). No Shutdown-family VM is stopped: one whose launcher Pod
/// the filter skips stays on the node. The others on the node are drained.
pub fn forced(
    node: &str,
    objects: &Objects,
    index: &Index,
    found: &BTreeMap<String, Vec<String>>,
    predict: &dyn Fn(&Value) -> Assessment,
) -> Acted {
    let mut acted = Acted::default();
    // getUniqueVMSfromConditionMap (ND:508-516): sorted, deduplicated.
    let mut keys: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (reason, vms) in found {
        for vm in vms {
            keys.entry(vm.as_str()).or_default().push(reason.as_str());
        }
    }
    let names: Vec<String> = keys.keys().map(|k| (*k).to_owned()).collect();
    let error = stop_vms(&names, index);
    let stopped_count = error.as_ref().map_or(names.len(), |(at, _)| *at);
    for (name, reasons) in keys.iter().take(stopped_count) {
        let (namespace, vm_name) = name.split_once('/').unwrap_or(("", name));
        let vm = index.vm(namespace, vm_name);
        let vmi = index.vmi(namespace, vm_name);
        let mut reasons_unique: Vec<&str> = reasons.clone();
        reasons_unique.dedup();
        let (restart, why) = match vm.and_then(|vm| stale_restart(node, vm)) {
            Some(stale) => stale,
            None => (
                Restart::Never,
                "no restart annotation is written: it stays off whatever its label".to_owned(),
            ),
        };
        acted.vms.push(VmOutcome {
            namespace: namespace.to_owned(),
            name: vm_name.to_owned(),
            node: vmi.and_then(vmi_node).map(str::to_owned),
            outcome: DrainOutcome::ShutDown,
            restart: Some(restart),
            reasons: vec![
                format!(
                    "forced: stopped (runStrategy Halted) for {}",
                    reasons_unique.join(", ")
                ),
                why,
            ],
            warnings: Vec::new(),
        });
    }
    if let Some((_, error)) = error {
        acted.stuck.push(error);
        return acted;
    }
    if let Some(error) = last_available_node(node, objects.nodes) {
        acted.stuck.push(error);
        return acted;
    }
    for vmi in index.vmis_on(node) {
        if keys.contains_key(vm_name(vmi).as_str()) || keys.contains_key(namespaced(vmi).as_str()) {
            continue;
        }
        acted.vms.push(drained(
            node,
            vmi,
            objects,
            index,
            predict,
            &mut acted.notes,
        ));
    }
    acted
}

/// `findAndStopVM` (ND:235-261) on each name in order: a VM that does not exist fails the
/// reconcile (its NotFound is wrapped with `%v`, ND:239, so ND:205 does not skip it), as does a
/// VM with both `spec.running` and `spec.runStrategy`. The first failure: its position in
/// `names` (the ones before it are stopped on every retry) and why.
fn stop_vms(names: &[String], index: &Index) -> Option<(usize, String)> {
    for (at, name) in names.iter().enumerate() {
        let (namespace, vm_name) = name.split_once('/').unwrap_or(("", name));
        match index.vm(namespace, vm_name) {
            None => {
                return Some((
                    at,
                    format!("VM {name} not found when stopping it: the controller retries forever"),
                ));
            }
            Some(vm) => {
                let spec = vm.get("spec");
                let running = spec
                    .and_then(|s| s.get("running"))
                    .is_some_and(|v| !v.is_null());
                let strategy = spec
                    .and_then(|s| s.get("runStrategy"))
                    .is_some_and(|v| !v.is_null());
                if running && strategy {
                    return Some((
                        at,
                        format!(
                            "VM {name} sets both spec.running and spec.runStrategy, it cannot be stopped: the controller retries forever"
                        ),
                    ));
                }
            }
        }
    }
    None
}

/// The webhook's last-available-node rule (NV:132-147, UN:105-117) on the controller's cordon
/// (DH:72): another node without `maintain-status` and not `spec.unschedulable` must exist,
/// else the cordon is rejected and the controller retries forever (after the stops).
pub fn last_available_node(node: &str, nodes: &[Value]) -> Option<String> {
    let other = nodes.iter().any(|n| {
        name_of(n) != node
            && !has_key(annotations_of(n), MAINTAIN_STATUS)
            && n.pointer("/spec/unschedulable") != Some(&Value::Bool(true))
    });
    (!other).then(|| {
        "the node webhook rejects the cordon: can't enable maintenance mode or cordon on the last available node; the controller retries forever".to_owned()
    })
}

/// When a VM stopped by its VMI label `label` starts again (§3 of the rules): the annotation is
/// written only for AfterEnable / AfterDisable VMI labels and an existing VM (ND:152-189); the
/// restart then selects by the VM's own `metadata.labels` value (MC:73-83, FM:247-257).
fn restart_of(label: &str, vm: Option<&Value>) -> (Restart, String) {
    if label != AFTER_ENABLE && label != AFTER_DISABLE {
        return (Restart::Never, "not started again".to_owned());
    }
    let Some(vm) = vm else {
        return (
            Restart::Never,
            "its VM does not exist: not annotated, not started again".to_owned(),
        );
    };
    match vm_label(vm) {
        Some(AFTER_ENABLE) => (
            Restart::AfterEnable,
            format!("VM label {AFTER_ENABLE}: started again when maintenance completes"),
        ),
        Some(AFTER_DISABLE) => (
            Restart::AfterDisable,
            format!("VM label {AFTER_DISABLE}: started again when maintenance mode is disabled"),
        ),
        Some(other) => (
            Restart::Never,
            format!("but the VM's own label is {other}: annotated, never started again"),
        ),
        None => (
            Restart::Never,
            format!(
                "but the VM's metadata.labels lack {label} (template only): annotated, never started again"
            ),
        ),
    }
}

/// A restart annotation `node-name == node` already on the VM (an earlier non-forced attempt):
/// the VM's label then decides (MC:81-83, FM:255-257).
fn stale_restart(node: &str, vm: &Value) -> Option<(Restart, String)> {
    let annotated = annotations_of(vm)
        .and_then(|a| a.get(NODE_NAME_ANNOTATION))
        .and_then(Value::as_str)
        == Some(node);
    if !annotated {
        return None;
    }
    let restart = match vm_label(vm) {
        Some(AFTER_ENABLE) => Restart::AfterEnable,
        Some(AFTER_DISABLE) => Restart::AfterDisable,
        _ => return None,
    };
    Some((
        restart,
        format!(
            "an earlier attempt left {NODE_NAME_ANNOTATION}={node} on the VM: its label {} decides",
            vm_label(vm).unwrap_or_default()
        ),
    ))
}

fn stopped(vmi: &Value, name: &str, restart: Restart, why: String) -> VmOutcome {
    let (namespace, vm_name) = name.split_once('/').unwrap_or(("", name));
    VmOutcome {
        namespace: namespace.to_owned(),
        name: vm_name.to_owned(),
        node: vmi_node(vmi).map(str::to_owned),
        outcome: DrainOutcome::ShutDown,
        restart: Some(restart),
        reasons: vec![
            format!(
                "VMI label {}: stopped before the drain",
                label_of(vmi).unwrap_or_default()
            ),
            why,
        ],
        warnings: Vec::new(),
    }
}

/// A VMI on the node that Harvester does not stop, through the drain: its launcher Pod's own
/// labels decide the filter (DH:153-174; Harvester never syncs them); a skipped Pod stays
/// (`Blocks`: the node never completes); an evicted one follows `drain_outcome` with the VMI's
/// `LiveMigratable` condition as its migratability.
fn drained(
    node: &str,
    vmi: &Value,
    objects: &Objects,
    index: &Index,
    predict: &dyn Fn(&Value) -> Assessment,
    notes: &mut Vec<String>,
) -> VmOutcome {
    let namespace = namespace_of(vmi);
    let name = vm_name(vmi);
    let (_, short) = name.split_once('/').unwrap_or(("", &name));
    let vm = owner_vm(vmi).and_then(|owner| index.vm(namespace, owner));
    let mut outcome = VmOutcome {
        namespace: namespace.to_owned(),
        name: short.to_owned(),
        node: Some(node.to_owned()),
        outcome: DrainOutcome::Migrate,
        restart: None,
        reasons: Vec::new(),
        warnings: Vec::new(),
    };
    let empty = Object::new();
    let pod = index.launcher_pod(vmi, node);
    let pod_labels = match pod {
        Some(pod) => pod
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .unwrap_or(&empty),
        None => {
            outcome.warnings.push(
                "launcher Pod not in the objects: its labels taken from the VMI's".to_owned(),
            );
            vmi.pointer("/metadata/labels")
                .and_then(Value::as_object)
                .unwrap_or(&empty)
        }
    };
    if drain_action(pod_labels) == DrainAction::Skip {
        let pod_label = pod_labels
            .get(DEFAULT_LABEL_KEY)
            .and_then(Value::as_str)
            .unwrap_or_default();
        outcome.outcome = DrainOutcome::Blocks;
        // Not forced, a Shutdown-family VMI label has been stopped already: only forced gets here.
        let why = match label_of(vmi) {
            Some(vmi_label) if is_shutdown_family(vmi_label) => format!(
                "forced: Harvester stops no Shutdown-family VM (VMI label {vmi_label}), and the drain skips its Pod (label {pod_label}): it stays on the node"
            ),
            vmi_label => format!(
                "the drain skips its Pod (Pod label {pod_label}) but Harvester does not stop it (VMI label {}): it stays on the node",
                vmi_label.unwrap_or("<unset>")
            ),
        };
        outcome.reasons.push(why);
        return outcome;
    }
    let mut non_migratable = Vec::new();
    let mut has_condition = false;
    for condition in conditions(vmi) {
        if condition.get("type").and_then(Value::as_str) == Some("LiveMigratable") {
            has_condition = true;
            if condition.get("status").and_then(Value::as_str) == Some("False") {
                let reason = condition
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                non_migratable.push(format!("LiveMigratable=False ({reason})"));
            }
        }
    }
    let assessment = vm.map(predict);
    if !has_condition {
        let reasons = assessment
            .as_ref()
            .map(|a| a.reasons.clone())
            .unwrap_or_default();
        if !reasons.is_empty() {
            outcome.warnings.push(format!(
                "predicted: no LiveMigratable condition, Harvester counts it as migratable; the policy predicts it cannot live-migrate ({})",
                reasons.join(", ")
            ));
        }
    }
    let own = vmi
        .pointer("/spec/evictionStrategy")
        .and_then(Value::as_str);
    let strategy = own
        .map(str::to_owned)
        .or_else(|| {
            assessment
                .as_ref()
                .and_then(|a| a.eviction_strategy.clone())
        })
        .unwrap_or_else(|| "None".to_owned());
    if vm.is_none() {
        notes.push(format!(
            "{namespace}/{short}: no VirtualMachine owns the VMI, its eviction strategy read from the VMI only"
        ));
    }
    let decision = drain_outcome(
        pod_labels,
        &strategy,
        &non_migratable,
        objects.external_controller,
    );
    outcome.outcome = decision.outcome;
    outcome.reasons.push(decision.reason);
    if decision.outcome == DrainOutcome::Blocks {
        outcome
            .reasons
            .push("the drain times out after 240 s and the controller retries forever".to_owned());
    }
    outcome
}

// ---------------------------------------------------------------------------------------------
// Lookups.

/// The objects by name, and the VMIs by node.
pub struct Index<'a> {
    vms: HashMap<(&'a str, &'a str), &'a Value>,
    vmis: HashMap<(&'a str, &'a str), &'a Value>,
    by_node: HashMap<&'a str, Vec<&'a Value>>,
    /// Launcher Pods by namespace and owning VMI name.
    pods: HashMap<(&'a str, &'a str), Vec<&'a Value>>,
}

impl<'a> Index<'a> {
    pub fn new(objects: &Objects<'a>) -> Index<'a> {
        let mut index = Index {
            vms: HashMap::new(),
            vmis: HashMap::new(),
            by_node: HashMap::new(),
            pods: HashMap::new(),
        };
        for vm in objects.vms {
            index.vms.insert((namespace_of(vm), name_of(vm)), vm);
        }
        for vmi in objects.vmis {
            index.vmis.insert((namespace_of(vmi), name_of(vmi)), vmi);
            if let Some(node) = vmi_node(vmi) {
                index.by_node.entry(node).or_default().push(vmi);
            }
        }
        for pod in objects.pods {
            let owner = owners(pod)
                .find(|o| o.get("kind").and_then(Value::as_str) == Some("VirtualMachineInstance"));
            if let Some(owner) = owner.and_then(|o| o.get("name")).and_then(Value::as_str) {
                index
                    .pods
                    .entry((namespace_of(pod), owner))
                    .or_default()
                    .push(pod);
            }
        }
        for list in index.by_node.values_mut() {
            list.sort_by_key(|v| (namespace_of(v), name_of(v)));
        }
        index
    }

    pub fn vm(&self, namespace: &str, name: &str) -> Option<&'a Value> {
        self.vms.get(&(namespace, name)).copied()
    }

    pub fn vmi(&self, namespace: &str, name: &str) -> Option<&'a Value> {
        self.vmis.get(&(namespace, name)).copied()
    }

    /// VMIs labelled `kubevirt.io/nodeName=node`, any phase (VMIU:143-153), sorted.
    pub fn vmis_on(&self, node: &str) -> Vec<&'a Value> {
        self.by_node.get(node).cloned().unwrap_or_default()
    }

    /// The VMI's launcher Pod on `node` (`spec.nodeName`), by its owner reference.
    fn launcher_pod(&self, vmi: &Value, node: &str) -> Option<&'a Value> {
        let pods = self.pods.get(&(namespace_of(vmi), name_of(vmi)))?;
        pods.iter()
            .find(|p| p.pointer("/spec/nodeName").and_then(Value::as_str) == Some(node))
            .copied()
    }
}

fn name_of(object: &Value) -> &str {
    object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn namespace_of(object: &Value) -> &str {
    object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn namespaced(object: &Value) -> String {
    format!("{}/{}", namespace_of(object), name_of(object))
}

fn labels_of(object: &Value) -> Option<&Object> {
    object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
}

fn annotations_of(object: &Value) -> Option<&Object> {
    object
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
}

fn has_key(map: Option<&Object>, key: &str) -> bool {
    map.is_some_and(|m| m.contains_key(key))
}

fn conditions(object: &Value) -> &[Value] {
    object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The VMI's own `harvesterhci.io/maintain-mode-strategy` label.
fn label_of(object: &Value) -> Option<&str> {
    labels_of(object)
        .and_then(|l| l.get(DEFAULT_LABEL_KEY))
        .and_then(Value::as_str)
}

/// The VM's own `metadata.labels` value (what the restarts select on).
fn vm_label(vm: &Value) -> Option<&str> {
    label_of(vm)
}

fn vmi_node(vmi: &Value) -> Option<&str> {
    labels_of(vmi)
        .and_then(|l| l.get(NODE_NAME_LABEL))
        .and_then(Value::as_str)
}

fn owners(object: &Value) -> impl Iterator<Item = &Value> {
    object
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// `findVM` (ND:264-272): the owner of Kind `VirtualMachine` and APIVersion `kubevirt.io/v1`.
fn owner_vm(vmi: &Value) -> Option<&str> {
    owners(vmi)
        .find(|o| {
            o.get("kind").and_then(Value::as_str) == Some("VirtualMachine")
                && o.get("apiVersion").and_then(Value::as_str) == Some("kubevirt.io/v1")
        })
        .and_then(|o| o.get("name"))
        .and_then(Value::as_str)
}

/// `namespace/<owner VM>`, or `namespace/<VMI>` for a VMI without one.
fn vm_name(vmi: &Value) -> String {
    format!(
        "{}/{}",
        namespace_of(vmi),
        owner_vm(vmi).unwrap_or(name_of(vmi))
    )
}
