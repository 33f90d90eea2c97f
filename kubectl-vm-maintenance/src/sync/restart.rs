//! The restarts of `--restart-stale`: a running VM whose VMI carries a stale `LiveMigrate` and
//! cannot live-migrate blocks every drain until it restarts. Every other stale VMI, and a VM
//! KubeVirt refuses to restart, is reported instead.

use cluster_model::restart::RunStrategy;
use serde_json::Value;

use super::plan::{Kind, Write};
use super::planner::Planner;
use crate::running::Vmi;
use crate::running::staleness;

const LIVE_MIGRATE: &str = "LiveMigrate";

impl Planner<'_> {
    /// A VMI whose own `LiveMigrate` is stale and that cannot live-migrate: every drain blocks
    /// on it until it restarts. Restarted with `--restart-stale` unless KubeVirt refuses to
    /// (runStrategy `Halted` or `Once`, 409); every other stale VMI is reported.
    pub(super) fn restart(
        &mut self,
        vm: &Value,
        namespace: &str,
        name: &str,
        vmi: &Vmi,
        cluster: Option<&str>,
        restart_stale: bool,
    ) {
        let state = staleness::eviction(vmi.vmi, Some(vm), cluster);
        if !state.stale {
            return;
        }
        let own = state.vmi.as_deref().unwrap_or_default();
        let current = state.current.as_deref().unwrap_or("None");
        let stale = format!("evictionStrategy {own} on the VMI, {current} now");
        let condition = live_migratable(vmi.vmi);
        if let Some(why) = not_blocking(own, condition.as_ref()) {
            self.finding(
                namespace,
                Kind::Vmi,
                name,
                format!("{stale}: not restarted ({why}); it gets {current} at its next restart"),
            );
            return;
        }
        let reason = condition.map(|(_, reason)| reason).unwrap_or_default();
        let blocks = format!("{stale}, LiveMigratable=False ({reason}): every drain blocks on it");
        if let Some(refused) = refused(vm) {
            self.finding(namespace, Kind::Vm, name, format!("{blocks}; {refused}"));
            return;
        }
        if !restart_stale {
            self.finding(
                namespace,
                Kind::Vm,
                name,
                format!("{blocks}; --restart-stale restarts it"),
            );
            return;
        }
        self.restarts.push(Write::restart(
            namespace,
            name,
            format!("evictionStrategy {own} -> {current} (LiveMigratable=False: {reason})"),
        ));
    }
}

/// Why a stale VMI does not block a drain (`None`: it does): only a stale `LiveMigrate` that
/// cannot migrate does.
fn not_blocking(own: &str, condition: Option<&(String, String)>) -> Option<String> {
    let not_migratable = condition.is_some_and(|(status, _)| status == "False");
    if own == LIVE_MIGRATE && not_migratable {
        return None;
    }
    Some(match (condition, own == LIVE_MIGRATE) {
        (_, false) => "only a stale LiveMigrate that cannot migrate blocks a drain".to_owned(),
        (Some((status, _)), true) => format!("LiveMigratable={status}: it migrates"),
        (None, true) => "no LiveMigratable condition on the VMI".to_owned(),
    })
}

/// Why KubeVirt refuses to restart the VM (`None`: it restarts it): runStrategy `Halted` or
/// `Once` (409), or one it cannot read.
fn refused(vm: &Value) -> Option<String> {
    let run = RunStrategy::of(Some(vm));
    match run.value.as_deref() {
        Some(value @ ("Halted" | "Once")) => Some(format!(
            "runStrategy {value}: KubeVirt refuses a restart (409); stop and start it by hand"
        )),
        None => Some(format!(
            "runStrategy not readable ({}): KubeVirt cannot restart it",
            run.field
        )),
        Some(_) => None,
    }
}

/// The VMI's `LiveMigratable` condition: its status and reason.
fn live_migratable(vmi: &Value) -> Option<(String, String)> {
    let conditions = vmi
        .pointer("/status/conditions")
        .and_then(Value::as_array)?;
    let condition = conditions
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("LiveMigratable"))?;
    let field = |name: &str| {
        condition
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Some((field("status"), field("reason")))
}
