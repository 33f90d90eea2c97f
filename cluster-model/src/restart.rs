//! What becomes of a VM evicted without live migration (docs/rules.md, "After an eviction without
//! migration", R1-R10).
//!
//! The eviction deletes the launcher Pod; virt-launcher asks the guest to shut down. A clean
//! shutdown ends the VMI `Succeeded`, a guest that outlasts its grace period is destroyed and
//! ends it `Failed` (KubeVirt v1.9.0 `pkg/virt-handler/vm.go` 2355-2370). The VM controller then
//! acts by the VM's `runStrategy` (`pkg/virt-controller/watch/vm/vm.go` `syncRunStrategy`,
//! 970-1177): `Always` starts it again, `RerunOnFailure` only after `Failed`, `Manual`, `Once`
//! and `Halted` never on their own. A VM whose disk only its node can mount cannot start
//! anywhere else: after a drain it waits for that node.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use crate::affinity::node_affinity_matches;
use crate::drain::{DrainDecision, DrainOutcome};
use crate::object::ObjectExt;

/// The VM's `runStrategy` as KubeVirt reads it (`types.go` 1957-1970 `RunStrategy()`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunStrategy {
    /// `Always`, `RerunOnFailure`, `Manual`, `Once`, `Halted`, or what the VM wrote (a value
    /// that is not a string as its JSON text); `None` when there is none to read (no VM, or
    /// both fields set).
    pub value: Option<String>,
    /// The field that decided: `spec.runStrategy`, `spec.running`, `default` (neither set:
    /// `Halted`), `both` (both set: KubeVirt's error), `noVm` (no VirtualMachine owns the VMI).
    pub field: &'static str,
}

impl RunStrategy {
    /// The runStrategy of `vm` (`None`: the VMI has no VirtualMachine).
    pub fn of(vm: Option<&Value>) -> RunStrategy {
        let Some(vm) = vm else {
            return RunStrategy::read(None, "noVm");
        };
        let field = |name: &str| {
            vm.get("spec")
                .and_then(|s| s.get(name))
                .filter(|v| !v.is_null())
        };
        match (field("runStrategy"), field("running")) {
            (Some(_), Some(_)) => RunStrategy::read(None, "both"),
            (Some(Value::String(value)), None) => {
                RunStrategy::read(Some(value), "spec.runStrategy")
            }
            (Some(other), None) => RunStrategy::read(Some(&other.to_string()), "spec.runStrategy"),
            (None, Some(running)) => {
                let value = if running == &Value::Bool(true) {
                    "Always"
                } else {
                    "Halted"
                };
                RunStrategy::read(Some(value), "spec.running")
            }
            (None, None) => RunStrategy::read(Some("Halted"), "default"),
        }
    }

    fn read(value: Option<&str>, field: &'static str) -> RunStrategy {
        RunStrategy {
            value: value.map(str::to_owned),
            field,
        }
    }

    /// `runStrategy Always (spec.runStrategy)`, as the reasons name it.
    fn shown(&self) -> String {
        let value = self.value.as_deref().unwrap_or_default();
        match self.field {
            "spec.running" => format!("runStrategy {value} (spec.running: {})", value == "Always"),
            "default" => format!("runStrategy {value} (neither spec.runStrategy nor spec.running)"),
            field => format!("runStrategy {value} ({field})"),
        }
    }
}

/// What follows the eviction by the runStrategy alone (R1-R9): `Restart`, `MayStayOff` or
/// `StaysOff`, and why in words.
pub fn by_run_strategy(run: &RunStrategy) -> (DrainOutcome, String) {
    use DrainOutcome::{MayStayOff, Restart, StaysOff};
    match (run.field, run.value.as_deref()) {
        ("noVm", _) => (
            StaysOff,
            "no VirtualMachine owns the VMI: nothing starts it again".to_owned(),
        ),
        ("both", _) => (
            StaysOff,
            "spec.running and spec.runStrategy are both set: KubeVirt cannot read the VM's runStrategy and starts nothing".to_owned(),
        ),
        (_, Some("Always")) => (Restart, format!("{}: KubeVirt starts it again", run.shown())),
        (_, Some("RerunOnFailure")) => (
            MayStayOff,
            format!(
                "{}: it stays off after a clean guest shutdown (VMI Succeeded), and is started again only if the VMI fails (the guest outlasts its grace period or crashes)",
                run.shown()
            ),
        ),
        (_, Some("Manual")) => (
            StaysOff,
            format!("{}: it stays off until someone starts it (virtctl start)", run.shown()),
        ),
        (_, Some("Once")) => (
            StaysOff,
            format!("{}: it has run once, it stays off", run.shown()),
        ),
        (_, Some("Halted")) => (StaysOff, format!("{}: it stays off", run.shown())),
        _ => (
            StaysOff,
            format!(
                "{}: KubeVirt does not start an evicted VMI of this runStrategy again",
                run.shown()
            ),
        ),
    }
}

