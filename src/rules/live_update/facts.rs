//! What decides the fate of a live update, read once per request (docs/rules.md, "Live updates",
//! inputs): the cluster's configuration and workload update methods (the settings' copies, else
//! the KubeVirt CR), the running VMI (its eviction strategy, migratability and hotplug limits,
//! read only when a change needs them), else what the old object and V7 say.

use super::changes::Change;
use super::json::{self, number, text};
use super::outcome::{Facts, Limits};
use super::quantity::bytes;
use super::text::Text;
use crate::admission::review::Review;
use crate::cluster::CrFallback;
use crate::configuration::{Configuration, Rules, WorkloadUpdateStrategy};
use crate::object::view::Scalar;
use crate::object::vm::{self, Vm};
use crate::rules::eviction;

/// The cluster as the settings, else the KubeVirt CR, give it.
pub(super) struct Cluster {
    pub(super) configuration: Configuration,
    pub(super) rules: Rules,
    pub(super) methods: Vec<String>,
}

impl Cluster {
    /// `kubevirt.configuration`, `kubevirt.workloadUpdateStrategy` and `kubevirt.version`, each
    /// else the CR's (read when lookups are on and a setting is missing), else KubeVirt's
    /// defaults (`LiveUpdate`, no update method) and the newest rules.
    pub(super) fn read(review: &Review) -> Cluster {
        let kubevirt = &review.settings.kubevirt;
        let complete = kubevirt.configuration.is_some()
            && kubevirt.workload_update_strategy.is_some()
            && kubevirt.version.is_some();
        let cr = (review.settings.cluster_lookups && !complete)
            .then(|| review.cluster.kubevirt(CrFallback::AsNone))
            .flatten();
        let (configuration, rules) = kubevirt.or_cr(cr);
        let rules = rules.unwrap_or(Rules::V1_9);
        let strategy: Option<&WorkloadUpdateStrategy> = kubevirt
            .workload_update_strategy
            .as_ref()
            .or_else(|| cr.map(|cr| &cr.workload_update_strategy));
        Cluster {
            configuration,
            rules,
            methods: strategy
                .and_then(|s| s.workload_update_methods.clone())
                .unwrap_or_default(),
        }
    }
}

/// Whether a change's fate depends on the running VMI.
fn needs_vmi(change: &Change) -> bool {
    !matches!(
        change,
        Change::Scheduling(_) | Change::VolumeHotplug(_) | Change::NonLive(_)
    )
}

/// The facts of one request.
pub(super) fn of(
    old: &Vm,
    old_spec: &Scalar,
    new_spec: &Scalar,
    new: &Text,
    changes: &[Change],
    cluster: &Cluster,
    review: &Review,
) -> Facts {
    let vmi = read_vmi(old, new, changes, review);
    let vmi = vmi.as_ref();
    let settings = &review.settings.eviction_strategy;
    let strategy = vmi
        .and_then(|v| text(v, &["spec", "evictionStrategy"]))
        .map(str::to_owned)
        .or_else(|| {
            old.eviction_strategy()
                .and_then(Scalar::as_str)
                .map(str::to_owned)
        })
        .or_else(|| settings.cluster_default.clone())
        .or_else(|| cluster.configuration.eviction_strategy.clone())
        .unwrap_or_else(|| "None".to_owned());
    let restart_required = old
        .condition("RestartRequired")
        .is_some_and(|c| c.status.as_ref().and_then(Scalar::as_str) != Some("False"));
    Facts {
        live_update: cluster.configuration.live_update(),
        restart_required,
        migratable: migratable(old, vmi, review),
        strategy,
        live_migrate: cluster.methods.iter().any(|m| m == "LiveMigrate"),
        evict: cluster.methods.iter().any(|m| m == "Evict"),
        fate: fate(new.run_strategy()),
        limits: limits(old_spec, new_spec, vmi, &cluster.configuration),
    }
}

/// The running VMI, when lookups are on and a change needs it.
fn read_vmi<'r>(
    old: &Vm,
    new: &Text,
    changes: &[Change],
    review: &'r Review,
) -> Option<Scalar<'r>> {
    if !review.settings.cluster_lookups || !changes.iter().any(needs_vmi) {
        return None;
    }
    let namespace = review.namespace.or(old.namespace())?;
    let name = new.name()?;
    let text = review.cluster.vmi(namespace, &name)?;
    serde_json::from_str(text).ok()
}

