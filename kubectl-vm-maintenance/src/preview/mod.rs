//! The drain preview: every VM's drain outcome (the policy's own assessment, the dump as the
//! cluster) beside the policy's verdict on a CREATE of it, judged on the real module as
//! Kubewarden's audit scanner would.
//!
//! Here: the VMs selected (a node, a namespace) and why none is, the answer and its exit code.
//! `judge.rs` judges one VM, `verdict.rs` asks the policy about it.

mod judge;
mod verdict;

use std::collections::BTreeSet;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::Arc;

use cluster_model::restart::Disks;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use policy_host::{Cluster, PolicyHost};
use serde_json::Value;
use vm_maintenance_strategy::settings::Settings;

use crate::columns::Layout;
use crate::dump_cluster::{dump_cluster, policy_settings};
use crate::extra::Extra;
use crate::input::{Dump, Source};
use crate::label_sync::{self, LabelSync};
use crate::report::Row;
use crate::running::Running;
use crate::settings::{check_settings, refused};
use crate::store::{Key, SLICE, Slice, Store};
use judge::{View, judge};

/// Inputs smaller than this get no progress bar.
const PROGRESS_MIN: usize = 200;

/// How to judge and how to answer.
pub struct Options<'a> {
    /// The policy settings as written (`{}` by default).
    pub settings: &'a Value,
    /// Where they were read from, to name them in errors.
    pub settings_path: Option<&'a Path>,
    pub external_controller: bool,
    pub layout: Layout,
    /// Prefix of the notes on stderr (`kubectl-vm_maintenance`).
    pub program: &'a str,
    /// Only the VMs whose VMI runs on this node.
    pub node: Option<&'a str>,
    /// Only the VMs of this namespace.
    pub namespace: Option<&'a str>,
}

/// The preview's text and exit code: 0 when no VM blocks a drain and every VM evicted comes
/// back, 2 when some VM would block it (or could not be judged), 3 when none blocks but some VM
/// evicted without migration may stay off or down after it; `Err` for bad input and for a
/// selection without any VM (exit 1): a node or namespace that matches none, an input without
/// VirtualMachines.
pub fn drain(
    sources: Vec<Source>,
    host: &PolicyHost,
    options: &Options,
) -> Result<(String, u8), String> {
    let Options {
        settings, program, ..
    } = options;
    let store = Store::read(sources)?;
    for note in &store.notes {
        eprintln!("{program}: note: {note}");
    }
    check_settings(host, settings, options.settings_path)?;
    if let Some(note) = settings_versus_cluster(settings, store.kubevirts()) {
        eprintln!("{program}: note: {note}");
    }
    let policy = policy_settings(settings).map_err(|e| refused(options.settings_path, &e))?;
    if let Some(note) = store.missing_disks() {
        eprintln!("{program}: note: {note}");
    }
    let sync = label_sync::of(
        store.kubevirts().first(),
        cluster_model::drain::DEFAULT_LABEL_KEY,
        settings
            .pointer("/kubevirt/version")
            .and_then(Value::as_str),
    );
    let keys: Vec<Key> = store
        .vm_keys()
        .into_iter()
        .filter(|(namespace, _)| options.namespace.is_none_or(|n| n == namespace))
        .collect();
    let progress = progress_bar(keys.len());
    let mut rows = Vec::new();
    for slice in store.slices(&keys, SLICE) {
        rows.extend(judge_slice(
            &slice?, host, &policy, &sync, options, &progress,
        ));
    }
    progress.finish_and_clear();
    if rows.is_empty() {
        return Err(nothing_selected(&store, options)?);
    }
    rows.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    let text = match options.layout.data(&rows) {
        Some(text) => text?,
        None => crate::report::table(&rows, &sync, &options.layout),
    };
    Ok((text, exit_code(&rows)))
}