/// What follows the eviction of a VM from `node` (R1-R10): [`by_run_strategy`], then a VM that
/// would start again but whose disk only `node` can mount (`bound`, from [`node_bound`]) is
/// `DownUntilNodeReturns`.
pub fn after_eviction(run: &RunStrategy, bound: Option<&str>) -> DrainDecision {
    let (outcome, mut reason) = by_run_strategy(run);
    let outcome = match (outcome, bound) {
        (DrainOutcome::Restart | DrainOutcome::MayStayOff, Some(bound)) => {
            reason.push_str(&format!(
                "; but {bound}: it cannot start elsewhere, it stays down until the node is back"
            ));
            DrainOutcome::DownUntilNodeReturns
        }
        (outcome, Some(bound)) => {
            reason.push_str(&format!("; {bound}"));
            outcome
        }
        (outcome, None) => outcome,
    };
    DrainDecision { outcome, reason }
}

/// The claims, PersistentVolumes and Nodes that [`node_bound`] reads, by name.
#[derive(Debug, Default)]
pub struct Disks<'a> {
    /// Claims by namespace and name: their `spec.volumeName`.
    claims: HashMap<(&'a str, &'a str), &'a str>,
    /// PersistentVolumes by name: their `spec.nodeAffinity.required`.
    volumes: HashMap<&'a str, &'a Value>,
    /// Every Node known; empty: not known (a volume then counts as bound to a node when its
    /// affinity selects that node by name or `kubernetes.io/hostname`).
    nodes: &'a [Value],
}

impl<'a> Disks<'a> {
    pub fn new(claims: &'a [Value], volumes: &'a [Value], nodes: &'a [Value]) -> Disks<'a> {
        let claims = claims
            .iter()
            .filter_map(|c| Some(((c.namespace(), c.name()), c.text_at("/spec/volumeName")?)))
            .collect();
        let volumes = volumes
            .iter()
            .filter_map(|pv| Some((pv.name(), pv.pointer("/spec/nodeAffinity/required")?)))
            .collect();
        Disks {
            claims,
            volumes,
            nodes,
        }
    }
}

/// R10: the first claim of the running `vmi` (`spec.volumes[].persistentVolumeClaim.claimName`
/// or `dataVolume.name`) bound (`spec.volumeName`) to a PersistentVolume whose required node
/// affinity selects `node` and no other known node; in words (`claim C is bound to
/// PersistentVolume P, which only node N can mount`).
pub fn node_bound(vmi: &Value, node: &str, disks: &Disks) -> Option<String> {
    let namespace = vmi.namespace();
    let volumes = vmi.pointer("/spec/volumes").and_then(Value::as_array);
    volumes.into_iter().flatten().find_map(|volume| {
        let claim = volume
            .text_at("/persistentVolumeClaim/claimName")
            .or_else(|| volume.text_at("/dataVolume/name"))?;
        let bound = *disks.claims.get(&(namespace, claim))?;
        let required = disks.volumes.get(bound)?;
        only_node(required, node, disks.nodes).then(|| {
            format!(
                "claim {claim} is bound to PersistentVolume {bound}, which only node {node} can mount"
            )
        })
    })
}

/// Whether `required` selects `node` and no other node of `nodes` (an affinity that cannot be
/// parsed selects none).
fn only_node(required: &Value, node: &str, nodes: &[Value]) -> bool {
    let matches = |n: &Value| node_affinity_matches(required, n).unwrap_or(false);
    let this = nodes.iter().find(|n| n.name() == node);
    let assumed =
        serde_json::json!({"metadata": {"name": node, "labels": {"kubernetes.io/hostname": node}}});
    matches(this.unwrap_or(&assumed)) && !nodes.iter().any(|n| n.name() != node && matches(n))
}
