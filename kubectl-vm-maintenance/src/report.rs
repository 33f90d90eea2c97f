//! The rows, the table that fits a width, and the summary by outcome.

use cluster_model::drain::DrainOutcome;
use cluster_model::restart::RunStrategy;
use comfy_table::{ColumnConstraint, ContentArrangement, Table, Width, presets};
use serde::Serialize;
use serde_json::Value;

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

/// A label value as the table shows it: a string verbatim, another value as its JSON text, an
/// absent one as `<unset>`.
fn shown(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "<unset>".to_owned(),
    }
}

/// `Migrate` when the VM and its template agree, else `VALUE /\nVALUE`.
fn labels_cell(row: &Row) -> String {
    let (vm, template) = (row.label.as_ref(), row.template_label.as_ref());
    if vm == template {
        shown(vm)
    } else {
        format!("{} /\n{}", shown(vm), shown(template))
    }
}

fn verdict_cell(verdict: Option<&Verdict>) -> String {
    let Some(verdict) = verdict else {
        return String::new();
    };
    let mut cell = match verdict.kind {
        VerdictKind::Allowed => "allowed".to_owned(),
        VerdictKind::Mutated => {
            let ops = verdict
                .patch
                .as_ref()
                .and_then(Value::as_array)
                .map(|ops| {
                    ops.iter()
                        .map(|op| {
                            format!(
                                "{} {}",
                                op["op"].as_str().unwrap_or("?"),
                                op["path"].as_str().unwrap_or("?")
                            )
                        })
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .unwrap_or_default();
            format!("mutated:\n{ops}")
        }
        VerdictKind::Rejected => format!(
            "rejected: {}",
            verdict.message.as_deref().unwrap_or("(no message)")
        ),
        VerdictKind::Error => format!("error: {}", verdict.message.as_deref().unwrap_or("")),
    };
    match verdict.warnings.len() {
        0 => {}
        1 => cell.push_str("\n(1 warning)"),
        n => cell.push_str(&format!("\n({n} warnings)")),
    }
    cell
}

/// The table, then the summary by outcome ([`summary`]).
pub fn table(rows: &[Row], width: u16) -> String {
    let mut table = Table::new();
    table
        .load_preset(presets::ASCII_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width)
        .set_header([
            "VM",
            "label\n(VM / template)",
            "eviction strategy",
            "cannot live-migrate",
            "drain",
            "policy today",
        ]);
    // Enum values are never split when the width allows it: `LiveMigrateIfPossible` is 21
    // characters, `ShutDown` 8 (the widths count the padding). Narrower tables split them.
    if width >= 110 {
        let lower = |width: u16| ColumnConstraint::LowerBoundary(Width::Fixed(width));
        table.set_constraints([
            lower(21),
            lower(18),
            lower(23),
            lower(16),
            lower(10),
            lower(18),
        ]);
    }
    for row in rows {
        let strategy = match (&row.eviction_strategy, row.eviction_strategy_source) {
            (Some(strategy), Some(source)) => format!("{strategy}\n({source})"),
            _ => String::new(),
        };
        let reasons = if row.reasons.is_empty() {
            "-".to_owned()
        } else {
            row.reasons.join("\n")
        };
        let outcome = row
            .outcome
            .map_or_else(|| "not judged".to_owned(), |o| o.to_string());
        let vm = match &row.node {
            Some(node) => format!("{}/{}\non {node}", row.namespace, row.name),
            None => format!("{}/{}", row.namespace, row.name),
        };
        table.add_row([
            vm,
            labels_cell(row),
            strategy,
            reasons,
            outcome,
            verdict_cell(row.verdict.as_ref()),
        ]);
    }
    let mut text = if rows.is_empty() {
        "No VirtualMachine in the input.\n".to_owned()
    } else {
        format!("{table}\n")
    };
    text.push_str(&summary(rows));
    text
}

/// `12 VMs: 5 Migrate, 3 ShutDown, 2 Restart, 0 MayStayOff, 0 StaysOff, 0 DownUntilNodeReturns,
/// 2 Blocks`, then a line per VM that blocks, per VM that may stay off or down, the VMs that
/// could not be judged, the policy's warnings and what was not checked.
pub fn summary(rows: &[Row]) -> String {
    let count =
        |outcome: Option<DrainOutcome>| rows.iter().filter(|r| r.outcome == outcome).count();
    let mut parts: Vec<String> = DrainOutcome::ALL
        .iter()
        .map(|o| format!("{} {o}", count(Some(*o))))
        .collect();
    let unjudged = count(None);
    if unjudged > 0 {
        parts.push(format!("{unjudged} not judged"));
    }
    let vms = if rows.len() == 1 { "VM" } else { "VMs" };
    let mut text = format!("\nSummary: {} {vms}: {}\n", rows.len(), parts.join(", "));
    let section = |title: &str, lines: Vec<String>, text: &mut String| {
        if !lines.is_empty() {
            text.push_str(&format!("\n{title}:\n"));
            for line in lines {
                text.push_str(&format!("  {line}\n"));
            }
        }
    };
    let of = |row: &Row, what: &str| format!("{}/{}: {what}", row.namespace, row.name);
    section(
        "Blocks a drain",
        rows.iter()
            .filter(|r| r.outcome == Some(DrainOutcome::Blocks))
            .map(|r| of(r, r.why.as_deref().unwrap_or_default()))
            .collect(),
        &mut text,
    );
    section(
        "May stay off or down after the drain",
        rows.iter()
            .filter(|r| r.may_stay_down())
            .map(|r| {
                let outcome = r.outcome.map(DrainOutcome::as_str).unwrap_or_default();
                of(
                    r,
                    &format!("{outcome}: {}", r.why.as_deref().unwrap_or_default()),
                )
            })
            .collect(),
        &mut text,
    );
    section(
        "Not judged (may block a drain)",
        rows.iter()
            .filter(|r| r.outcome.is_none())
            .map(|r| of(r, r.error.as_deref().unwrap_or_default()))
            .collect(),
        &mut text,
    );
    section(
        "Policy warnings",
        rows.iter()
            .flat_map(|r| {
                let warnings = r.verdict.as_ref().map(|v| v.warnings.as_slice());
                warnings.unwrap_or_default().iter().map(move |w| of(r, w))
            })
            .collect(),
        &mut text,
    );
    section(
        "Not checked",
        rows.iter()
            .flat_map(|r| r.notes.iter().map(move |n| of(r, n)))
            .collect(),
        &mut text,
    );
    text
}
