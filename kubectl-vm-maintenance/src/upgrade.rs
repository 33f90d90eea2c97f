//! The KubeVirt upgrade preview: what the workload updater will do with every running VMI of the
//! input (`cluster_model::upgrade`), as a table or one JSON object.

use cluster_model::upgrade::{Completion, UpdateOutcome, Updater, UpgradePreview, preview};
use comfy_table::{ContentArrangement, Table, presets};

use crate::input::{Dump, Source};
use crate::maintenance::Extra;

/// The preview's text and exit code (0 completes, 2 never completes, 3 completes but some VMI
/// evicted may stay off); `Err` for bad input.
pub fn run(
    sources: &[Source],
    external_controller: bool,
    json: bool,
    width: u16,
) -> Result<(String, u8), String> {
    let dump = Dump::from_sources(sources);
    let extra = Extra::from_sources(sources);
    let updater = Updater::of(dump.kubevirts.first()).map_err(|e| format!("KubeVirt CR: {e}"))?;
    let preview = preview(&extra.vmis, &dump.vms, &updater, external_controller);
    let stays_off = preview.vmis.iter().any(|v| {
        matches!(
            v.outcome,
            UpdateOutcome::MayStayOff | UpdateOutcome::StaysOff
        )
    });
    let code = match preview.outcome {
        Completion::Completes if stays_off => 3,
        Completion::Completes => 0,
        Completion::NeverCompletes => 2,
    };
    let mut text = if json {
        serde_json::to_string_pretty(&preview).map_err(|e| e.to_string())?
    } else {
        table(&preview, dump.kubevirts.is_empty(), width)
    };
    text.push('\n');
    Ok((text, code))
}

fn table(preview: &UpgradePreview, no_cr: bool, width: u16) -> String {
    let mut table = Table::new();
    table
        .load_preset(presets::ASCII_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(width)
        .set_header(["VMI", "node", "eviction strategy", "update", "why"]);
    for vmi in &preview.vmis {
        let strategy = vmi
            .eviction_strategy
            .as_ref()
            .map_or("-".to_owned(), ToString::to_string);
        let mut why = vmi.reasons.join("\n");
        if let (UpdateOutcome::Restart | UpdateOutcome::MayStayOff, Some(after)) =
            (vmi.outcome, &vmi.after_restart)
        {
            why.push_str(&format!("\nruns under {after} after the restart"));
        }
        table.add_row([
            format!("{}/{}", vmi.namespace, vmi.name),
            vmi.node.clone().unwrap_or_default(),
            strategy,
            format!("{:?}", vmi.outcome),
            why,
        ]);
    }
    let m = &preview.migrations;
    let e = &preview.evictions;
    let mut text = if preview.vmis.is_empty() {
        "No running VirtualMachineInstance in the input.\n".to_owned()
    } else {
        format!("{table}\n")
    };
    if no_cr {
        text.push_str(
            "Note: no KubeVirt CR in the input: KubeVirt's defaults (no update method).\n",
        );
    }
    text.push_str(&format!(
        "Migrations: {} (at most {} at a time). Evictions: {} in {} batches of {} every {} s (at least {} s).\n",
        m.count, m.parallel, e.count, e.batches, e.batch_size, e.interval_seconds, e.minimum_seconds
    ));
    let off: Vec<String> = preview
        .vmis
        .iter()
        .filter(|v| {
            matches!(
                v.outcome,
                UpdateOutcome::MayStayOff | UpdateOutcome::StaysOff
            )
        })
        .map(|v| format!("{}/{} ({:?})", v.namespace, v.name, v.outcome))
        .collect();
    if !off.is_empty() {
        text.push_str(&format!(
            "May stay off after its eviction: {}.\n",
            off.join(", ")
        ));
    }
    text.push_str(match preview.outcome {
        Completion::Completes => "Outcome: Completes: every VMI reaches a new launcher.",
        Completion::NeverCompletes => {
            "Outcome: NeverCompletes: outdatedVirtualMachineInstanceWorkloads never reaches 0."
        }
    });
    text
}
