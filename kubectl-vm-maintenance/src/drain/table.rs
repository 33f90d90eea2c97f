//! The drain preview as a table (as `kubectl get` prints one), and below it the summary by
//! outcome and the explanations.

use cluster_model::drain::DrainOutcome;
use serde_json::Value;

use super::rows::{Row, Verdict, VerdictKind};
use crate::output::columns::{Columns, Layout, NONE};
use crate::running::label_sync::LabelSync;
use crate::running::staleness::Staleness;

/// A label value as the table shows it: a string verbatim, another value as its JSON text, an
/// absent one as `<unset>`.
fn shown(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "<unset>".to_owned(),
    }
}

/// `Migrate` when the VM and its template agree, else `VM/TEMPLATE` (`Shutdown/<unset>`).
fn labels_cell(row: &Row) -> String {
    let (vm, template) = (row.label.as_ref(), row.template_label.as_ref());
    if vm == template {
        shown(vm)
    } else {
        format!("{}/{}", shown(vm), shown(template))
    }
}

/// The policy's answer in words: `allowed`, `would add label`, `would set evictionStrategy`,
/// `rejects: label: invalid maintenance mode strategy: migrate`, `error`.
pub fn policy_words(verdict: Option<&Verdict>) -> String {
    let Some(verdict) = verdict else {
        return NONE.to_owned();
    };
    match verdict.kind {
        VerdictKind::Allowed => "allowed".to_owned(),
        VerdictKind::Mutated => mutation_words(verdict.patch.as_ref()),
        VerdictKind::Rejected => format!(
            "rejects: {}",
            short_reason(verdict.message.as_deref().unwrap_or("(no message)"))
        ),
        VerdictKind::Error => "error".to_owned(),
    }
}

/// What a patch does, in words: `would add label` (the VM's label, and its template's with it),
/// `would copy label to template`, `would set evictionStrategy`, joined by commas.
fn mutation_words(patch: Option<&Value>) -> String {
    let paths: Vec<&str> = patch
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|op| op["path"].as_str())
        .collect();
    let touches = |prefix: &str| {
        paths
            .iter()
            .any(|p| *p == prefix || p.starts_with(&format!("{prefix}/")))
    };
    let mut words = Vec::new();
    if touches("/metadata") {
        words.push("add label".to_owned());
    } else if touches("/spec/template/metadata") {
        words.push("copy label to template".to_owned());
    }
    if touches("/spec/template/spec") {
        words.push("set evictionStrategy".to_owned());
    }
    for path in &paths {
        let known = [
            "/metadata",
            "/spec/template/metadata",
            "/spec/template/spec",
        ]
        .iter()
        .any(|prefix| *path == *prefix || path.starts_with(&format!("{prefix}/")));
        if !known {
            words.push(format!("change {path}"));
        }
    }
    if words.is_empty() {
        "would change the VM".to_owned()
    } else {
        format!("would {}", words.join(", "))
    }
}

/// A rejection in a few words: the field it names (`label`, `template label`, else the last
/// part of its path) and the message up to its first parenthesis or semicolon.
/// `spec.template.spec.evictionStrategy: unsupported value "External" (valid: ...)` is
/// `evictionStrategy: unsupported value "External"`.
pub fn short_reason(message: &str) -> String {
    let Some((path, reason)) = message.split_once(": ") else {
        return message.to_owned();
    };
    let reason = reason
        .split(" (")
        .next()
        .and_then(|r| r.split("; ").next())
        .unwrap_or(reason);
    let field = if path.starts_with("spec.template.metadata.labels[") {
        "template label".to_owned()
    } else if path.starts_with("metadata.labels[") {
        "label".to_owned()
    } else {
        let bare = path.split('[').next().unwrap_or(path);
        let last = bare.rsplit('.').next().unwrap_or(bare);
        format!("{last}{}", &path[bare.len()..])
    };
    format!("{field}: {reason}")
}

