//! The KubeVirt eviction strategy rules of a VM: M3 (mutation), V6 and V7 (validation).

use serde_json::Value;

use crate::migratability::non_migratable_reasons;
use crate::review::Review;
use crate::settings::NonMigratable;
use crate::strategy::{LIVE_MIGRATE, LIVE_MIGRATE_IF_POSSIBLE, is_listed};
use crate::verdict::Verdict;
use crate::vm::{self, Object, show};

const FIELD: &str = "spec.template.spec.evictionStrategy";

/// M3: `evictionStrategy.default` on a VM that sets none (only when `spec.template.spec` exists).
pub fn default_strategy(vm: &mut Object, default: &str) -> bool {
    if vm::eviction_strategy(vm).is_some() {
        return false;
    }
    set_strategy(vm, default)
}

fn set_strategy(vm: &mut Object, value: &str) -> bool {
    vm::template_spec_mut(vm).is_some_and(|spec| {
        spec.insert(
            "evictionStrategy".to_owned(),
            Value::String(value.to_owned()),
        );
        true
    })
}

/// V6 and V7 on the mutated object. `had_own`: whether the request's VM set its own strategy
/// (before M3). Returns whether V7's `fix` changed the object.
pub fn validate(vm: &mut Object, had_own: bool, review: &Review, verdict: &mut Verdict) -> bool {
    let own = vm::eviction_strategy(vm);
    if let Some(value) = own {
        supported_value(value, review, verdict);
    }
    let settings = &review.settings.eviction_strategy;
    let effective = match own {
        Some(value) => value.as_str(),
        None => settings.cluster_default.as_deref(),
    };
    if effective != Some(LIVE_MIGRATE) || settings.non_migratable == NonMigratable::Ignore {
        return false;
    }
    non_migratable(vm, had_own, settings.non_migratable, verdict)
}

/// V6: the VM's strategy must be allowed, unless an UPDATE keeps it unchanged.
fn supported_value(value: &Value, review: &Review, verdict: &mut Verdict) {
    let allowed = &review.settings.eviction_strategy.allowed;
    if is_listed(value, allowed) {
        return;
    }
    let shown = show(Some(value));
    let kept = review
        .old()
        .is_some_and(|old| vm::eviction_strategy(old) == Some(value));
    if kept {
        verdict.warn(format!("{FIELD}: kept unsupported value \"{shown}\""));
    } else {
        verdict.reject(format!(
            "{FIELD}: unsupported value \"{shown}\" (valid: {})",
            allowed.join(", ")
        ));
    }
}

/// V7: under `LiveMigrate`, a VM that cannot live-migrate blocks every drain.
fn non_migratable(
    vm: &mut Object,
    had_own: bool,
    mode: NonMigratable,
    verdict: &mut Verdict,
) -> bool {
    let findings = non_migratable_reasons(vm);
    findings.warnings.into_iter().for_each(|w| verdict.warn(w));
    if findings.reasons.is_empty() {
        return false;
    }
    let reasons = findings.reasons.join(", ");
    match mode {
        NonMigratable::Ignore => false,
        NonMigratable::Warn => {
            verdict.warn(format!(
                "{FIELD}: LiveMigrate blocks drains, not migratable ({reasons})"
            ));
            false
        }
        NonMigratable::Fix if !had_own && set_strategy(vm, LIVE_MIGRATE_IF_POSSIBLE) => {
            verdict.warn(format!(
                "{FIELD}: set to {LIVE_MIGRATE_IF_POSSIBLE}, not migratable ({reasons})"
            ));
            true
        }
        NonMigratable::Reject | NonMigratable::Fix => {
            verdict.reject(format!(
                "{FIELD}: VM cannot live-migrate ({reasons}) and would block node drains with LiveMigrate; use LiveMigrateIfPossible or None"
            ));
            false
        }
    }
}
