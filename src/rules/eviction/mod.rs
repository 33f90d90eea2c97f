//! The KubeVirt eviction strategy rules of a VM (docs/rules.md): M3 and V7's `fix` (mutation), V6
//! and V7 (validation) here; what they read of the VM, the settings and the cluster, in the
//! lookups' order, in [`lookups`]; and [`assess`], the same reading of a VM for the tools.

mod assessment;
mod lookups;

pub use assessment::{Assessment, assess};
pub use lookups::StrategySource;
use lookups::{FIELD, effective_without_lookup, findings};

use std::borrow::Cow;

use crate::admission::review::Review;
use crate::admission::verdict::Verdict;
use crate::cluster::CrFallback;
use crate::configuration::Rules;
use crate::listing::listed;
use crate::object::view::{Scalar, shown};
use crate::object::vm::{Vm, Whole};
use crate::reason;
use crate::rules::allowed::{Allowance, allowance};
use crate::rules::migratability::{
    Context, Findings, external_claims, names_instancetype, needs, reasons_of,
};
use crate::rules::vmi::{self, Sources};
use crate::settings::{NonMigratable, Settings};
use crate::strategy::{LIVE_MIGRATE, LIVE_MIGRATE_IF_POSSIBLE};

/// The mutation step: M3, then V7's `fix`. Both act only on a VM that sets no strategy of its own
/// in the request, so `fix` still applies after M3 set a `LiveMigrate` default.
pub(crate) fn mutate(vm: &mut Vm, review: &Review, verdict: &mut Verdict) {
    if vm.eviction_strategy().is_some() {
        return;
    }
    let settings = &review.settings.eviction_strategy;
    // M3: the configured default, only where `spec.template.spec` exists.
    if let Some(default) = &settings.default {
        vm.set_eviction_strategy(default);
    }
    if settings.non_migratable != NonMigratable::Fix {
        return;
    }
    // V7 `fix`: LiveMigrateIfPossible instead of a LiveMigrate under which the VM blocks drains.
    let Some(findings) = blocking(vm, review) else {
        return;
    };
    if findings.reasons.is_empty() || !vm.set_eviction_strategy(LIVE_MIGRATE_IF_POSSIBLE) {
        return;
    }
    let reasons = reason::join(&findings.reasons, "; ");
    findings.warnings.into_iter().for_each(|w| verdict.warn(w));
    verdict.warn(format!(
        "{FIELD}: set to {LIVE_MIGRATE_IF_POSSIBLE}, not migratable ({reasons})"
    ));
}

/// The validation step, on the (mutated) object: V6, then V7.
pub(crate) fn validate(vm: &Vm, review: &Review, verdict: &mut Verdict) {
    if let Some(value) = vm.eviction_strategy() {
        supported_value(value, review, verdict);
    }
    if let Some(findings) = blocking(vm, review) {
        non_migratable(
            findings,
            review.settings.eviction_strategy.non_migratable,
            verdict,
        );
    }
}

/// What keeps `vm` from migrating, as V7 computes it with its lookups (the live-update rules ask
/// it of the old object of an UPDATE when the VM's status does not say).
pub(crate) fn reasons(vm: Whole, review: &Review) -> Findings {
    findings(vm, review)
}

/// Whether V7 (or its `fix`) may read the VM's devices, volumes and networks
/// ([`Vm::load_later`]): not when `nonMigratable` is `ignore`, nor when the VM sets a strategy of
/// its own other than `LiveMigrate`, which no mutation changes.
pub(crate) fn reads_devices(vm: &Vm, settings: &Settings) -> bool {
    settings.eviction_strategy.non_migratable != NonMigratable::Ignore
        && crate::object::vm::v7_may_apply(vm.eviction_strategy())
}

/// V7's question, with the cluster read only where its answer can change the outcome: `Some`
/// with what keeps the VM from migrating when V7 applies (`nonMigratable` is not `ignore` and the
/// effective strategy is `LiveMigrate`), `None` otherwise.
fn blocking(vm: &Vm, review: &Review) -> Option<Findings> {
    let settings = review.settings;
    if settings.eviction_strategy.non_migratable == NonMigratable::Ignore {
        return None;
    }
    // Read when V7 may apply ([`reads_devices`]).
    let whole = vm.whole();
    let strategy = match effective_without_lookup(vm, settings) {
        Some((strategy, _)) => strategy,
        None if !settings.cluster_lookups => return None,
        // Only a VM that could block a drain is worth the KubeVirt CR.
        None if whole.is_some_and(|vm| !could_block(vm, settings)) => return None,
        None => Cow::Owned(
            review
                .cluster
                .kubevirt(CrFallback::AsNone)?
                .configuration
                .eviction_strategy
                .clone()?,
        ),
    };
    if strategy != LIVE_MIGRATE {
        return None;
    }
    Some(match whole {
        Some(vm) => findings(vm, review),
        None => Findings {
            warnings: vec![format!(
                "{FIELD}: the VM's devices were not read; not checked"
            )],
            ..Findings::default()
        },
    })
}

/// Whether a VM may have a reason at all: one its spec shows under the configuration the settings
/// give, one that depends on the cluster's configuration or release, a claim or an instancetype
/// or preference to read.
fn could_block(vm: Whole, settings: &Settings) -> bool {
    let kubevirt = &settings.kubevirt;
    let config = kubevirt.configuration.clone().unwrap_or_default();
    let rules = kubevirt.rules().unwrap_or(Rules::V1_9);
    let vmi = vmi::expand(vm, Sources::default(), &config, rules);
    let context = Context {
        vm,
        config: &config,
        rules,
        external_claim: &|_| None,
    };
    let need = needs(&vmi, kubevirt.rules());
    !reasons_of(&vmi, &context).reasons.is_empty()
        || need.configuration
        || need.version
        || !external_claims(vm).is_empty()
        || names_instancetype(&vm)
}

/// V6: the VM's strategy must be allowed, unless an UPDATE keeps it unchanged.
fn supported_value(value: &Scalar, review: &Review, verdict: &mut Verdict) {
    let allowed = &review.settings.eviction_strategy.allowed;
    let shown = shown(Some(value));
    match allowance(value, allowed, || review.old_eviction_strategy()) {
        Allowance::Allowed => {}
        Allowance::Kept => verdict.warn(format!("{FIELD}: kept unsupported value \"{shown}\"")),
        Allowance::Refused => verdict.reject(format!(
            "{FIELD}: unsupported value \"{shown}\" (valid: {})",
            listed(allowed, ", ")
        )),
    }
}

/// V7: under `LiveMigrate`, a VM that cannot live-migrate blocks every drain. `fix` has already
/// acted in the mutation step where it could; what is left of it is a rejection.
fn non_migratable(findings: Findings, mode: NonMigratable, verdict: &mut Verdict) {
    findings.warnings.into_iter().for_each(|w| verdict.warn(w));
    if mode == NonMigratable::Ignore {
        return;
    }
    if !findings.reasons.is_empty() {
        let reasons = reason::join(&findings.reasons, "; ");
        match mode {
            NonMigratable::Warn => verdict.warn(format!(
                "{FIELD}: LiveMigrate blocks drains, not migratable ({reasons})"
            )),
            _ => verdict.reject(format!(
                "{FIELD}: VM cannot live-migrate ({reasons}) and would block node drains with LiveMigrate; use LiveMigrateIfPossible or None"
            )),
        }
    }
    // Node-dependent reasons: a warning each, whatever the mode.
    for reason in &findings.node {
        verdict.warn(format!("{FIELD}: may block drains ({reason})"));
    }
}