/// The table (`-o wide`: with the strategy's source, the runStrategy, the label on the VM, VMI
/// and Pod, the VMI's strategy, and the reasons), then the summary and the explanations
/// ([`summary`]); `--no-headers`: the rows alone. `sync`: what the KubeVirt CR does with the
/// label.
pub fn table(rows: &[Row], sync: &LabelSync, layout: &Layout) -> String {
    let mut header = vec!["NAMESPACE", "NAME", "NODE", "LABEL", "EVICTION"];
    if layout.wide() {
        header.extend(["SOURCE", "RUNSTRATEGY"]);
    }
    header.extend(["DRAIN", "STALE", "POLICY"]);
    if layout.wide() {
        header.extend(["LABEL VM/VMI/POD", "VMI EVICTION", "REASONS"]);
    }
    let mut table = Columns::new(header);
    for row in rows {
        let mut cells = vec![
            row.namespace.clone(),
            row.name.clone(),
            row.node.clone().unwrap_or_default(),
            labels_cell(row),
            row.eviction_strategy
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
        ];
        if layout.wide() {
            cells.push(row.eviction_strategy_source.unwrap_or_default().to_owned());
            cells.push(
                row.run_strategy
                    .as_ref()
                    .and_then(|r| r.value.clone())
                    .unwrap_or_default(),
            );
        }
        cells.push(
            row.outcome
                .map_or_else(|| "<unknown>".to_owned(), |o| o.to_string()),
        );
        cells.push(
            row.staleness
                .as_ref()
                .map(Staleness::cell)
                .unwrap_or_default(),
        );
        cells.push(policy_words(row.verdict.as_ref()));
        if layout.wide() {
            let staleness = row.staleness.as_ref();
            cells.push(staleness.map(Staleness::labels_cell).unwrap_or_default());
            cells.push(staleness.map(Staleness::eviction_cell).unwrap_or_default());
            cells.push(row.reasons.join("; "));
        }
        table.row(cells);
    }
    let mut text = table.render(layout.headers);
    if layout.headers {
        text.push_str(&summary(rows, sync, layout));
    }
    text
}

/// `Summary: 12 VMs: 5 Migrate, 3 ShutDown, 2 Restart, 0 MayStayOff, 0 StaysOff,
/// 0 DownUntilNodeReturns, 2 Blocks`, then a line per VM that blocks, per VM that may stay off
/// or down, per stale running VM and what the KubeVirt CR does with the label (when a VM runs),
/// the VMs that could not be judged, the policy's rejections, warnings and errors, and what was
/// not checked.
pub fn summary(rows: &[Row], sync: &LabelSync, layout: &Layout) -> String {
    let mut text = "\n".to_owned();
    layout.line(&counts(rows), &mut text);
    let mut sections = vec![
        ("Blocks a drain", blocking(rows)),
        ("May stay off or down after the drain", staying_down(rows)),
        ("Stale (running objects behind their VM)", stale(rows, sync)),
    ];
    if rows.iter().any(|r| r.running) {
        sections.push(("KubeVirt label sync", vec![sync.message.clone()]));
    }
    sections.extend([
        ("Not judged (may block a drain)", not_judged(rows)),
        ("Policy rejects", verdicts(rows, VerdictKind::Rejected)),
        ("Policy errors", verdicts(rows, VerdictKind::Error)),
        ("Policy warnings", warnings(rows)),
        ("Not checked", not_checked(rows)),
    ]);
    for (title, lines) in sections {
        layout.next_section(title, &lines, &mut text);
    }
    text
}

/// `Summary: 12 VMs: 5 Migrate, ..., 2 Blocks`, and how many were not judged.
fn counts(rows: &[Row]) -> String {
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
    format!("Summary: {} {vms}: {}", rows.len(), parts.join(", "))
}

/// `namespace/name: what`.
fn of(row: &Row, what: &str) -> String {
    format!("{}/{}: {what}", row.namespace, row.name)
}