/// The rows of the VMs of a slice that the options select (a namespace, a node).
fn judge_slice(
    slice: &Slice,
    host: &PolicyHost,
    policy: &Settings,
    sync: &LabelSync,
    options: &Options,
    progress: &ProgressBar,
) -> Vec<Row> {
    let Slice {
        dump,
        extra,
        numbers,
    } = slice;
    let view = View {
        sync,
        policy,
        dump: &dump_cluster(dump),
        running: Running::new(extra),
        disks: Disks::new(&dump.pvcs, &extra.persistent_volumes, &extra.nodes),
        cluster_strategy: dump
            .kubevirts
            .first()
            .and_then(|cr| cr.pointer("/spec/configuration/evictionStrategy"))
            .and_then(Value::as_str),
    };
    let cluster = policy_cluster(dump);
    let mut rows = Vec::new();
    for (vm, &number) in dump.vms.iter().zip(numbers) {
        if selected(vm, &view.running, options) {
            rows.push(judge(
                vm,
                number,
                host,
                &cluster,
                options.settings,
                &view,
                options.external_controller,
            ));
        }
        progress.inc(1);
    }
    rows
}

/// What the policy's verdicts read of the cluster: the KubeVirt CRs, the claims and the
/// instance types and preferences of the dump.
fn policy_cluster(dump: &Dump) -> Arc<Cluster> {
    Arc::new(Cluster::new(
        dump.kubevirts
            .iter()
            .chain(&dump.pvcs)
            .chain(&dump.instancetypes)
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
fn selected(vm: &Value, running: &Running, options: &Options) -> bool {
    let namespace = vm
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("default");
    let name = vm
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    options.namespace.is_none_or(|n| n == namespace)
        && options.node.is_none_or(|node| {
            running
                .vmi(namespace, name)
                .is_some_and(|vmi| vmi.node == Some(node))
        })
}

/// Why no VM is left to judge, and what the input holds instead: a node that is not in it (the
/// nodes read), a node or namespace without a VM (where VMs are), no VirtualMachine at all (and
/// how many objects were ignored for want of `kind` / `apiVersion`).
fn nothing_selected(store: &Store, options: &Options) -> Result<String, String> {
    // Every VM and VMI at once: nothing else is held by then.
    let mut keys: BTreeSet<Key> = store.vm_keys().into_iter().collect();
    keys.extend(store.vmi_keys());
    let Slice { dump, extra, .. } = store.slice(&keys)?;
    let running = Running::new(&extra);
    Ok(why_none(&dump, &extra, &running, store.untyped, options))
}

fn why_none(
    dump: &Dump,
    extra: &Extra,
    running: &Running,
    untyped: usize,
    options: &Options,
) -> String {
    let names = |mut names: Vec<String>| {
        names.sort();
        names.dedup();
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    };
    let nodes_of_vms: Vec<String> = dump
        .vms
        .iter()
        .filter(|vm| options.namespace.is_none_or(|n| key(vm).0 == n))
        .filter_map(|vm| {
            let (namespace, name) = key(vm);
            running.vmi(namespace, name)?.node.map(str::to_owned)
        })
        .collect();
    if let Some(node) = options.node {
        let mut known: Vec<String> = extra
            .nodes
            .iter()
            .filter_map(|n| text_at(n, "/metadata/name").map(str::to_owned))
            .collect();
        known.extend(
            extra
                .vmis
                .iter()
                .filter_map(|v| text_at(v, "/status/nodeName").map(str::to_owned)),
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
        let namespace = options
            .namespace
            .map(|n| format!(" of namespace {n}"))
            .unwrap_or_default();
        return format!(
            "no VirtualMachine{namespace} runs on node {node} (nodes that run one: {})",
            names(nodes_of_vms)
        );
    }
    if let Some(namespace) = options.namespace {
        let namespaces: Vec<String> = dump.vms.iter().map(|vm| key(vm).0.to_owned()).collect();
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

fn text_at<'v>(value: &'v Value, pointer: &str) -> Option<&'v str> {
    value.pointer(pointer).and_then(Value::as_str)
}

/// A VM's namespace (`default` when it names none) and name.
fn key(vm: &Value) -> (&str, &str) {
    (
        text_at(vm, "/metadata/namespace").unwrap_or("default"),
        text_at(vm, "/metadata/name").unwrap_or_default(),
    )
}

/// 2 when a VM may block the drain, else 3 when one may stay off or down after it, else 0.
fn exit_code(rows: &[Row]) -> u8 {
    if rows.iter().any(Row::may_block) {
        2
    } else if rows.iter().any(Row::may_stay_down) {
        3
    } else {
        0
    }
}

/// The answer on stdout. A closed pipe (`| head`) is not an error of the input.
pub fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
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
