//! L3–L8: what KubeVirt does with each change of a running VM's template, and the message that
//! says so. KubeVirt v1.9.0: VC = `pkg/virt-controller/watch/vm/vm.go`, WU =
//! `pkg/virt-controller/watch/workload-updater/workload-updater.go`, PE =
//! `pkg/virt-api/webhooks/validating-webhook/admitters/pod-eviction-admitter.go`, MM =
//! `pkg/liveupdate/memory/memory.go` (the same logic from v1.6.0 on, docs/rules.md).

use super::changes::Change;

/// What the rules know of the running VM and its cluster (read by the `facts` module).
pub(super) struct Facts {
    /// `vmRolloutStrategy` is `LiveUpdate` (or unset).
    pub(super) live_update: bool,
    /// The VM's `status.conditions` hold `RestartRequired` already.
    pub(super) restart_required: bool,
    /// Whether the VMI can live-migrate; else why not.
    pub(super) migratable: Result<(), String>,
    /// The VMI's eviction strategy (`None` when nothing sets one).
    pub(super) strategy: String,
    /// `workloadUpdateMethods` holds `LiveMigrate`, `Evict`.
    pub(super) live_migrate: bool,
    pub(super) evict: bool,
    /// What an eviction without migration leaves of the VM: `it restarts`, `it may stay off`,
    /// `it stays off`, and the runStrategy that decides it.
    pub(super) fate: (&'static str, String),
    pub(super) limits: Limits,
}

/// The hotplug limits of the running VMI.
pub(super) struct Limits {
    /// The template's own `domain.cpu.maxSockets` (KubeVirt's webhook refuses more sockets).
    pub(super) template_max_sockets: Option<u64>,
    /// The VMI's `maxSockets` (0: none, the VMI started without CPU hotplug).
    pub(super) max_sockets: u64,
    /// The VMI's `maxGuest` in bytes (`None`: none, the VMI started without memory hotplug).
    pub(super) max_guest: Option<u64>,
    /// `status.memory.guestAtBoot` in bytes.
    pub(super) guest_at_boot: Option<u64>,
    /// `architecture` of the new template (KubeVirt defaults it to `amd64`).
    pub(super) architecture: String,
    /// `domain.launchSecurity` is set.
    pub(super) encrypted: bool,
}

/// A message, and whether `liveUpdates: reject` refuses the update for it.
#[derive(Debug, PartialEq)]
pub(super) struct Finding {
    pub(super) message: String,
    pub(super) refusable: bool,
}

fn warning(message: String) -> Finding {
    Finding {
        message,
        refusable: false,
    }
}

fn refusable(message: String) -> Finding {
    Finding {
        message,
        refusable: true,
    }
}

const SPEC: &str = "spec.template.spec";
const AFTER_RESTART: &str = "it takes effect when the VM restarts";

/// L2 `RestartRequired`, with KubeVirt's own words.
fn restart(field: &str, why: &str) -> Finding {
    warning(format!(
        "{field}: KubeVirt sets RestartRequired on the running VM ({why}); {AFTER_RESTART}"
    ))
}

/// The findings of every change, non-live ones first.
pub(super) fn judge(changes: &[Change], facts: &Facts) -> Vec<Finding> {
    let non_live: Vec<String> = changes
        .iter()
        .filter_map(|c| match c {
            Change::NonLive(paths) => Some(paths.iter().map(|p| format!("{SPEC}.{p}"))),
            _ => None,
        })
        .flatten()
        .collect();
    let mut findings = Vec::new();
    if !non_live.is_empty() {
        // L2: VC:3050-3053.
        findings.push(restart(
            &non_live.join(", "),
            "a non-live-updatable field was changed in the template spec",
        ));
    }
    let held = match (non_live.is_empty(), facts.restart_required) {
        (false, _) => Some(format!("set by {} in this update", non_live.join(", "))),
        (true, true) => Some("already set on the VM".to_owned()),
        (true, false) => None,
    };
    for change in changes {
        findings.extend(one(change, facts, held.as_deref()));
    }
    findings
}

/// The finding of one live-updatable change, if it has one that matters.
fn one(change: &Change, facts: &Facts, held: Option<&str>) -> Option<Finding> {
    let field = field(change);
    // L3: VC:3351, only the live updates behind the rollout gate.
    let gated = !matches!(
        change,
        Change::VolumeHotplug(_)
            | Change::Nic { .. }
            | Change::NetworkAttachment { .. }
            | Change::NonLive(_)
    );
    if gated && !facts.live_update {
        return Some(match change {
            Change::VolumeMigration { .. } => refusable(format!(
                "{field} is not applied until the VM restarts: under vmRolloutStrategy Stage KubeVirt stages the volume migration without RestartRequired"
            )),
            _ => restart(&field, "vmRolloutStrategy Stage"),
        });
    }
    if let Some(why) = held.filter(|_| gated) {
        return Some(warning(format!(
            "{field} is not applied until the VM restarts: KubeVirt holds back live updates while RestartRequired is {why}"
        )));
    }
    match change {
        Change::Sockets { from, to } => sockets(&field, *from, *to, facts),
        Change::Memory { from, to } => memory(&field, from, to, facts),
        Change::VolumeMigration { .. } => Some(migration(&field, "VolumesChange", true, facts)),
        Change::Nic {
            migration: true, ..
        }
        | Change::NetworkAttachment { .. } => {
            Some(migration(&field, "MigrationRequired", false, facts))
        }
        // L7: applied without a migration.
        _ => None,
    }
}

/// The field and the change, as a message names them.
fn field(change: &Change) -> String {
    match change {
        Change::Sockets { from, to } => format!("{SPEC}.domain.cpu.sockets ({from} → {to})"),
        Change::Memory { from, to } => format!("{SPEC}.domain.memory.guest ({from} → {to})"),
        Change::Scheduling(name) => format!("{SPEC}.{name}"),
        Change::VolumeHotplug(name) => format!("{SPEC}.volumes[{name}] (hotplugged)"),
        Change::VolumeMigration { volume, from, to } => {
            format!("{SPEC}.volumes[{volume}] (claim {from} → {to})")
        }
        Change::Nic { name, what, .. } => {
            format!("{SPEC}.domain.devices.interfaces[{name}] ({what})")
        }
        Change::NetworkAttachment { name, from, to } => {
            format!("{SPEC}.networks[{name}].multus.networkName ({from} → {to})")
        }
        Change::NonLive(paths) => paths.join(", "),
    }
}

/// L5, `handleCPUChangeRequest` (VC:622-673): no migratability check.
fn sockets(field: &str, from: u64, to: u64, facts: &Facts) -> Option<Finding> {
    let limits = &facts.limits;
    if let Some(max) = limits.template_max_sockets.filter(|max| to > *max) {
        return Some(warning(format!(
            "{field}: KubeVirt's webhook rejects the update: more sockets than {SPEC}.domain.cpu.maxSockets ({max})"
        )));
    }
    let why = if to > limits.max_sockets {
        "CPU sockets updated in template spec to a value higher than what's available"
    } else if to < from {
        "Reduction of CPU socket count requires a restart"
    } else if limits.architecture == "arm64" {
        "ARM doesn't support CPU hotplug"
    } else {
        return Some(migration(field, "HotVCPUChange", false, facts));
    };
    Some(restart(field, why))
}

/// The 2 MiB block memory hotplug adds (MM `HotplugBlockAlignmentBytes`).
const BLOCK: u64 = 2 << 20;

/// L6, `handleMemoryHotplugRequest` (VC:3450-3558) and `ValidateLiveUpdateMemory` (MM:53-107).
fn memory(field: &str, _from: &str, to: &str, facts: &Facts) -> Option<Finding> {
    let limits = &facts.limits;
    let to = super::quantity::bytes(to)?;
    let why = if facts.migratable.is_err() {
        "memory updated in template spec. Memory-hotplug is only available for migratable VMs"
            .to_owned()
    } else if let Some(max) = limits.max_guest {
        let unsupported = if limits.encrypted {
            Some("Memory hotplug is not compatible with encrypted VMs")
        } else if to > max {
            Some("Guest memory is greater than the configured maxGuest memory")
        } else if to % BLOCK != 0 {
            Some("Guest memory must be 2Mi aligned")
        } else if limits.architecture != "amd64" {
            Some("Memory hotplug is only available for x86_64 VMs")
        } else if to < 1 << 30 {
            Some("Memory hotplug is only available for VMs with at least 1Gi of guest memory")
        } else {
            None
        };
        match (unsupported, limits.guest_at_boot) {
            (Some(why), _) => format!("memory hotplug not supported, {why}"),
            (None, Some(boot)) if to < boot => {
                "memory updated in template spec to a value lower than what the VM started with"
                    .to_owned()
            }
            (None, _) => return Some(migration(field, "HotMemoryChange", false, facts)),
        }
    } else {
        "memory updated in template spec. Memory-hotplug is not available for this VM configuration"
            .to_owned()
    };
    Some(restart(field, &why))
}

/// L8: a change the guest gets only through a migration (`condition` on the VMI), as the workload
/// updater handles it (WU:416-425, 508-550) and the eviction webhook answers it (PE:138-162). A
/// volume migration is migrated whatever `LiveMigratable` says (WU:416-421).
fn migration(field: &str, condition: &str, volume: bool, facts: &Facts) -> Finding {
    let migratable = facts.migratable.as_ref().err();
    let strategy = facts.strategy.as_str();
    if facts.live_migrate && (migratable.is_none() || volume) {
        return warning(format!(
            "{field}: applied by a live migration of the running VM ({condition}; workloadUpdateMethods has LiveMigrate)"
        ));
    }
    let cannot = |why: &str| format!("it needs a live migration, which the VM cannot make ({why})");
    if !facts.evict {
        return refusable(match migratable {
            Some(why) => format!(
                "{field} is not applied until the VM restarts: {} and workloadUpdateMethods has no Evict",
                cannot(why)
            ),
            None => format!(
                "{field} is not applied until the VM restarts or is migrated (virtctl migrate): it needs a live migration ({condition}) and workloadUpdateMethods has neither LiveMigrate nor Evict"
            ),
        });
    }
    match (strategy, migratable) {
        ("LiveMigrate", Some(why)) => refusable(format!(
            "{field} is never applied while the VM runs: {}, and eviction strategy LiveMigrate refuses every eviction of the workload updater (429), which retries forever",
            cannot(why)
        )),
        ("LiveMigrate" | "LiveMigrateIfPossible", None) => warning(format!(
            "{field}: applied by a live migration of the running VM ({condition}; the workload updater's eviction starts one under eviction strategy {strategy})"
        )),
        ("External", _) => refusable(format!(
            "{field} is not applied until an external controller moves or stops the VM: eviction strategy External only marks it for evacuation (429)"
        )),
        (_, why) => {
            let (fate, run_strategy) = &facts.fate;
            let needs = match why {
                Some(why) => cannot(why),
                None => format!("it needs a live migration ({condition})"),
            };
            refusable(format!(
                "{field}: {needs}: the workload updater evicts the VM (eviction strategy {strategy}), {fate} ({run_strategy})"
            ))
        }
    }
}
