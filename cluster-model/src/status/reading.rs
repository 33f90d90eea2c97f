//! What the eviction of a running VMI turns on, read once: its effective eviction strategy (the
//! VMI's own, stamped at its start, else the KubeVirt CR's, else `None`:
//! `pkg/util/migrations/migrations.go` l.116-122), its `LiveMigratable` condition, its
//! evacuation mark; with the evidence of each.

use serde_json::Value;

use super::{Objects, named};
use crate::object::ObjectExt;

/// What the eviction of a VMI turns on: its effective strategy, `LiveMigratable`, its mark;
/// and the evidence of each.
pub(super) struct Reading<'a> {
    pub(super) strategy: &'a str,
    pub(super) migratable: bool,
    pub(super) mark: Option<&'a str>,
    pub(super) vmi_name: String,
    pub(super) strategy_read: String,
    pub(super) condition_read: String,
}

impl<'a> Reading<'a> {
    pub(super) fn of(vmi: &'a Value, objects: &Objects<'a>) -> Reading<'a> {
        let own = vmi.text_at("/spec/evictionStrategy");
        let cluster = objects
            .kubevirt
            .and_then(|cr| cr.text_at("/spec/configuration/evictionStrategy"));
        let (strategy, source) = match (own, cluster) {
            (Some(own), _) => (own, "the VMI's spec.evictionStrategy"),
            (None, Some(cluster)) => (
                cluster,
                "the KubeVirt CR's spec.configuration.evictionStrategy",
            ),
            (None, None) => ("None", "KubeVirt's default"),
        };
        let condition = live_migratable(vmi);
        let migratable = condition.is_some_and(|(status, _)| status == "True");
        let mark = vmi
            .text_at("/status/evacuationNodeName")
            .filter(|m| !m.is_empty());
        let vmi_name = named("VirtualMachineInstance", vmi);
        let strategy_read = format!("{vmi_name} eviction strategy {strategy} ({source})");
        let condition_read = match condition {
            Some((status, reason)) => format!(
                "{vmi_name} status.conditions[LiveMigratable]={status}{}",
                reason.map(|r| format!("/{r}")).unwrap_or_default()
            ),
            None => format!("{vmi_name} no LiveMigratable condition"),
        };
        Reading {
            strategy,
            migratable,
            mark,
            vmi_name,
            strategy_read,
            condition_read,
        }
    }
}

/// The VMI's `LiveMigratable` condition: its status and reason.
fn live_migratable(vmi: &Value) -> Option<(&str, Option<&str>)> {
    let condition = live_migratable_condition(vmi)?;
    Some((condition.text_at("/status")?, condition.text_at("/reason")))
}

fn live_migratable_condition(vmi: &Value) -> Option<&Value> {
    vmi.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c.text_at("/type") == Some("LiveMigratable"))
}

/// Since when the VMI has been as its `LiveMigratable` condition says.
pub(super) fn condition_since(vmi: &Value) -> Option<&str> {
    live_migratable_condition(vmi)?.text_at("/lastTransitionTime")
}
