//! One VM of the drain preview judged: a running VM by its VMI as KubeVirt does, a stopped one by
//! the policy's reading of its object; beside it the policy's verdict and, for a running VM, what
//! its objects carry against it.

use cluster_model::drain::drain_outcome;
use cluster_model::object::ObjectExt;
use cluster_model::restart::{Disks, RunStrategy, after_eviction, node_bound};
use policy_host::Session;
use serde_json::Value;
use vm_maintenance_strategy::eviction::Assessment;
use vm_maintenance_strategy::settings::Settings;
use vm_maintenance_strategy::strategy::EvictionStrategy;

use super::verdict::verdict;
use crate::drain::rows::{Prediction, Row};
use crate::input::cluster::{DumpCluster, assess};
use crate::running::label_sync::LabelSync;
use crate::running::staleness::{self, Labels};
use crate::running::{HARVESTER_READS, Running, Vmi};

/// A VM as raw JSON (the type the policy crate reads).
type Object = serde_json::Map<String, Value>;

/// What the assessment reads: the settings as the policy reads them, the dump as the cluster;
/// and what runs.
pub(super) struct View<'a> {
    /// What the KubeVirt CR does with Harvester's label (K4).
    pub(super) sync: &'a LabelSync,
    pub(super) policy: &'a Settings,
    pub(super) dump: &'a DumpCluster<'a>,
    pub(super) running: Running<'a>,
    /// Claims, PersistentVolumes and Nodes: a disk only the drained node can mount (R10).
    pub(super) disks: Disks<'a>,
    /// The KubeVirt CR's `spec.configuration.evictionStrategy`.
    pub(super) cluster_strategy: Option<&'a str>,
    /// A controller evacuates VMIs with the `External` strategy.
    pub(super) external_controller: bool,
}

/// One VM: its drain outcome and the policy's verdict. Never fails: what cannot be judged is
/// said in the row.
pub(super) fn judge(vm: &Value, index: usize, session: &mut Session, view: &View) -> Row {
    let empty = Object::new();
    let object = vm.as_object().unwrap_or(&empty);
    let namespace = vm.namespace().to_owned();
    let name = vm.text_at("/metadata/name");
    let mut row = Row::new(
        namespace.clone(),
        name.map_or_else(|| format!("(unnamed VM #{})", index + 1), str::to_owned),
    );
    let label = |labels: Option<&Value>| labels.and_then(|l| l.get(HARVESTER_READS)).cloned();
    row.label = label(vm.pointer("/metadata/labels"));
    let template_labels = object
        .get("spec")
        .and_then(|s| s.pointer("/template/metadata/labels"));
    row.template_label = label(template_labels);
    row.verdict = Some(verdict(vm, &namespace, name, session));

    if name.is_none() {
        row.error = Some("metadata.name: missing".to_owned());
        return row;
    }
    let template_labels = match template_labels {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(map)) => map,
        Some(_) => {
            row.error = Some(
                "spec.template.metadata.labels: not a map, the labels of its Pod are unknown"
                    .to_owned(),
            );
            return row;
        }
    };
    let mut assessment = assess(vm, view.policy, view.dump);
    row.notes = std::mem::take(&mut assessment.warnings);
    let judged = Judged {
        assessment,
        template_labels,
        run_strategy: RunStrategy::of(Some(vm)),
    };
    match view.running.vmi(&namespace, name.unwrap_or_default()) {
        Some(vmi) => judge_vmi(vm, &mut row, &vmi, judged, view),
        None => judge_stopped(&mut row, judged, view.external_controller),
    }
    row
}

/// What is read of a VM's own object: the policy's assessment, its template's labels (what its
/// Pod would carry), its runStrategy.
struct Judged<'a> {
    assessment: Assessment,
    template_labels: &'a Object,
    run_strategy: RunStrategy,
}

/// A VM that does not run: the policy's reading of its object decides, as if it ran.
fn judge_stopped(row: &mut Row, judged: Judged, external_controller: bool) {
    let Judged {
        assessment,
        template_labels,
        run_strategy,
    } = judged;
    let strategy = assessment
        .eviction_strategy
        .unwrap_or(EvictionStrategy::None);
    let decision = drain_outcome(
        template_labels,
        &strategy,
        &assessment.reasons,
        external_controller,
        &after_eviction(&run_strategy, None),
    );
    row.run_strategy = Some(run_strategy);
    row.eviction_strategy = Some(strategy);
    row.eviction_strategy_source = Some(assessment.source.as_str());
    row.reasons = assessment.reasons.iter().map(ToString::to_string).collect();
    row.outcome = Some(decision.outcome);
    row.why = Some(decision.reason);
}

/// A running VM: KubeVirt judges its VMI (its own strategy, its `LiveMigratable` condition, its
/// Pod's labels); the policy's reading of the VM is shown beside it.
fn judge_vmi(vm: &Value, row: &mut Row, vmi: &Vmi, judged: Judged, view: &View) {
    let Judged {
        assessment,
        template_labels,
        run_strategy,
    } = judged;
    let (strategy, source) = vmi.eviction_strategy(view.cluster_strategy);
    let reasons = vmi.not_migratable();
    let labels = vmi.pod_labels.unwrap_or(template_labels);
    let bound = vmi
        .node
        .and_then(|node| node_bound(vmi.vmi, node, &view.disks));
    let evicted = after_eviction(&run_strategy, bound.as_deref());
    let decision = drain_outcome(
        labels,
        &strategy,
        &reasons,
        view.external_controller,
        &evicted,
    );
    row.run_strategy = Some(run_strategy);
    row.running = true;
    row.node = vmi.node.map(str::to_owned);
    row.eviction_strategy = Some(strategy);
    row.eviction_strategy_source = Some(source);
    row.reasons = reasons;
    row.outcome = Some(decision.outcome);
    row.why = Some(decision.reason);
    let labels = Labels {
        key: HARVESTER_READS,
        sync: view.sync,
    };
    row.staleness = Some(staleness::of(
        Some(vm),
        vmi,
        view.cluster_strategy,
        Some(&labels),
    ));
    row.prediction = Some(Prediction {
        eviction_strategy: assessment.eviction_strategy,
        eviction_strategy_source: assessment.source.as_str(),
        reasons: assessment.reasons,
    });
}
