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
mod table;

use std::time::Duration;

pub use plan::{
    Batches, Finding, LabelChange, Mode, Outcome, Plan, Write, exit_code, object_path, restart_path,
};
pub use planner::plan;
pub use table::table;

/// What `sync` was asked.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--restart-stale`: plan the restarts too.
    pub restart_stale: bool,
    /// `--batch-size`: restarts per batch (at least 1).
    pub batch_size: usize,
    /// `--batch-interval`: the wait between two batches.
    pub batch_interval: Duration,
}

/// A Go-style duration: `90s`, `1m30s`, `500ms`, `2h`, `0s` (or a bare number of seconds).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("{text:?}: not a duration such as 30s, 1m30s or 500ms");
    if let Ok(seconds) = text.parse::<u64>() {
        return Ok(Duration::from_secs(seconds));
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .ok_or_else(bad)?;
        let number: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = match &rest[..unit_end] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        rest = &rest[unit_end..];
        total += Duration::from_secs_f64(number * unit);
    }
    Ok(total)
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
            ("30", Some(30.0)),
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
