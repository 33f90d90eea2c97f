//! `status --upgrade`: every running VMI KubeVirt's workload updater still has to handle
//! (cluster-model's `status::upgrade_status`), 500 VMIs at a time; a table (NAMESPACE, NAME,
//! NODE, CAUSE, WHY; `-o wide` adds the evidence and what to do) or `{"vmis": [...]}`.

use cluster_model::status::{Objects, UpgradeStatus, upgrade_status};
use cluster_model::upgrade::Updater;

use super::table::with_fate;
use super::{now, sources};
use crate::context::{Context, Exit, Report};
use crate::input::Store;
use crate::input::store::SLICE;
use crate::output::columns::{Columns, Layout};

/// What the updater's work reads: the CR, VMs, VMIs, their launcher Pods and migrations.
const KINDS: [&str; 5] = [
    "kubevirts",
    "virtualmachines",
    "virtualmachineinstances",
    "pods",
    "virtualmachineinstancemigrations",
];

/// Exit 0 nothing left to update, 2 a VMI the update never reaches, 3 VMIs still waiting.
pub(super) fn run(context: &Context) -> Result<Report, String> {
    let store = Store::read(sources(context, None, &KINDS, false)?)?;
    for note in &store.notes {
        context.note(note);
    }
    let cr = store.kubevirts().first();
    let updater = Updater::of(cr).map_err(|e| format!("KubeVirt CR: {e}"))?;
    let now = now();
    let mut all: Option<UpgradeStatus> = None;
    // Every migration at once: the cluster's limit counts them all.
    let migrations = store.migrations()?;
    let keys = store.vmi_keys();
    for slice in store.slices(&keys, SLICE) {
        let slice = slice?;
        let objects = Objects {
            vms: &slice.vms,
            vmis: &slice.vmis,
            pods: &slice.pods,
            migrations: &migrations,
            pdbs: &[],
            replicas: &[],
            kubevirt: cr,
            now,
        };
        let part = upgrade_status(&objects, &updater);
        match &mut all {
            Some(all) => all.vmis.extend(part.vmis),
            None => all = Some(part),
        }
    }
    let mut status = all.unwrap_or_else(|| upgrade_status(&empty(cr, now), &updater));
    status
        .vmis
        .sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    let exit = if status.holds_for_good() {
        Exit::Blocked
    } else if status.vmis.is_empty() {
        Exit::Clear
    } else {
        Exit::MayStayDown
    };
    let text = match context.layout.data(&status) {
        Some(text) => text?,
        None => table(&status, &context.layout),
    };
    Ok(Report::new(text, exit))
}

fn empty(cr: Option<&serde_json::Value>, now: i64) -> Objects<'_> {
    Objects {
        vms: &[],
        vmis: &[],
        pods: &[],
        migrations: &[],
        pdbs: &[],
        replicas: &[],
        kubevirt: cr,
        now,
    }
}

fn table(status: &UpgradeStatus, layout: &Layout) -> String {
    let mut header = vec!["NAMESPACE", "NAME", "NODE", "CAUSE", "WHY"];
    if layout.wide() {
        header.extend(["EVIDENCE", "ACTION"]);
    }
    let mut rows = Columns::new(header);
    for vmi in &status.vmis {
        let mut cells = vec![
            vmi.namespace.clone(),
            vmi.name.clone(),
            vmi.node.clone().unwrap_or_default(),
            with_fate(vmi.cause, vmi.fate),
            vmi.why.clone(),
        ];
        if layout.wide() {
            cells.extend([vmi.evidence.join("; "), vmi.action.clone()]);
        }
        rows.row(cells);
    }
    let mut text = String::new();
    if rows.is_empty() {
        layout.line(
            "no running VMI is outdated: the workload updater has nothing left to do",
            &mut text,
        );
    } else {
        text = rows.render(layout.headers);
    }
    if layout.headers && !status.updater_active {
        layout.line(
            "the KubeVirt CR is not Deployed at its target deployment: the workload updater waits",
            &mut text,
        );
    }
    text
}
