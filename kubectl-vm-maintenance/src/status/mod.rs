//! `status [NODE]`: why a node being drained still holds VMs, from the running objects
//! (cluster-model's `status::diagnose`, docs/status.md): every VM still on the node with one
//! cause, its evidence, how long and what to do, and the node's findings. Without a node, every
//! node being drained: cordoned, or carrying Harvester's `drain-requested` or `maintain-status`.

mod table;
mod upgrade;

use std::time::{SystemTime, UNIX_EPOCH};

use cluster_model::object::ObjectExt;
use cluster_model::status::{Diagnosis, Objects, diagnose};
use serde::Serialize;
use serde_json::Value;

use crate::context::{Context, Exit, Report};
use crate::input::live::{self, Target};
use crate::input::node::NodeObjects;
use crate::input::{Source, Store, read_sources};

/// `status [NODE]`, `status --upgrade`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The node to diagnose; without it, every node being drained (every namespace is read).
    pub node: Option<String>,
    /// Instead of a node: every running VMI that KubeVirt's workload updater still has to move
    /// to a new launcher (or apply a live update to), and why it has not.
    #[arg(long, conflicts_with = "node")]
    pub upgrade: bool,
}

/// The kinds `status` reads (and the node's other Pods).
const KINDS: [&str; 9] = [
    "kubevirts",
    "virtualmachines",
    "virtualmachineinstances",
    "pods",
    "nodes",
    "volumes",
    "replicas",
    "virtualmachineinstancemigrations",
    "poddisruptionbudgets",
];

/// Harvester's node annotations of a drain in progress (`pkg/util/drainhelper/helper.go` l.34,
/// `maintain_controller.go` l.19-24).
const DRAIN_ANNOTATIONS: [&str; 2] = [
    "harvesterhci.io/drain-requested",
    "harvesterhci.io/maintain-status",
];

/// The diagnosis (exit 0 nothing holds the node, 2 something holds it for good, 3 it moves but
/// slowly or a VM may stay off); `Err` for bad input (exit 1).
pub fn run(context: &Context, args: &Args) -> Result<Report, String> {
    if args.upgrade {
        return upgrade::run(context);
    }
    let store = Store::read(sources(context, args.node.as_deref(), &KINDS, true)?)?;
    for note in &store.notes {
        context.note(note);
    }
    let nodes = match &args.node {
        Some(node) => {
            store.known_node(node)?;
            vec![node.clone()]
        }
        None => draining(&store),
    };
    let now = now();
    let mut diagnoses = Vec::new();
    for node in &nodes {
        let read = store.node_objects(node)?;
        diagnoses.push(diagnose(node, &objects(&read, now)));
    }
    for note in missing(&store) {
        context.note(&note);
    }
    let exit = exit_code(&diagnoses);
    let text = match (
        &args.node,
        context
            .layout
            .data(&Shown::of(&diagnoses, args.node.is_some())),
    ) {
        (_, Some(text)) => text?,
        (Some(_), None) => table::table(&diagnoses[0], &context.layout),
        (None, None) => table::nodes(&diagnoses, &context.layout),
    };
    Ok(Report::new(text, exit))
}

/// The `-f` files, or the live cluster's `kinds` (with `node_pods`, the node's other Pods too).
fn sources(
    context: &Context,
    node: Option<&str>,
    kinds: &[&str],
    node_pods: bool,
) -> Result<Vec<Source>, String> {
    if !context.input.files.is_empty() {
        return read_sources(&context.input.files);
    }
    let target = Target {
        node: node.map(str::to_owned),
        ..context.target(None)
    };
    let (sources, notes) = live::read_status(&target, kinds, node_pods)?;
    for note in notes {
        context.note(&note.text);
    }
    Ok(sources)
}

/// Seconds since the Unix epoch.
fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// The nodes being drained: cordoned (`spec.unschedulable`) or with a Harvester drain annotation.
fn draining(store: &Store) -> Vec<String> {
    store
        .nodes()
        .iter()
        .filter(|node| {
            node.pointer("/spec/unschedulable") == Some(&Value::Bool(true))
                || DRAIN_ANNOTATIONS
                    .iter()
                    .any(|a| node.annotation(a).is_some())
        })
        .map(|node| node.name().to_owned())
        .collect()
}

fn objects(read: &NodeObjects, now: i64) -> Objects<'_> {
    Objects {
        vms: &read.slice.vms,
        vmis: &read.slice.vmis,
        pods: &read.pods,
        migrations: &read.migrations,
        pdbs: &read.budgets,
        replicas: &read.slice.replicas,
        kubevirt: read.slice.kubevirts.first(),
        now,
    }
}

/// What the input lacks for a diagnosis, in words.
fn missing(store: &Store) -> Vec<String> {
    let (migrations, budgets) = store.has_status_kinds();
    let mut notes = store.missing();
    if !migrations {
        notes.push("no VirtualMachineInstanceMigrations in the input: a migration queued, running or failing is not seen".to_owned());
    }
    if !budgets {
        notes.push(
            "no PodDisruptionBudgets in the input: a budget that holds the node is not seen"
                .to_owned(),
        );
    }
    notes
}

/// 2 when something holds a node for good, else 3 when a VM is still on one, else 0.
fn exit_code(diagnoses: &[Diagnosis]) -> Exit {
    if diagnoses.iter().any(Diagnosis::holds_for_good) {
        Exit::Blocked
    } else if diagnoses.iter().any(|d| !d.vms.is_empty()) {
        Exit::MayStayDown
    } else {
        Exit::Clear
    }
}

/// `-o json|yaml`: one node's diagnosis, or `{"nodes": [...]}` for every node being drained.
#[derive(Serialize)]
#[serde(untagged)]
enum Shown<'a> {
    One(&'a Diagnosis),
    All { nodes: &'a [Diagnosis] },
}

impl<'a> Shown<'a> {
    fn of(diagnoses: &'a [Diagnosis], one: bool) -> Shown<'a> {
        match diagnoses.first() {
            Some(first) if one => Shown::One(first),
            _ => Shown::All { nodes: diagnoses },
        }
    }
}
