//! `kubectl vm-maintenance sync`: bring the cluster's objects in line with the policy, once.
//! The plan is what would be written: the maintenance label added to a VM without it
//! (`defaultStrategy`) and copied into its template where they differ, one PATCH of the VM; the
//! VMI's and each launcher Pod's label set to the VM's value where they differ; with
//! `--restart-stale`, a restart of each running VM whose VMI carries a stale `LiveMigrate` and
//! cannot live-migrate, in batches. An invalid value is never changed (as the policy keeps it,
//! docs/rules.md V2), only reported. The `apply` module sends the plan.
//!
//! Every patch is a JSON patch (RFC 6902) whose `test` pins what it replaces, so that an object
//! changed since it was read is never overwritten: an existing key by its value; a key absent
//! from an existing labels map by that map (its parent); an absent (or `null`) labels map, or
//! `metadata` of the template, by a `test` of `null` at that path, which the API server's JSON
//! patch (evanphx/json-patch, as KubeVirt's own patches use it) passes only when the member is
//! absent or `null`.
//!
//! Here: what `sync` is asked and `--batch-interval`'s durations. The plan's data (`plan.rs`: what
//! `-o json` prints), how it is made (`planner.rs`: the VMs in order and the restart batches;
//! `labels.rs`: the label patches; `restart.rs`: the restarts of stale VMIs), and how it is shown
//! (`table.rs`).

mod labels;
mod plan;
mod planner;
mod restart;
pub mod send;
mod table;

use std::time::Duration;

use crate::context::{Context, Report};
use crate::input::Store;
use crate::output::print;
use crate::running::label_sync;

pub use plan::{
    Batches, Finding, Kind, LabelChange, Mode, Outcome, Plan, Verb, Write, exit_code, object_path,
    restart_path,
};
pub use planner::plan;
pub use table::table;

/// `sync`'s own arguments.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Send the plan: every write a JSON patch that pins what it replaces.
    #[arg(long)]
    pub apply: bool,
    /// `server`: send every write with dryRun=All (the API server and its admission
    /// webhooks check it, nothing changes); implies --apply.
    #[arg(long, value_name = "none|server", value_enum, default_value_t = DryRun::None)]
    pub dry_run: DryRun,
    /// Also restart (KubeVirt's restart subresource) each running VM whose VMI carries a
    /// stale LiveMigrate and is not live-migratable; never runStrategy Halted or Once.
    #[arg(long)]
    pub restart_stale: bool,
    /// Restarts per batch.
    #[arg(long, value_name = "N", default_value_t = 10,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub batch_size: u32,
    /// The wait between two restart batches (30s, 1m30s).
    #[arg(long, value_name = "DURATION", default_value = "1m", value_parser = parse_duration)]
    pub batch_interval: Duration,
}

/// `--dry-run`, as kubectl names its values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DryRun {
    None,
    Server,
}

/// The kinds `sync` reads from the live cluster: not the ones the previews alone need.
const SYNC_KINDS: [&str; 4] = [
    "kubevirts",
    "virtualmachines",
    "virtualmachineinstances",
    "pods",
];

/// The plan from the files or the live cluster; with `--apply` (or `--dry-run=server`) its
/// writes sent to the live cluster. A 401/403 on a write prints what was done so far, then the
/// error (exit 1).
pub fn run(context: &Context, args: &Args) -> Result<Report, String> {
    let dry_run = args.dry_run == DryRun::Server;
    let apply = args.apply || dry_run;
    if apply && !context.input.files.is_empty() {
        return Err(
            "--apply and --dry-run=server write to the live cluster: leave out -f (a plan from files needs neither)"
                .to_owned(),
        );
    }
    let options = Options {
        restart_stale: args.restart_stale,
        batch_size: args.batch_size as usize,
        batch_interval: args.batch_interval,
    };
    let policy = context.settings.typed()?;
    let namespace = context.input.target.namespace.as_deref();
    let store = Store::read(context.sources_of(namespace, Some(&SYNC_KINDS))?)?;
    for note in &store.notes {
        context.note(note);
    }
    let label_sync = label_sync::of(
        store.kubevirts().first(),
        &policy.label_key,
        policy.kubevirt.version.as_deref(),
    );
    let mut plan = plan(&store, policy, label_sync, &options)?;
    let mut failure = None;
    if apply && !plan.writes.is_empty() {
        let sending = send::Sending {
            target: &context.target(namespace),
            dry_run,
            interval: options.batch_interval,
        };
        failure = send::apply(&mut plan, &sending).err();
    } else if apply {
        plan.mode = if dry_run { Mode::DryRun } else { Mode::Apply };
    }
    let text = match context.layout.data(&plan) {
        Some(text) => text?,
        None => table(&plan, &context.layout),
    };
    if let Some(failure) = failure {
        print(&text);
        return Err(failure);
    }
    Ok(Report::new(text, exit_code(&plan)))
}

/// What `sync` plans with.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--restart-stale`: plan the restarts too.
    pub restart_stale: bool,
    /// `--batch-size`: restarts per batch (at least 1).
    pub batch_size: usize,
    /// `--batch-interval`: the wait between two batches.
    pub batch_interval: Duration,
}

/// `--batch-interval`: a Go duration (`30s`, `1m30s`, `500ms`, `0` for no wait), read by the
/// policy's port of Go's `time.ParseDuration`, the reader of the KubeVirt CR's durations; not
/// negative.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let nanoseconds = vm_maintenance_strategy::duration::parse(text).map_err(|e| e.to_string())?;
    u64::try_from(nanoseconds)
        .map(Duration::from_nanos)
        .map_err(|_| format!("{text:?}: the wait between batches cannot be negative"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        let cases = [
            ("0s", Some(0.0)),
            ("90s", Some(90.0)),
            ("1m30s", Some(90.0)),
            ("500ms", Some(0.5)),
            ("2h", Some(7200.0)),
            ("1.5s", Some(1.5)),
            ("0", Some(0.0)),
            ("30", None),
            ("-1s", None),
            ("1d", None),
            ("", None),
            ("1x", None),
            ("m", None),
        ];
        for (text, want) in cases {
            let got = parse_duration(text).ok().map(|d| d.as_secs_f64());
            assert_eq!(got, want, "{text}");
        }
    }
}
