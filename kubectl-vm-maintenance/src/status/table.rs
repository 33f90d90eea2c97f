//! `status` as a table: a line per VM still on the node (NAMESPACE, NAME, CAUSE, FOR, WHY; `-o
//! wide` adds the evidence and what to do), then the node's findings; without a node, a line
//! per node being drained.

use cluster_model::drain::DrainOutcome;
use cluster_model::status::Diagnosis;

use crate::output::columns::{Columns, Layout};

/// One node: its VMs, then its findings and what to do.
pub(super) fn table(diagnosis: &Diagnosis, layout: &Layout) -> String {
    let mut header = vec!["NAMESPACE", "NAME", "CAUSE", "FOR", "WHY"];
    if layout.wide() {
        header.extend(["EVIDENCE", "ACTION"]);
    }
    let mut rows = Columns::new(header);
    for vm in &diagnosis.vms {
        let mut cells = vec![
            vm.namespace.clone(),
            vm.name.clone(),
            with_fate(vm.cause, vm.fate),
            vm.seconds.map(lasted).unwrap_or_default(),
            vm.why.clone(),
        ];
        if layout.wide() {
            cells.extend([vm.evidence.join("; "), vm.action.clone()]);
        }
        rows.row(cells);
    }
    let mut text = if rows.is_empty() {
        String::new()
    } else {
        rows.render(layout.headers)
    };
    if !layout.headers {
        return text;
    }
    if diagnosis.vms.is_empty() {
        layout.line(
            &format!("no VM runs on node {} any more", diagnosis.node),
            &mut text,
        );
    }
    let findings: Vec<String> = diagnosis
        .node_findings
        .iter()
        .map(|f| format!("{:?} {}: {}", f.cause, f.object, f.why))
        .collect();
    text.push('\n');
    layout.section("Node", &findings, &mut text);
    let actions: Vec<String> = diagnosis
        .vms
        .iter()
        .map(|vm| format!("{}/{}: {}", vm.namespace, vm.name, vm.action))
        .chain(
            diagnosis
                .node_findings
                .iter()
                .map(|f| format!("{}: {}", f.object, f.action)),
        )
        .collect();
    layout.next_section("What to do", &actions, &mut text);
    text
}

/// Every node being drained: a line each with what holds it.
pub(super) fn nodes(diagnoses: &[Diagnosis], layout: &Layout) -> String {
    let mut rows = Columns::new(vec!["NODE", "VMS", "HELD FOR GOOD", "FINDINGS"]);
    for diagnosis in diagnoses {
        let held = diagnosis
            .vms
            .iter()
            .filter(|vm| vm.cause.holds_for_good())
            .count();
        rows.row(vec![
            diagnosis.node.clone(),
            diagnosis.vms.len().to_string(),
            held.to_string(),
            diagnosis.node_findings.len().to_string(),
        ]);
    }
    if rows.is_empty() {
        let mut text = String::new();
        layout.line(
            "no node is being drained (none cordoned, none in Harvester's maintenance)",
            &mut text,
        );
        return text;
    }
    rows.render(layout.headers)
}

/// A cause with the runStrategy's fate: `Evicting/Restart`, `WillBeEvicted/MayStayOff`.
pub(super) fn with_fate(cause: impl std::fmt::Debug, fate: Option<DrainOutcome>) -> String {
    match fate {
        Some(fate) => format!("{cause:?}/{fate}"),
        None => format!("{cause:?}"),
    }
}

/// `45s`, `12m`, `3h5m`, `2d3h`, as kubectl's AGE column.
fn lasted(seconds: i64) -> String {
    let s = seconds.max(0);
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86400 => format!("{}h{}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d{}h", s / 86400, s % 86400 / 3600),
    }
}
