//! The KubeVirt eviction strategy rules of a VM (docs/rules.md): M3 and V7's `fix` (mutation), V6
//! and V7 (validation), and [`assess`], the same reading of a VM for the tools.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::allowed::{Allowance, allowance};
use crate::cluster::Cluster;
use crate::json::{Object, show};
use crate::migratability::{Findings, claim_reason, external_claims, non_migratable_reasons};
use crate::request::Operation;
use crate::review::Review;
use crate::settings::{NonMigratable, Settings};
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
    if settings.non_migratable != NonMigratable::Fix {
        return;
    }
    // V7 `fix`: LiveMigrateIfPossible instead of a LiveMigrate under which the VM blocks drains.
    let Some(findings) = blocking(vm, review) else {
        return;
    };
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
    if let Some(findings) = blocking(vm, review) {
        non_migratable(
            findings,
            review.settings.eviction_strategy.non_migratable,
            verdict,
        );
    }
}

/// V7's question, with the cluster read only where its answer can change the outcome: `Some`
/// with what keeps the VM from migrating when V7 applies (`nonMigratable` is not `ignore` and the
/// effective strategy is `LiveMigrate`), `None` otherwise.
fn blocking(vm: &Object, review: &Review) -> Option<Findings> {
    let settings = review.settings;
    if settings.eviction_strategy.non_migratable == NonMigratable::Ignore {
        return None;
    }
    let mut found = None;
    let strategy = match effective_without_lookup(vm, settings) {
        Some((strategy, _)) => strategy,
        None if !settings.cluster_lookups => return None,
        None => {
            // Only a VM that could block a drain is worth the KubeVirt CR.
            let findings = non_migratable_reasons(vm);
            if findings.reasons.is_empty() && external_claims(vm).is_empty() {
                return None;
            }
            found = Some(findings);
            Cow::Owned(review.cluster.kubevirt_eviction_strategy()?)
        }
    };
    if strategy != LIVE_MIGRATE {
        return None;
    }
    let mut findings = found.unwrap_or_else(|| non_migratable_reasons(vm));
    if settings.cluster_lookups {
        claims_from_cluster(vm, review, &mut findings);
    }
    Some(findings)
}

/// The effective strategy as far as the VM and the settings tell: the VM's own (a non-string
/// counts as a strategy of no effect), else `evictionStrategy.clusterDefault`.
fn effective_without_lookup<'a>(
    vm: &'a Object,
    settings: &'a Settings,
) -> Option<(Cow<'a, str>, StrategySource)> {
    match vm::eviction_strategy(vm) {
        Some(value) => Some((
            Cow::Borrowed(value.as_str().unwrap_or_default()),
            StrategySource::Vm,
        )),
        None => settings
            .eviction_strategy
            .cluster_default
            .as_deref()
            .map(|value| (Cow::Borrowed(value), StrategySource::Settings)),
    }
}

/// The claims the spec does not describe, read from the cluster: each without `ReadWriteMany` is
/// a reason. A claim that cannot be read is not a reason (the lookups' warning says so).
fn claims_from_cluster(vm: &Object, review: &Review, findings: &mut Findings) {
    let claims = external_claims(vm);
    if claims.is_empty() {
        return;
    }
    let Some(namespace) = review.namespace else {
        findings.warnings.push(format!(
            "{FIELD}: no namespace, claims not checked ({})",
            claims.join(", ")
        ));
        return;
    };
    for name in claims {
        if let Some(modes) = review.cluster.claim_access_modes(namespace, name) {
            claim_reason(findings, name, &modes);
        }
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

/// Where a VM's effective eviction strategy comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum StrategySource {
    /// The VM's own `spec.template.spec.evictionStrategy`.
    Vm,
    /// The policy setting `evictionStrategy.clusterDefault`.
    Settings,
    /// The KubeVirt CR's `spec.configuration.evictionStrategy`, read from the cluster.
    Cluster,
    /// Nothing sets one: KubeVirt's `None`.
    Default,
}

/// A VM as the policy reads it for V7, without the "only when it matters" economy of admission:
/// what the tools (the drain preview) need for every VM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assessment {
    /// The effective eviction strategy (`None` when nothing sets one: KubeVirt's `None`).
    pub eviction_strategy: Option<String>,
    pub source: StrategySource,
    /// Why the VM cannot live-migrate (spec, and claims read from the cluster).
    pub reasons: Vec<String>,
    /// What could not be read or checked.
    pub warnings: Vec<String>,
}

/// Reads a VM (`metadata.namespace` is its namespace) the way V7 does, asking the cluster for the
/// eviction strategy whenever the VM and the settings set none and for every claim the spec does
/// not describe (with `clusterLookups`).
pub fn assess(vm: &Value, settings: &Settings, cluster: &dyn Cluster) -> Assessment {
    let empty = Object::new();
    let vm = vm.as_object().unwrap_or(&empty);
    let namespace = vm
        .get("metadata")
        .and_then(|m| m.get("namespace"))
        .and_then(Value::as_str);
    let review = Review::new(Operation::Create, settings, namespace, cluster, None);
    let (eviction_strategy, source) = match effective_without_lookup(vm, settings) {
        Some((strategy, source)) => (Some(strategy.into_owned()), source),
        None if settings.cluster_lookups => match review.cluster.kubevirt_eviction_strategy() {
            Some(strategy) => (Some(strategy), StrategySource::Cluster),
            None => (None, StrategySource::Default),
        },
        None => (None, StrategySource::Default),
    };
    let mut findings = non_migratable_reasons(vm);
    if settings.cluster_lookups {
        claims_from_cluster(vm, &review, &mut findings);
    }
    findings.warnings.extend(review.cluster.warning());
    Assessment {
        eviction_strategy,
        source,
        reasons: findings.reasons,
        warnings: findings.warnings,
    }
}
