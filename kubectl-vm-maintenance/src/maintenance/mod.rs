//! `maintenance NODE [--force]`: Harvester's maintenance mode on one node, previewed from the
//! dump with the cluster-model crate's `maintenance::preview`. This file says what the dump lacks
//! for it (Nodes, VirtualMachineInstances, Pods, Longhorn volumes and replicas: [`crate::input::Slice`]) and
//! renders the table or the data.

use crate::running::HARVESTER_READS;
use cluster_model::drain::DrainOutcome;
use cluster_model::maintenance::{Longhorn, Objects, Outcome, Preview, VmOutcome, preview};
use serde_json::Value;
use vm_maintenance_strategy::settings::Settings;

use crate::context::{Context, Exit, Report};
use crate::input::Store;
use crate::input::cluster::{assess, dump_cluster};
use crate::output::columns::{Columns, Layout, listed};
use crate::running::label_sync::{self, LabelSync};
use crate::running::staleness::{self, Found, Labels, Staleness};

/// `maintenance NODE [--force]`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The node to put in maintenance mode (every namespace is read, as Harvester does).
    pub node: String,
    /// The maintenance dialog's "Force" checkbox.
    #[arg(long)]
    pub force: bool,
}

/// What the preview is asked: the node, the settings as the policy reads them, how to print.
struct Request<'a> {
    node: &'a str,
    force: bool,
    settings: &'a Settings,
    external_controller: bool,
    layout: &'a Layout,
}

/// The preview (exit 0 completes, 2 refused or never completes, 3 completes but some VM
/// evicted without migration may stay off or down); `Err` for bad input (exit 1).
pub fn run(context: &Context, args: &Args) -> Result<Report, String> {
    let request = Request {
        node: &args.node,
        force: args.force,
        settings: context.settings.typed()?,
        external_controller: context.external_controller,
        layout: &context.layout,
    };
    let store = Store::read(context.sources(None)?)?;
    store.known_node(request.node)?;
    // Only the node's VMs (and those of its Longhorn replicas) are read.
    let slice = store.slice_on(request.node)?;
    let view = dump_cluster(&slice);
    let predict = |vm: &Value| assess(vm, request.settings, &view);
    let longhorn = store.has_longhorn().then_some(Longhorn {
        volumes: &slice.volumes,
        replicas: &slice.replicas,
    });
    let objects = Objects {
        nodes: &slice.nodes,
        vms: &slice.vms,
        vmis: &slice.vmis,
        pods: &slice.pods,
        longhorn,
        external_controller: request.external_controller,
        claims: &slice.pvcs,
        persistent_volumes: &slice.persistent_volumes,
    };
    let mut asked = preview(request.node, request.force, &objects, &predict);
    let mut notes = store.notes.clone();
    notes.extend(store.missing());
    notes.extend(store.missing_disks());
    notes.append(&mut asked.notes);
    asked.notes = notes;
    let stays_down = asked.vms.iter().any(|v| v.outcome.may_stay_down());
    let exit = match asked.outcome {
        Outcome::Completes if stays_down => Exit::MayStayDown,
        Outcome::Completes => Exit::Clear,
        _ => Exit::Blocked,
    };
    let sync = label_sync::of(
        slice.kubevirts.first(),
        HARVESTER_READS,
        request.settings.kubevirt.version.as_deref(),
    );
    let stale = staleness::Index::new(
        &slice.vms,
        &slice,
        slice.kubevirts.first(),
        Some(Labels {
            key: HARVESTER_READS,
            sync: &sync,
        }),
    )
    .found();
    let text = if request.layout.table() {
        // What --force would do instead of a refusal.
        let instead = (asked.outcome == Outcome::Refused && !request.force)
            .then(|| preview(request.node, true, &objects, &predict));
        let lag = Lag {
            stale: &stale,
            sync: &sync,
        };
        table(&asked, instead.as_ref(), &lag, request.layout)
    } else {
        let mut data = serde_yaml::to_value(&asked).map_err(|e| e.to_string())?;
        stale.annotate(&mut data, "vms")?;
        if let Some(object) = data.as_mapping_mut() {
            let sync = serde_yaml::to_value(&sync).map_err(|e| e.to_string())?;
            object.insert("labelSync".into(), sync);
        }
        request
            .layout
            .data(&data)
            .unwrap_or_else(|| Ok(String::new()))?
    };
    Ok(Report::new(text, exit))
}

