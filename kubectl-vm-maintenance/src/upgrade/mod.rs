//! The KubeVirt upgrade preview: what the workload updater will do with every running VMI of the
//! input (`cluster_model::upgrade`), as a table or the data.

use cluster_model::upgrade::{
    Completion, UpdateOutcome, Updater, UpgradePreview, decide_all, summarize,
};

use crate::context::{Context, Exit, Report};
use crate::input::Store;
use crate::input::store::SLICE;
use crate::output::columns::{Columns, Layout};
use crate::running::staleness::{self, Found, Staleness};

/// `upgrade`: no arguments of its own.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// The preview's text and exit code (0 completes, 2 never completes, 3 completes but some VMI
/// evicted may stay off); `Err` for bad input and for an input without a running VMI (exit 1).
pub fn run(context: &Context, _args: &Args) -> Result<Report, String> {
    let layout = &context.layout;
    let store = Store::read(context.sources(None)?)?;
    for note in &store.notes {
        context.note(note);
    }
    let cr = store.kubevirts().first();
    let updater = Updater::of(cr).map_err(|e| format!("KubeVirt CR: {e}"))?;
    let mut updates = Vec::new();
    // The workload updater reads no label: only the VMI's eviction strategy can be stale here.
    let mut stale = Found::default();
    let keys = store.vmi_keys();
    for slice in store.slices(&keys, SLICE) {
        let slice = slice?;
        let decided = decide_all(&slice.vmis, &slice.vms, &updater);
        let index = staleness::Index::new(&slice.vms, &slice, cr, None);
        stale.add(&index);
        updates.extend(decided);
    }
    let preview = summarize(updates, &updater, context.external_controller);
    if preview.vmis.is_empty() {
        return Err(match store.vmi_count() {
            0 => "no VirtualMachineInstance in the input: nothing runs, nothing to update (a dump needs `kubectl get vmi -A -o json`)".to_owned(),
            n => format!("no running VirtualMachineInstance in the input ({n} read, none of phase Running): nothing to update"),
        });
    }
    let some_stay_off = preview.vmis.iter().any(|v| stays_off(v.outcome));
    let exit = match preview.outcome {
        Completion::Completes if some_stay_off => Exit::MayStayDown,
        Completion::Completes => Exit::Clear,
        Completion::NeverCompletes => Exit::Blocked,
    };
    let text = if layout.table() {
        table(&preview, &stale, cr.is_none(), layout)
    } else {
        let mut data = serde_yaml::to_value(&preview).map_err(|e| e.to_string())?;
        stale.annotate(&mut data, "vmis")?;
        layout.data(&data).unwrap_or_else(|| Ok(String::new()))?
    };
    Ok(Report::new(text, exit))
}

/// A line per running VMI, with whether its eviction strategy is stale (`-o wide`: with its
/// VM's runStrategy, the strategy it runs under after a restart, and its own strategy against
/// the current one), then the counts, why, whether the update completes, and what is stale.
fn table(preview: &UpgradePreview, stale: &Found, no_cr: bool, layout: &Layout) -> String {
    let mut text = vmi_rows(preview, stale, layout).render(layout.headers);
    if !layout.headers {
        return text;
    }
    text.push('\n');
    totals(preview, no_cr, layout, &mut text);
    text.push('\n');
    layout.section("Why", &why(preview), &mut text);
    let off: Vec<String> = preview
        .vmis
        .iter()
        .filter(|v| stays_off(v.outcome))
        .map(|v| format!("{}/{}: {:?}", v.namespace, v.name, v.outcome))
        .collect();
    layout.next_section("May stay off after its eviction", &off, &mut text);
    let stale = stale.lines(
        preview
            .vmis
            .iter()
            .map(|v| (v.namespace.as_str(), v.name.as_str())),
    );
    layout.next_section("Stale (running objects behind their VM)", &stale, &mut text);
    text
}

/// Evicted and possibly not started again.
fn stays_off(outcome: UpdateOutcome) -> bool {
    matches!(outcome, UpdateOutcome::MayStayOff | UpdateOutcome::StaysOff)
}

/// A line per running VMI.
fn vmi_rows(preview: &UpgradePreview, stale: &Found, layout: &Layout) -> Columns {
    let mut header = vec!["NAMESPACE", "NAME", "NODE", "EVICTION", "UPDATE", "STALE"];
    if layout.wide() {
        header.extend(["RUNSTRATEGY", "AFTER RESTART", "VMI EVICTION"]);
    }
    let mut table = Columns::new(header);
    for vmi in &preview.vmis {
        let mut cells = vec![
            vmi.namespace.clone(),
            vmi.name.clone(),
            vmi.node.clone().unwrap_or_default(),
            vmi.eviction_strategy
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            format!("{:?}", vmi.outcome),
        ];
        let staleness = stale.of(&vmi.namespace, &vmi.name);
        cells.push(staleness.map(Staleness::cell).unwrap_or_default());
        if layout.wide() {
            cells.push(
                vmi.run_strategy
                    .as_ref()
                    .and_then(|r| r.value.clone())
                    .unwrap_or_default(),
            );
            cells.push(
                vmi.after_restart
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default(),
            );
            cells.push(staleness.map(Staleness::eviction_cell).unwrap_or_default());
        }
        table.row(cells);
    }
    table
}

/// Whether a KubeVirt CR was read, the migrations and evictions, and whether the update
/// completes.
fn totals(preview: &UpgradePreview, no_cr: bool, layout: &Layout, text: &mut String) {
    if no_cr {
        layout.line(
            "Note: no KubeVirt CR in the input: KubeVirt's defaults (no update method).",
            text,
        );
    }
    let m = &preview.migrations;
    let e = &preview.evictions;
    layout.line(
        &format!(
            "Migrations: {} (at most {} at a time). Evictions: {} in {} batches of {} every {} s (at least {} s).",
            m.count,
            m.parallel,
            e.count,
            e.batches,
            e.batch_size,
            e.interval_seconds,
            e.minimum_seconds
        ),
        text,
    );
    layout.line(
        match preview.outcome {
            Completion::Completes => "Outcome: Completes: every VMI reaches a new launcher.",
            Completion::NeverCompletes => {
                "Outcome: NeverCompletes: outdatedVirtualMachineInstanceWorkloads never reaches 0."
            }
        },
        text,
    );
}

/// Why each VMI gets its outcome, and what it runs under after a restart.
fn why(preview: &UpgradePreview) -> Vec<String> {
    preview
        .vmis
        .iter()
        .map(|vmi| {
            let mut why = format!("{}/{}: {}", vmi.namespace, vmi.name, vmi.reasons.join("; "));
            if let (UpdateOutcome::Restart | UpdateOutcome::MayStayOff, Some(after)) =
                (vmi.outcome, &vmi.after_restart)
            {
                why.push_str(&format!("; runs under {after} after the restart"));
            }
            why
        })
        .collect()
}
