//! The drain preview: every VM's drain outcome (the policy's own assessment, the dump as the
//! cluster) beside the policy's verdict on a CREATE of it, judged on the real module as
//! Kubewarden's audit scanner would.
//!
//! Here: the VMs selected (a node, a namespace) and why none is, the answer and its exit code.
//! `judge.rs` judges one VM, `verdict.rs` asks the policy about it; `rows.rs` holds what is
//! found of each, `table.rs` prints them as a table with the summary below it.

mod judge;
pub mod rows;
pub mod table;
mod verdict;

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::sync::Arc;

use cluster_model::object::ObjectExt;
use cluster_model::restart::Disks;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use policy_host::{Cluster, Session};
use serde_json::Value;
use vm_maintenance_strategy::settings::Settings;

use crate::context::{Context, Exit, Report};
use crate::input::cluster::dump_cluster;
use crate::input::settings::check_settings;
use crate::input::store::{Key, SLICE};
use crate::input::{Slice, Store};
use crate::running::label_sync::{self, LabelSync};
use crate::running::{HARVESTER_READS, Running};
use judge::{View, judge};
use rows::Row;

/// Inputs smaller than this get no progress bar.
const PROGRESS_MIN: usize = 200;

/// `drain [NODE]`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only the VMs whose VMI runs on this node.
    pub node: Option<String>,
}

/// The VMs a drain preview judges: of a namespace (`-n`), running on a node.
#[derive(Clone, Copy)]
struct Selection<'a> {
    node: Option<&'a str>,
    namespace: Option<&'a str>,
}

/// The preview: exit 0 when no VM blocks a drain and every VM evicted comes back, 2 when some
/// VM would block it (or could not be judged), 3 when none blocks but some VM evicted without
/// migration may stay off or down after it; `Err` for bad input and for a selection without
/// any VM (exit 1): a node or namespace that matches none, an input without VirtualMachines.
pub fn run(context: &Context, args: &Args) -> Result<Report, String> {
    let selection = Selection {
        node: args.node.as_deref(),
        namespace: context.input.target.namespace.as_deref(),
    };
    let sources = context.sources(selection.namespace)?;
    let host = context.policy_host()?;
    let store = Store::read(sources)?;
    for note in &store.notes {
        context.note(note);
    }
    let settings = &context.settings;
    let session = check_settings(&host, &settings.raw, settings.path.as_deref())?;
    if let Some(note) = settings_versus_cluster(&settings.raw, store.kubevirts()) {
        context.note(note);
    }
    let policy = settings.typed()?;
    if let Some(note) = store.missing_disks() {
        context.note(note);
    }
    let sync = label_sync::of(
        store.kubevirts().first(),
        HARVESTER_READS,
        settings
            .raw
            .pointer("/kubevirt/version")
            .and_then(Value::as_str),
    );
    let keys: Vec<Key> = store
        .vm_keys()
        .into_iter()
        .filter(|(namespace, _)| selection.namespace.is_none_or(|n| n == namespace))
        .collect();
    let progress = progress_bar(keys.len());
    let mut judging = Judging {
        session,
        policy,
        sync: &sync,
        context,
        selection,
        progress: &progress,
    };
    let mut rows = Vec::new();
    for slice in store.slices(&keys, SLICE) {
        rows.extend(judging.slice(&slice?));
    }
    progress.finish_and_clear();
    if rows.is_empty() {
        return Err(nothing_selected(&store, selection)?);
    }
    rows.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    let text = match context.layout.data(&rows) {
        Some(text) => text?,
        None => table::table(&rows, &sync, &context.layout),
    };
    Ok(Report::new(text, exit_code(&rows)))
}

/// What every slice is judged with.
struct Judging<'a> {
    /// The module's instance, the settings validated once.
    session: Session<'a>,
    policy: &'a Settings,
    sync: &'a LabelSync,
    context: &'a Context,
    selection: Selection<'a>,
    progress: &'a ProgressBar,
}

impl Judging<'_> {
    /// The rows of the VMs of a slice that the selection keeps (a namespace, a node).
    fn slice(&mut self, slice: &Slice) -> Vec<Row> {
        let view = View {
            sync: self.sync,
            policy: self.policy,
            dump: &dump_cluster(slice),
            running: Running::new(slice),
            disks: Disks::new(&slice.pvcs, &slice.persistent_volumes, &slice.nodes),
            cluster_strategy: slice
                .kubevirts
                .first()
                .and_then(|cr| cr.pointer("/spec/configuration/evictionStrategy"))
                .and_then(Value::as_str),
            external_controller: self.context.external_controller,
        };
        self.session.set_cluster(policy_cluster(slice));
        let mut rows = Vec::new();
        for (vm, &number) in slice.vms.iter().zip(&slice.numbers) {
            if selected(vm, &view.running, self.selection) {
                rows.push(judge(vm, number, &mut self.session, &view));
            }
            self.progress.inc(1);
        }
        rows
    }
}