/// What the running objects carry against their VMs, and what the KubeVirt CR syncs.
pub struct Lag<'a> {
    pub stale: &'a Found,
    pub sync: &'a LabelSync,
}

fn forced_words(force: bool) -> &'static str {
    if force { "forced" } else { "not forced" }
}

/// The node's outcome first; for `Refused`, what blocks it VM by VM and what `--force` would do
/// instead; otherwise the VMs, a line each; then why, why it never completes and what was not
/// checked. `--no-headers`: the rows of the first table alone.
pub fn table(asked: &Preview, instead: Option<&Preview>, lag: &Lag, layout: &Layout) -> String {
    if !layout.headers {
        return if asked.outcome == Outcome::Refused {
            refusal_table(asked, instead).render(false)
        } else {
            vm_table(asked, lag, layout).render(false)
        };
    }
    let mut text = format!(
        "Maintenance mode on {}, {}: {}\n",
        asked.node,
        forced_words(asked.force),
        asked.outcome.as_str()
    );
    if asked.outcome == Outcome::Refused {
        refused(asked, instead, lag, layout, &mut text);
    } else {
        acted(asked, lag, layout, &mut text);
    }
    layout.next_section("Not checked", &asked.notes, &mut text);
    text
}

/// Each VM that makes Harvester refuse, the reasons (Harvester's keys) and what `--force` would
/// do with it.
fn refusal_table(asked: &Preview, instead: Option<&Preview>) -> Columns {
    let mut vms: Vec<(&str, Vec<&str>)> = Vec::new();
    for refusal in &asked.refusal {
        for vm in &refusal.vms {
            match vms.iter_mut().find(|(name, _)| name == vm) {
                Some((_, reasons)) => reasons.push(&refusal.reason),
                None => vms.push((vm, vec![&refusal.reason])),
            }
        }
    }
    vms.sort();
    let mut table = Columns::new(vec!["NAMESPACE", "NAME", "REASON", "IF FORCED"]);
    for (vm, reasons) in vms {
        let forced = instead
            .and_then(|p| {
                p.vms
                    .iter()
                    .find(|v| format!("{}/{}", v.namespace, v.name) == vm)
            })
            .map_or_else(|| "-".to_owned(), short);
        let (namespace, name) = vm.split_once('/').unwrap_or(("", vm));
        table.row(vec![
            namespace.to_owned(),
            name.to_owned(),
            listed(&reasons),
            forced,
        ]);
    }
    table
}

fn refused(
    asked: &Preview,
    instead: Option<&Preview>,
    lag: &Lag,
    layout: &Layout,
    text: &mut String,
) {
    let by_vm = asked.refusal.iter().any(|r| !r.vms.is_empty());
    if !by_vm {
        // The control-plane rule: no VM, and force does not bypass it (ND:94-105).
        for refusal in &asked.refusal {
            layout.line(&format!("{}: {}", refusal.reason, refusal.message), text);
        }
        layout.line(
            "--force changes nothing: Harvester checks this rule before the force.",
            text,
        );
        return;
    }
    layout.line(
        "Harvester refuses and removes the request; nothing changes. What blocks it:",
        text,
    );
    text.push_str(&refusal_table(asked, instead).render(true));
    if let Some(instead) = instead {
        text.push('\n');
        layout.line(
            &format!(
                "With --force: {}, the VMs one by one:",
                instead.outcome.as_str()
            ),
            text,
        );
        acted(instead, lag, layout, text);
    }
}

