//! The KubeVirt eviction strategy rules of a VM (docs/rules.md): M3 and V7's `fix` (mutation), V6
//! and V7 (validation).

use serde_json::Value;

use crate::allowed::{Allowance, allowance};
use crate::json::{Object, show};
use crate::migratability::{Findings, non_migratable_reasons};
use crate::review::Review;
use crate::settings::NonMigratable;
use crate::strategy::{LIVE_MIGRATE, LIVE_MIGRATE_IF_POSSIBLE};
use crate::verdict::Verdict;
use crate::vm;

const FIELD: &str = "spec.template.spec.evictionStrategy";

/// The mutation step: M3, then V7's `fix`. Both act only on a VM that sets no strategy of its own
/// in the request, so `fix` still applies after M3 set a `LiveMigrate` default.
pub(crate) fn mutate(vm: &mut Object, review: &Review, verdict: &mut Verdict) {
    if vm::eviction_strategy(vm).is_some() {
        return;
    }
    let settings = &review.settings.eviction_strategy;
    // M3: the configured default, only where `spec.template.spec` exists.
    if let Some(default) = &settings.default {
        vm::set_eviction_strategy(vm, default);
    }
    // V7 `fix`: LiveMigrateIfPossible instead of a LiveMigrate under which the VM blocks drains.
    if settings.non_migratable != NonMigratable::Fix || effective(vm, review) != Some(LIVE_MIGRATE)
    {
        return;
    }
    let findings = non_migratable_reasons(vm);
    if findings.reasons.is_empty() || !vm::set_eviction_strategy(vm, LIVE_MIGRATE_IF_POSSIBLE) {
        return;
    }
    let reasons = findings.reasons.join(", ");
    findings.warnings.into_iter().for_each(|w| verdict.warn(w));
    verdict.warn(format!(
        "{FIELD}: set to {LIVE_MIGRATE_IF_POSSIBLE}, not migratable ({reasons})"
    ));
}

/// The validation step, on the (mutated) object: V6, then V7.
pub(crate) fn validate(vm: &Object, review: &Review, verdict: &mut Verdict) {
    if let Some(value) = vm::eviction_strategy(vm) {
        supported_value(value, review, verdict);
    }
    let mode = review.settings.eviction_strategy.non_migratable;
    if mode != NonMigratable::Ignore && effective(vm, review) == Some(LIVE_MIGRATE) {
        non_migratable(non_migratable_reasons(vm), mode, verdict);
    }
}

/// The strategy KubeVirt applies: the VM's own, else the cluster's (`evictionStrategy.clusterDefault`).
fn effective<'a>(vm: &'a Object, review: &'a Review) -> Option<&'a str> {
    match vm::eviction_strategy(vm) {
        Some(value) => value.as_str(),
        None => review.settings.eviction_strategy.cluster_default.as_deref(),
    }
}

/// V6: the VM's strategy must be allowed, unless an UPDATE keeps it unchanged.
fn supported_value(value: &Value, review: &Review, verdict: &mut Verdict) {
    let allowed = &review.settings.eviction_strategy.allowed;
    let shown = show(Some(value));
    match allowance(value, allowed, || review.old_eviction_strategy()) {
        Allowance::Allowed => {}
        Allowance::Kept => verdict.warn(format!("{FIELD}: kept unsupported value \"{shown}\"")),
        Allowance::Refused => verdict.reject(format!(
            "{FIELD}: unsupported value \"{shown}\" (valid: {})",
            allowed.join(", ")
        )),
    }
}

/// V7: under `LiveMigrate`, a VM that cannot live-migrate blocks every drain. `fix` has already
/// acted in the mutation step where it could; what is left of it is a rejection.
fn non_migratable(findings: Findings, mode: NonMigratable, verdict: &mut Verdict) {
    findings.warnings.into_iter().for_each(|w| verdict.warn(w));
    if findings.reasons.is_empty() {
        return;
    }
    let reasons = findings.reasons.join(", ");
    match mode {
        NonMigratable::Ignore => {}
        NonMigratable::Warn => verdict.warn(format!(
            "{FIELD}: LiveMigrate blocks drains, not migratable ({reasons})"
        )),
        NonMigratable::Reject | NonMigratable::Fix => verdict.reject(format!(
            "{FIELD}: VM cannot live-migrate ({reasons}) and would block node drains with LiveMigrate; use LiveMigrateIfPossible or None"
        )),
    }
}