/// What the policy's verdicts read of the cluster: the KubeVirt CRs, the claims and the
/// instance types and preferences of the dump.
fn policy_cluster(slice: &Slice) -> Arc<Cluster> {
    Arc::new(Cluster::new(
        slice
            .kubevirts
            .iter()
            .chain(&slice.pvcs)
            .chain(&slice.instancetypes)
            .cloned()
            .collect(),
    ))
}

/// A progress bar on stderr for a large input on a terminal, else a hidden one.
fn progress_bar(len: usize) -> ProgressBar {
    if len < PROGRESS_MIN || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len as u64), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{prefix} {wide_bar} {pos}/{len} VMs, {eta} left")
    {
        bar.set_style(style);
    }
    bar.set_prefix("evaluating");
    bar
}

/// Whether the options keep a VM: its namespace, and the node its VMI runs on.
fn selected(vm: &Value, running: &Running, selection: Selection) -> bool {
    let (namespace, name) = vm.key();
    selection.namespace.is_none_or(|n| n == namespace)
        && selection.node.is_none_or(|node| {
            running
                .vmi(namespace, name)
                .is_some_and(|vmi| vmi.node == Some(node))
        })
}

/// Why no VM is left to judge, and what the input holds instead: a node that is not in it (the
/// nodes read), a node or namespace without a VM (where VMs are), no VirtualMachine at all (and
/// how many objects were ignored for want of `kind` / `apiVersion`).
fn nothing_selected(store: &Store, selection: Selection) -> Result<String, String> {
    // Every VM and VMI at once: nothing else is held by then.
    let mut keys: BTreeSet<Key> = store.vm_keys().into_iter().collect();
    keys.extend(store.vmi_keys());
    let slice = store.slice(&keys)?;
    let running = Running::new(&slice);
    Ok(why_none(&slice, &running, store.untyped, selection))
}

fn why_none(slice: &Slice, running: &Running, untyped: usize, selection: Selection) -> String {
    let names = |mut names: Vec<String>| {
        names.sort();
        names.dedup();
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    };
    let nodes_of_vms: Vec<String> = slice
        .vms
        .iter()
        .filter(|vm| selection.namespace.is_none_or(|n| vm.key().0 == n))
        .filter_map(|vm| {
            let (namespace, name) = vm.key();
            running.vmi(namespace, name)?.node.map(str::to_owned)
        })
        .collect();
    if let Some(node) = selection.node {
        let mut known: Vec<String> = slice
            .nodes
            .iter()
            .filter_map(|n| n.text_at("/metadata/name").map(str::to_owned))
            .collect();
        known.extend(
            slice
                .vmis
                .iter()
                .filter_map(|v| v.text_at("/status/nodeName").map(str::to_owned)),
        );
        known.extend(nodes_of_vms.iter().cloned());
        if !known.iter().any(|n| n == node) {
            let known = if known.is_empty() {
                "none; add `kubectl get nodes -o json`".to_owned()
            } else {
                names(known)
            };
            return format!("node {node} is not in the input (nodes read: {known})");
        }
        let namespace = selection
            .namespace
            .map(|n| format!(" of namespace {n}"))
            .unwrap_or_default();
        return format!(
            "no VirtualMachine{namespace} runs on node {node} (nodes that run one: {})",
            names(nodes_of_vms)
        );
    }
    if let Some(namespace) = selection.namespace {
        let namespaces: Vec<String> = slice.vms.iter().map(|vm| vm.key().0.to_owned()).collect();
        return format!(
            "no VirtualMachine in namespace {namespace} (namespaces with one: {})",
            names(namespaces)
        );
    }
    let mut message = "no VirtualMachine in the input".to_owned();
    if untyped > 0 {
        message.push_str(&format!(
            "; {untyped} objects without kind or apiVersion were ignored (a VM needs `apiVersion: kubevirt.io/v1` and `kind: VirtualMachine`)",
        ));
    }
    message
}

/// Blocked when a VM may block the drain, else MayStayDown when one may stay off or down after
/// it, else Clear.
fn exit_code(rows: &[Row]) -> Exit {
    if rows.iter().any(Row::may_block) {
        Exit::Blocked
    } else if rows.iter().any(Row::may_stay_down) {
        Exit::MayStayDown
    } else {
        Exit::Clear
    }
}

/// A settings `clusterDefault` that disagrees with the dump's KubeVirt CR: KubeVirt itself uses
/// the CR's value, the preview follows the settings (as the policy does).
fn settings_versus_cluster(settings: &Value, kubevirts: &[Value]) -> Option<String> {
    let ours = settings.pointer("/evictionStrategy/clusterDefault")?;
    let theirs = kubevirts
        .first()?
        .pointer("/spec/configuration/evictionStrategy")
        .unwrap_or(&Value::Null);
    (ours != theirs).then(|| {
        format!(
            "settings evictionStrategy.clusterDefault {ours} differs from the KubeVirt CR's {theirs}; \
             VMs without their own strategy are judged with the settings' value"
        )
    })
}
