//! What maintenance mode does once admitted: the drain not forced (step 3) or forced (step 4),
//! the VMs it stops, and how each restarts.

use super::index::*;
use super::outcome::*;
use crate::Object;
use crate::drain::{DEFAULT_LABEL_KEY, DrainAction, DrainOutcome, drain_action, drain_outcome};
use crate::object::ObjectExt;
use crate::restart::{RunStrategy, after_eviction, node_bound};
use serde_json::Value;
use std::collections::BTreeMap;
use vm_maintenance_strategy::eviction::Assessment;
use vm_maintenance_strategy::reason;
use vm_maintenance_strategy::strategy::{EvictionStrategy, is_shutdown_family};

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
    let mut stop: BTreeMap<VmRef, (&Value, Restart, String)> = BTreeMap::new();
    for vmi in &on_node {
        let Some(label) = vmi
            .label(DEFAULT_LABEL_KEY)
            .filter(|l| is_shutdown_family(l))
        else {
            continue;
        };
        let Some(owner) = owner_vm(vmi) else {
            acted.stuck.push(format!(
                "no valid VM owner found for VMI {} (label {label}): the controller retries forever before stopping anything",
                VmRef::of(vmi)
            ));
            return acted;
        };
        let vm = VmRef {
            namespace: vmi.namespace_field(),
            name: owner,
        };
        let (restart, why) = restart_of(label, index.vm(vm.namespace, vm.name));
        stop.insert(vm, (*vmi, restart, why));
    }
    let names: Vec<VmRef> = stop.keys().copied().collect();
    let error = stop_vms(&names, index);
    // The VMs sorted before a failing one are stopped on every retry.
    let stopped_count = error.as_ref().map_or(names.len(), |(at, _)| *at);
    for (vm, (vmi, restart, why)) in stop.iter().take(stopped_count) {
        acted.vms.push(stopped(vmi, *vm, *restart, why.clone()));
    }
    if let Some((_, error)) = error {
        acted.stuck.push(error);
        return acted;
    }
    let stopped = |vmi: &Value| stop.contains_key(&VmRef::owner_of(vmi));
    cordon_and_drain(node, on_node, &stopped, objects, index, predict, &mut acted);
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
    found: &BTreeMap<String, Vec<VmRef>>,
    predict: &dyn Fn(&Value) -> Assessment,
) -> Acted {
    let mut acted = Acted::default();
    // getUniqueVMSfromConditionMap (ND:508-516): sorted, deduplicated.
    let mut keys: BTreeMap<VmRef, Vec<&str>> = BTreeMap::new();
    for (reason, vms) in found {
        for vm in vms {
            keys.entry(*vm).or_default().push(reason.as_str());
        }
    }
    let names: Vec<VmRef> = keys.keys().copied().collect();
    let error = stop_vms(&names, index);
    let stopped_count = error.as_ref().map_or(names.len(), |(at, _)| *at);
    for (name, reasons) in keys.iter().take(stopped_count) {
        let vm = index.vm(name.namespace, name.name);
        let vmi = index.vmi(name.namespace, name.name);
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
            namespace: name.namespace.to_owned(),
            name: name.name.to_owned(),
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
    let stopped = |vmi: &Value| {
        keys.contains_key(&VmRef::owner_of(vmi)) || keys.contains_key(&VmRef::of(vmi))
    };
    cordon_and_drain(
        node,
        index.vmis_on(node),
        &stopped,
        objects,
        index,
        predict,
        &mut acted,
    );
    acted
}

/// The cordon (the last-available-node rule), then the drain of every VMI on the node that was
/// not `stopped`.
fn cordon_and_drain(
    node: &str,
    on_node: Vec<&Value>,
    stopped: &dyn Fn(&Value) -> bool,
    objects: &Objects,
    index: &Index,
    predict: &dyn Fn(&Value) -> Assessment,
    acted: &mut Acted,
) {
    if let Some(error) = last_available_node(node, objects.nodes) {
        acted.stuck.push(error);
        return;
    }
    for vmi in on_node.into_iter().filter(|vmi| !stopped(vmi)) {
        let outcome = drained(node, vmi, objects, index, predict, &mut acted.notes);
        acted.vms.push(outcome);
    }
}

/// `findAndStopVM` (ND:235-261) on each name in order: a VM that does not exist fails the
/// reconcile (its NotFound is wrapped with `%v`, ND:239, so ND:205 does not skip it), as does a
/// VM with both `spec.running` and `spec.runStrategy`. The first failure: its position in
/// `names` (the ones before it are stopped on every retry) and why.
pub(crate) fn stop_vms(names: &[VmRef], index: &Index) -> Option<(usize, String)> {
    for (at, name) in names.iter().enumerate() {
        match index.vm(name.namespace, name.name) {
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
        n.name() != node
            && !has_key(n.annotations(), MAINTAIN_STATUS)
            && n.pointer("/spec/unschedulable") != Some(&Value::Bool(true))
    });
    (!other).then(|| {
        "the node webhook rejects the cordon: can't enable maintenance mode or cordon on the last available node; the controller retries forever".to_owned()
    })
}

/// When a VM stopped by its VMI label `label` starts again (docs/rules.md, "Harvester maintenance
/// mode"): the annotation is written only for AfterEnable / AfterDisable VMI labels and an
/// existing VM (ND:152-189); the restart then selects by the VM's own `metadata.labels` value
/// (MC:73-83, FM:247-257).
pub(crate) fn restart_of(label: &str, vm: Option<&Value>) -> (Restart, String) {
    if label != AFTER_ENABLE && label != AFTER_DISABLE {
        return (Restart::Never, "not started again".to_owned());
    }
    let Some(vm) = vm else {
        return (
            Restart::Never,
            "its VM does not exist: not annotated, not started again".to_owned(),
        );
    };
    match vm.label(DEFAULT_LABEL_KEY) {
        Some(AFTER_ENABLE) => restored(
            vm,
            Restart::AfterEnable,
            format!("VM label {AFTER_ENABLE}: started again when maintenance completes"),
        ),
        Some(AFTER_DISABLE) => restored(
            vm,
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
pub(crate) fn stale_restart(node: &str, vm: &Value) -> Option<(Restart, String)> {
    let annotated = vm.annotation(NODE_NAME_ANNOTATION) == Some(node);
    if !annotated {
        return None;
    }
    let restart = match vm.label(DEFAULT_LABEL_KEY) {
        Some(AFTER_ENABLE) => Restart::AfterEnable,
        Some(AFTER_DISABLE) => Restart::AfterDisable,
        _ => return None,
    };
    Some(restored(
        vm,
        restart,
        format!(
            "an earlier attempt left {NODE_NAME_ANNOTATION}={node} on the VM: its label {} decides",
            vm.label(DEFAULT_LABEL_KEY).unwrap_or_default()
        ),
    ))
}

/// The runStrategy Harvester gives back to a VM it starts again (MC:93-102 after enable; after
/// disable FM:265 asks `start`, which sets `Always`, and Harvester's VM mutator replaces it,
/// `pkg/webhook/resources/virtualmachine/mutator.go` 176-206): the VM's
/// `harvesterhci.io/vmRunStrategy` annotation, which Harvester's VM controller keeps equal to
/// every runStrategy but `Halted` (`vm_controller.go` 240-262), else `RerunOnFailure`. KubeVirt
/// starts a VM set back to `Always`, `RerunOnFailure` or `Once` (no VMI left); a `Manual` one
/// only on a start request, which nobody sends: it stays off (R11).
fn restored(vm: &Value, restart: Restart, why: String) -> (Restart, String) {
    let stored = vm.annotation(RUN_STRATEGY_ANNOTATION);
    let current = RunStrategy::of(Some(vm)).value.filter(|v| v != "Halted");
    let run_strategy = stored
        .map(str::to_owned)
        .or(current)
        .unwrap_or_else(|| "RerunOnFailure".to_owned());
    match run_strategy.as_str() {
        "Always" | "RerunOnFailure" | "Once" => (restart, why),
        other => (
            Restart::Never,
            format!(
                "{why}, but Harvester sets its runStrategy back to {other} ({RUN_STRATEGY_ANNOTATION}) and KubeVirt starts such a VM only on a start request: it stays off"
            ),
        ),
    }
}

pub(crate) fn stopped(vmi: &Value, vm: VmRef, restart: Restart, why: String) -> VmOutcome {
    VmOutcome {
        namespace: vm.namespace.to_owned(),
        name: vm.name.to_owned(),
        node: vmi_node(vmi).map(str::to_owned),
        outcome: DrainOutcome::ShutDown,
        restart: Some(restart),
        reasons: vec![
            format!(
                "VMI label {}: stopped before the drain",
                vmi.label(DEFAULT_LABEL_KEY).unwrap_or_default()
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
pub(crate) fn drained(
    node: &str,
    vmi: &Value,
    objects: &Objects,
    index: &Index,
    predict: &dyn Fn(&Value) -> Assessment,
    notes: &mut Vec<String>,
) -> VmOutcome {
    let owner = VmRef::owner_of(vmi);
    let vm = owner_vm(vmi).and_then(|name| index.vm(owner.namespace, name));
    let mut outcome = VmOutcome {
        namespace: owner.namespace.to_owned(),
        name: owner.name.to_owned(),
        node: Some(node.to_owned()),
        outcome: DrainOutcome::Migrate,
        restart: None,
        reasons: Vec::new(),
        warnings: Vec::new(),
    };
    let pod_labels = launcher_labels(vmi, index.launcher_pod(vmi, node), &mut outcome.warnings);
    if drain_action(pod_labels) == DrainAction::Skip {
        outcome.outcome = DrainOutcome::Blocks;
        outcome.reasons.push(skipped(vmi, pod_labels));
        return outcome;
    }
    let (has_condition, non_migratable) = live_migratable(vmi);
    let assessment = vm.map(predict);
    let predicted = assessment.as_ref().map_or(&[][..], |a| &a.reasons[..]);
    if !has_condition && !predicted.is_empty() {
        outcome.warnings.push(format!(
            "predicted: no LiveMigratable condition, Harvester counts it as migratable; the policy predicts it cannot live-migrate ({})",
            reason::join(predicted, ", ")
        ));
    }
    let strategy = match vmi.text_at("/spec/evictionStrategy") {
        Some(own) => EvictionStrategy::parse(own),
        None => assessment
            .and_then(|a| a.eviction_strategy)
            .unwrap_or(EvictionStrategy::None),
    };
    if vm.is_none() {
        notes.push(format!(
            "{owner}: no VirtualMachine owns the VMI, its eviction strategy read from the VMI only"
        ));
    }
    let bound = node_bound(vmi, node, &index.disks);
    let evicted = after_eviction(&RunStrategy::of(vm), bound.as_deref());
    let decision = drain_outcome(
        pod_labels,
        &strategy,
        &non_migratable,
        objects.external_controller,
        &evicted,
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

/// The labels the drain filter reads: the launcher Pod's, else (with a warning) the VMI's.
fn launcher_labels<'v>(
    vmi: &'v Value,
    pod: Option<&'v Value>,
    warnings: &mut Vec<String>,
) -> &'v Object {
    static EMPTY: std::sync::OnceLock<Object> = std::sync::OnceLock::new();
    let labels = match pod {
        Some(pod) => pod.labels(),
        None => {
            warnings.push(
                "launcher Pod not in the objects: its labels taken from the VMI's".to_owned(),
            );
            vmi.labels()
        }
    };
    labels.unwrap_or_else(|| EMPTY.get_or_init(Object::new))
}

/// Why a VMI whose Pod the drain filter skips stays on the node.
fn skipped(vmi: &Value, pod_labels: &Object) -> String {
    let pod_label = pod_labels
        .get(DEFAULT_LABEL_KEY)
        .and_then(Value::as_str)
        .unwrap_or_default();
    // Not forced, a Shutdown-family VMI label has been stopped already: only forced gets here.
    match vmi.label(DEFAULT_LABEL_KEY) {
        Some(vmi_label) if is_shutdown_family(vmi_label) => format!(
            "forced: Harvester stops no Shutdown-family VM (VMI label {vmi_label}), and the drain skips its Pod (label {pod_label}): it stays on the node"
        ),
        vmi_label => format!(
            "the drain skips its Pod (Pod label {pod_label}) but Harvester does not stop it (VMI label {}): it stays on the node",
            vmi_label.unwrap_or("<unset>")
        ),
    }
}

/// Whether the VMI has a `LiveMigratable` condition, and each `False` one's reason in words.
fn live_migratable(vmi: &Value) -> (bool, Vec<String>) {
    let mut has_condition = false;
    let mut non_migratable = Vec::new();
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
    (has_condition, non_migratable)
}