/// One VM's outcome in a few words: `ShutDown, restart never`.
fn short(vm: &VmOutcome) -> String {
    match vm.restart {
        Some(restart) => format!("{}, restart {}", vm.outcome, restart.as_str()),
        None => vm.outcome.to_string(),
    }
}

/// A line per VM acted on, with what its running objects carry against it (`-o wide`: the
/// label on the VM, VMI and Pod, the VMI's eviction strategy, and its reasons in words).
fn vm_table(asked: &Preview, lag: &Lag, layout: &Layout) -> Columns {
    let mut header = vec!["NAMESPACE", "NAME", "NODE", "OUTCOME", "RESTART", "STALE"];
    if layout.wide() {
        header.extend(["LABEL VM/VMI/POD", "VMI EVICTION", "WHY"]);
    }
    let mut table = Columns::new(header);
    for vm in &asked.vms {
        let mut cells = vec![
            vm.namespace.clone(),
            vm.name.clone(),
            vm.node.clone().unwrap_or_default(),
            vm.outcome.to_string(),
            vm.restart
                .map(|r| r.as_str().to_owned())
                .unwrap_or_default(),
        ];
        let stale = lag.stale.of(&vm.namespace, &vm.name);
        cells.push(stale.map(Staleness::cell).unwrap_or_default());
        if layout.wide() {
            cells.push(stale.map(Staleness::labels_cell).unwrap_or_default());
            cells.push(stale.map(Staleness::eviction_cell).unwrap_or_default());
            cells.push(vm.reasons.join("; "));
        }
        table.row(cells);
    }
    table
}

fn acted(asked: &Preview, lag: &Lag, layout: &Layout, text: &mut String) {
    if asked.vms.is_empty() {
        text.push_str("No VM is acted on.\n");
    } else {
        text.push_str(&vm_table(asked, lag, layout).render(true));
        let count = |o: DrainOutcome| asked.vms.iter().filter(|v| v.outcome == o).count();
        let counts: Vec<String> = DrainOutcome::ALL
            .iter()
            .map(|o| format!("{} {o}", count(*o)))
            .collect();
        let n = asked.vms.len();
        let vms = if n == 1 { "VM" } else { "VMs" };
        text.push('\n');
        layout.line(&format!("{n} {vms}: {}", counts.join(", ")), text);
        let why: Vec<String> = asked
            .vms
            .iter()
            .flat_map(|vm| {
                let name = format!("{}/{}", vm.namespace, vm.name);
                std::iter::once(format!("{name}: {}", vm.reasons.join("; "))).chain(
                    vm.warnings
                        .iter()
                        .map(move |w| format!("{name}: warning: {w}")),
                )
            })
            .collect();
        layout.next_section("Why", &why, text);
    }
    let down: Vec<String> = asked
        .vms
        .iter()
        .filter(|v| v.outcome.may_stay_down())
        .map(|v| format!("{}/{}: {}", v.namespace, v.name, v.outcome))
        .collect();
    layout.next_section("May stay off or down after the maintenance", &down, text);
    let stays: Vec<String> = asked
        .vms
        .iter()
        .filter(|v| v.outcome == DrainOutcome::Blocks)
        .map(|v| format!("{}/{} stays on the node", v.namespace, v.name))
        .chain(asked.stuck.iter().cloned())
        .collect();
    layout.next_section("Never completes", &stays, text);
    let stale = lag.stale.lines(
        asked
            .vms
            .iter()
            .map(|v| (v.namespace.as_str(), v.name.as_str())),
    );
    layout.next_section("Stale (running objects behind their VM)", &stale, text);
    if !asked.vms.is_empty() {
        layout.next_section(
            "KubeVirt label sync",
            std::slice::from_ref(&lag.sync.message),
            text,
        );
    }
}