/// L8's migratability: the VM's `LiveMigratable` condition (KubeVirt mirrors the VMI's, VC
/// `syncConditions`), else the VMI's, else V7's reasons on the old object.
fn migratable(old: &Vm, vmi: Option<&Scalar>, review: &Review) -> Result<(), String> {
    let condition = old.condition("LiveMigratable").map(|c| {
        let text = |s: &Option<Scalar>| {
            s.as_ref()
                .and_then(Scalar::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        (text(&c.status), text(&c.reason))
    });
    let condition = condition.or_else(|| {
        let c = json::items(vmi?, &["status", "conditions"])
            .iter()
            .find(|c| text(c, &["type"]) == Some("LiveMigratable"))?;
        let field = |k: &str| text(c, &[k]).unwrap_or_default().to_owned();
        Some((field("status"), field("reason")))
    });
    match condition {
        Some((status, _)) if status == "True" => Ok(()),
        Some((status, reason)) if status == "False" => {
            Err(format!("LiveMigratable False: {reason}"))
        }
        _ => {
            let old_text = review.old_text();
            let whole = old_text.and_then(|t| vm::parse_whole(t).ok());
            let Some(whole) = whole.as_ref().and_then(Vm::whole) else {
                return Ok(());
            };
            let findings = eviction::reasons(whole, review);
            match findings.reasons.is_empty() {
                true => Ok(()),
                false => Err(crate::reason::join(&findings.reasons, "; ")),
            }
        }
    }
}

/// R1–R7: what an eviction without migration leaves of the VM, by the runStrategy of the new
/// object (`spec.runStrategy`, else `spec.running`; both set: KubeVirt starts nothing).
fn fate((run_strategy, running): (Option<Scalar>, Option<Scalar>)) -> (&'static str, String) {
    let value = match (&run_strategy, &running) {
        (Some(_), Some(_)) => {
            return (
                "it stays off",
                "spec.running and spec.runStrategy are both set".to_owned(),
            );
        }
        (Some(Scalar::Str(s)), None) => s.as_ref(),
        (None, Some(Scalar::Bool(true))) => {
            return ("it restarts", "spec.running: true".to_owned());
        }
        (None, Some(Scalar::Bool(false))) => {
            return ("it stays off", "spec.running: false".to_owned());
        }
        (None, None) => "Halted",
        (Some(other), None) | (None, Some(other)) => {
            return ("it stays off", format!("runStrategy {}", other.json()));
        }
    };
    let words = match value {
        "Always" => "it restarts",
        "RerunOnFailure" => "it may stay off",
        _ => "it stays off",
    };
    let after = match value {
        "RerunOnFailure" => {
            ": off after a clean guest shutdown, started again only if the VMI fails"
        }
        _ => "",
    };
    (words, format!("runStrategy {value}{after}"))
}

/// The VMI's hotplug limits: its own when it was read, else as KubeVirt computes them when it
/// starts a VMI (`pkg/defaults/defaults.go` 92-135) from the old template and the configuration.
fn limits(old: &Scalar, new: &Scalar, vmi: Option<&Scalar>, config: &Configuration) -> Limits {
    let quantity = |v: &Scalar, p: &[&str]| text(v, p).and_then(bytes);
    let live = config.live_update_configuration.clone().unwrap_or_default();
    let ratio = config.max_hotplug_ratio();
    let sockets = number(old, &["domain", "cpu", "sockets"]).unwrap_or(1);
    // Saturating: no count in a request may overflow (and trap) the module.
    let per_socket = number(old, &["domain", "cpu", "cores"])
        .unwrap_or(1)
        .saturating_mul(number(old, &["domain", "cpu", "threads"]).unwrap_or(1));
    let computed_sockets = number(old, &["domain", "cpu", "maxSockets"])
        .or_else(|| {
            live.max_cpu_sockets
                .filter(|m| *m > 0)
                .map(|m| m.max(sockets))
        })
        .unwrap_or_else(|| {
            (sockets.saturating_mul(ratio)).min((512 / per_socket.max(1)).max(sockets))
        });
    let guest = quantity(old, &["domain", "memory", "guest"]);
    let computed_guest = quantity(old, &["domain", "memory", "maxGuest"])
        .or_else(|| live.max_guest.as_deref().and_then(bytes))
        .or_else(|| guest.map(|g| g.saturating_mul(ratio)));
    let (max_sockets, max_guest, guest_at_boot) = match vmi {
        Some(vmi) => (
            number(vmi, &["spec", "domain", "cpu", "maxSockets"]).unwrap_or(0),
            quantity(vmi, &["spec", "domain", "memory", "maxGuest"]),
            quantity(vmi, &["status", "memory", "guestAtBoot"]).or(guest),
        ),
        None => (computed_sockets, computed_guest, guest),
    };
    Limits {
        template_max_sockets: number(new, &["domain", "cpu", "maxSockets"]),
        max_sockets,
        max_guest,
        guest_at_boot,
        architecture: text(new, &["architecture"]).unwrap_or("amd64").to_owned(),
        encrypted: json::at(new, &["domain", "launchSecurity"]).is_some_and(|s| *s != Scalar::Null),
    }
}