fn blocking(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .filter(|r| r.outcome == Some(DrainOutcome::Blocks))
        .map(|r| of(r, r.why.as_deref().unwrap_or_default()))
        .collect()
}

fn staying_down(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .filter(|r| r.may_stay_down())
        .map(|r| {
            let outcome = r.outcome.map(DrainOutcome::as_str).unwrap_or_default();
            of(
                r,
                &format!("{outcome}: {}", r.why.as_deref().unwrap_or_default()),
            )
        })
        .collect()
}

fn stale(rows: &[Row], sync: &LabelSync) -> Vec<String> {
    rows.iter()
        .filter_map(|r| Some((r, r.staleness.as_ref()?)))
        .flat_map(|(r, s)| s.words(&sync.key).into_iter().map(move |w| of(r, &w)))
        .collect()
}

fn not_judged(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .filter(|r| r.outcome.is_none())
        .map(|r| of(r, r.error.as_deref().unwrap_or_default()))
        .collect()
}

/// The policy's verdicts of one kind, with their messages.
fn verdicts(rows: &[Row], kind: VerdictKind) -> Vec<String> {
    rows.iter()
        .filter_map(|r| {
            let verdict = r.verdict.as_ref().filter(|v| v.kind == kind)?;
            Some(of(r, verdict.message.as_deref().unwrap_or("(no message)")))
        })
        .collect()
}

fn warnings(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .flat_map(|r| {
            let warnings = r.verdict.as_ref().map(|v| v.warnings.as_slice());
            warnings.unwrap_or_default().iter().map(move |w| of(r, w))
        })
        .collect()
}

fn not_checked(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .flat_map(|r| r.notes.iter().map(move |n| of(r, n)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_policy_in_words() {
        let cases = [
            (
                "metadata.labels[harvesterhci.io/maintain-mode-strategy]: invalid maintenance mode strategy: migrate (valid: Migrate, Shutdown)",
                "label: invalid maintenance mode strategy: migrate",
            ),
            (
                "spec.template.spec.evictionStrategy: unsupported value \"External\" (valid: LiveMigrate, None)",
                "evictionStrategy: unsupported value \"External\"",
            ),
            (
                "spec.template.spec.evictionStrategy: VM cannot live-migrate (HostDeviceNotLiveMigratable: GPU gpu1) and would block node drains with LiveMigrate; use LiveMigrateIfPossible or None",
                "evictionStrategy: VM cannot live-migrate",
            ),
            (
                "spec.template.metadata.labels[harvesterhci.io/maintain-mode-strategy]: must equal metadata.labels[harvesterhci.io/maintain-mode-strategy] (Shutdown != Migrate)",
                "template label: must equal metadata.labels[harvesterhci.io/maintain-mode-strategy]",
            ),
            ("object: missing", "object: missing"),
            ("no field at all", "no field at all"),
        ];
        for (message, want) in cases {
            assert_eq!(short_reason(message), want, "{message}");
        }
        let patch = |paths: &[&str]| {
            json!(
                paths
                    .iter()
                    .map(|p| json!({"op": "add", "path": p, "value": {}}))
                    .collect::<Vec<_>>()
            )
        };
        let cases = [
            (
                vec!["/metadata/labels", "/spec/template/metadata"],
                "would add label",
            ),
            (
                vec!["/spec/template/metadata/labels/harvesterhci.io~1maintain-mode-strategy"],
                "would copy label to template",
            ),
            (
                vec![
                    "/metadata/labels/harvesterhci.io~1maintain-mode-strategy",
                    "/spec/template/spec/evictionStrategy",
                ],
                "would add label, set evictionStrategy",
            ),
            (
                vec!["/spec/template/spec/evictionStrategy"],
                "would set evictionStrategy",
            ),
            (vec!["/status"], "would change /status"),
        ];
        for (paths, want) in cases {
            assert_eq!(mutation_words(Some(&patch(&paths))), want, "{paths:?}");
        }
    }
}
