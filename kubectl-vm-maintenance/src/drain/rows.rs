//! The rows of the drain preview: what is found of each VM (its drain outcome, the policy's
//! verdict, what its running objects carry), as `-o json` prints them.

use cluster_model::drain::DrainOutcome;
use cluster_model::restart::RunStrategy;
use serde::Serialize;
use serde_json::Value;

use crate::running::staleness::Staleness;

use vm_maintenance_strategy::reason::Reason;
use vm_maintenance_strategy::strategy::EvictionStrategy;

/// One VM. Serialized as one element of `--output json`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    pub namespace: String,
    pub name: String,
    /// The VM's `metadata.labels[harvesterhci.io/maintain-mode-strategy]` (`null`: unset).
    pub label: Option<Value>,
    /// The same label in `spec.template.metadata.labels`: what the VMI and its Pod carry.
    pub template_label: Option<Value>,
    /// Whether a VMI of the VM runs (then the VMI is judged, as KubeVirt does).
    pub running: bool,
    /// The node the VMI runs on.
    pub node: Option<String>,
    pub eviction_strategy: Option<EvictionStrategy>,
    /// `vmi`, `vm`, `settings`, `cluster` or `default`.
    pub eviction_strategy_source: Option<&'static str>,
    /// Why the VM cannot live-migrate (empty: it can): the VMI's condition for a running VM,
    /// the policy's reasons otherwise.
    pub reasons: Vec<String>,
    /// The VM's runStrategy and the field it was read from: what follows an eviction without
    /// migration (`null` when the VM could not be judged).
    pub run_strategy: Option<RunStrategy>,
    /// `null` when the VM could not be judged (see `error`).
    pub outcome: Option<DrainOutcome>,
    /// The outcome in words.
    pub why: Option<String>,
    /// For a running VM: what the policy predicts from the VM object, beside what the VMI says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prediction: Option<Prediction>,
    /// For a running VM: its VMI's and launcher Pod's label and the VMI's eviction strategy
    /// against what the VM says now (`null`: it does not run).
    pub staleness: Option<Staleness>,
    /// What the policy answers to a CREATE of this VM today.
    pub verdict: Option<Verdict>,
    /// What could not be checked.
    pub notes: Vec<String>,
    /// Why the VM could not be judged.
    pub error: Option<String>,
}

/// The policy's reading of a running VM's object: the strategy and reasons a VMI built now would
/// have.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Prediction {
    pub eviction_strategy: Option<EvictionStrategy>,
    pub eviction_strategy_source: &'static str,
    pub reasons: Vec<Reason>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    #[serde(rename = "result")]
    pub kind: VerdictKind,
    /// The rejection message (or the host's error).
    pub message: Option<String>,
    pub code: Option<u16>,
    pub warnings: Vec<String>,
    /// The RFC 6902 patch of a mutation.
    pub patch: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum VerdictKind {
    Allowed,
    Mutated,
    Rejected,
    /// The module or the host failed; no answer.
    Error,
}

impl Verdict {
    pub fn error(message: String) -> Verdict {
        Verdict {
            kind: VerdictKind::Error,
            message: Some(message),
            code: None,
            warnings: Vec::new(),
            patch: None,
        }
    }
}

impl Row {
    pub fn new(namespace: String, name: String) -> Row {
        Row {
            namespace,
            name,
            label: None,
            template_label: None,
            running: false,
            node: None,
            eviction_strategy: None,
            eviction_strategy_source: None,
            reasons: Vec::new(),
            run_strategy: None,
            outcome: None,
            why: None,
            prediction: None,
            staleness: None,
            verdict: None,
            notes: Vec::new(),
            error: None,
        }
    }

    /// Blocks a drain, or might (not judged).
    pub fn may_block(&self) -> bool {
        matches!(self.outcome, None | Some(DrainOutcome::Blocks))
    }

    /// Evicted without migration and possibly not back after the drain.
    pub fn may_stay_down(&self) -> bool {
        self.outcome.is_some_and(DrainOutcome::may_stay_down)
    }
}
