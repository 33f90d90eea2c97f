//! The plan as a table: a line per write, then the counts (and after `--apply` the results), what
//! failed, what is not changed, and what the KubeVirt CR does with the label.

use std::collections::BTreeMap;

use super::plan::{Kind, Mode, Outcome, Plan, Write};
use crate::output::columns::{Columns, Layout};

/// The results in the order the summary counts them.
const RESULTS: [&str; 6] = [
    "done",
    "already done",
    "conflict",
    "failed",
    "skipped",
    "not sent",
];

/// The plan as a table (`-o wide`: with each write's JSON patch or body), then the counts, what
/// failed, what is not changed, and what the KubeVirt CR does with the label.
pub fn table(plan: &Plan, layout: &Layout) -> String {
    let table = writes(plan, layout);
    if !layout.headers {
        return table.render(false);
    }
    let mut text = String::new();
    if plan.writes.is_empty() {
        text.push_str("Nothing to write.\n");
    } else {
        text.push_str(&table.render(true));
        text.push('\n');
    }
    layout.line(&summary(plan), &mut text);
    sections(plan, layout, &mut text);
    text
}

/// A line per write: the object, the change and (once sent) its result.
fn writes(plan: &Plan, layout: &Layout) -> Columns {
    let sent = plan.mode != Mode::Plan;
    let mut header = vec!["NAMESPACE", "KIND", "NAME", "CHANGE"];
    if sent {
        header.push("RESULT");
    }
    if layout.wide() {
        header.push("BODY");
    }
    let mut table = Columns::new(header);
    for write in &plan.writes {
        let mut cells = vec![
            write.namespace.clone(),
            write.kind.short().to_owned(),
            write.name.clone(),
            write.change.clone(),
        ];
        if sent {
            cells.push(result(write).to_owned());
        }
        if layout.wide() {
            cells.push(write.body.to_string());
        }
        table.row(cells);
    }
    table
}

/// A write's result in words, `not sent` before it is.
fn result(write: &Write) -> &'static str {
    write.result.map(Outcome::as_str).unwrap_or("not sent")
}

/// `5 writes: 1 VMs, 2 VMIs, 2 Pods patched; 1 VMs restarted in 1 batches of 5 every 60s`, then
/// that nothing was written, or the results.
fn summary(plan: &Plan) -> String {
    let count = |kind: Kind, restart: bool| {
        plan.writes
            .iter()
            .filter(|w| w.kind == kind && w.is_restart() == restart)
            .count()
    };
    let restarts = count(Kind::Vm, true);
    let mut summary = format!(
        "{} writes: {} VMs, {} VMIs, {} Pods patched",
        plan.writes.len(),
        count(Kind::Vm, false),
        count(Kind::Vmi, false),
        count(Kind::Pod, false),
    );
    if restarts > 0 {
        let b = &plan.restart_batches;
        summary.push_str(&format!(
            "; {restarts} VMs restarted in {} batches of {} every {}",
            b.count,
            b.size,
            shown_seconds(b.interval_seconds)
        ));
    }
    match plan.mode {
        Mode::Plan if !plan.writes.is_empty() => {
            summary.push_str(". Nothing was written: --apply writes them.");
        }
        Mode::Plan => summary.push('.'),
        Mode::Apply | Mode::DryRun => summary.push_str(&results(plan)),
    }
    summary
}

/// `: 3 done, 1 conflict.`, and that a server-side dry run changed nothing.
fn results(plan: &Plan) -> String {
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for write in &plan.writes {
        *by.entry(result(write)).or_default() += 1;
    }
    let counts: Vec<String> = RESULTS
        .iter()
        .filter_map(|o| by.get(o).map(|n| format!("{n} {o}")))
        .collect();
    let how = if plan.mode == Mode::DryRun {
        " (server-side dry run: nothing changed)"
    } else {
        ""
    };
    if !counts.is_empty() {
        format!(": {}{how}.", counts.join(", "))
    } else {
        format!("{how}.")
    }
}

/// The writes that did not succeed, what is not changed, and what the KubeVirt CR does with the
/// label.
fn sections(plan: &Plan, layout: &Layout, text: &mut String) {
    let with = |outcome: Outcome| {
        plan.writes
            .iter()
            .filter(|w| w.result == Some(outcome))
            .map(|w| {
                format!(
                    "{}: {}",
                    w.described(),
                    w.message.as_deref().unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
    };
    layout.next_section(
        "Conflicts (changed since read, not overwritten)",
        &with(Outcome::Conflict),
        text,
    );
    layout.next_section("Failed", &with(Outcome::Failed), text);
    layout.next_section("Skipped", &with(Outcome::Skipped), text);
    let not_changed: Vec<String> = plan
        .not_changed
        .iter()
        .map(|f| {
            format!(
                "{}/{} ({}): {}",
                f.namespace,
                f.name,
                f.kind.as_str(),
                f.message
            )
        })
        .collect();
    layout.next_section("Not changed", &not_changed, text);
    layout.next_section(
        "KubeVirt label sync",
        std::slice::from_ref(&plan.label_sync.message),
        text,
    );
}

/// `60s`, `1.5s`.
fn shown_seconds(seconds: f64) -> String {
    format!("{seconds}s")
}
