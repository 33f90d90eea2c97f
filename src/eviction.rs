//! The KubeVirt eviction strategy rules of a VM (docs/rules.md): M3 and V7's `fix` (mutation), V6
//! and V7 (validation), and [`assess`], the same reading of a VM for the tools.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::allowed::{Allowance, allowance};
use crate::cluster::Cluster;
use crate::configuration::{Configuration, Rules, parse_version};
use crate::json::{Object, member, show};
use crate::migratability::{
    Context, Findings, external_claims, names_instancetype, needs, reasons_of,
};
use crate::request::Operation;
use crate::review::Review;
use crate::settings::{NonMigratable, Settings};
use crate::strategy::{LIVE_MIGRATE, LIVE_MIGRATE_IF_POSSIBLE};
use crate::verdict::Verdict;
use crate::vm;
use crate::vmi::{self, Sources};

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
    let reasons = findings.reasons.join("; ");
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
    let strategy = match effective_without_lookup(vm, settings) {
        Some((strategy, _)) => strategy,
        None if !settings.cluster_lookups => return None,
        // Only a VM that could block a drain is worth the KubeVirt CR.
        None if !could_block(vm, settings) => return None,
        None => Cow::Owned(
            review
                .cluster
                .kubevirt("treated as None")?
                .configuration
                .eviction_strategy
                .clone()?,
        ),
    };
    if strategy != LIVE_MIGRATE {
        return None;
    }
    Some(findings(vm, review))
}

/// Whether a VM may have a reason at all: one its spec shows under the configuration the settings
/// give, one that depends on the cluster's configuration or release, a claim or an instancetype
/// or preference to read.
fn could_block(vm: &Object, settings: &Settings) -> bool {
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
        || names_instancetype(vm)
}

/// The configuration and the rules migratability is judged with: the settings' own, else the
/// KubeVirt CR's when it has been read (its `observed_version` for the rules).
fn known(review: &Review) -> (Configuration, Option<Rules>) {
    let kubevirt = &review.settings.kubevirt;
    let cr = review
        .cluster
        .kubevirt_read()
        .then(|| review.cluster.kubevirt(""))
        .flatten();
    let config = kubevirt
        .configuration
        .clone()
        .or_else(|| cr.map(|cr| cr.configuration.clone()))
        .unwrap_or_default();
    let rules = kubevirt.rules().or_else(|| {
        cr.and_then(|cr| cr.observed_version.as_deref())
            .and_then(parse_version)
            .map(Rules::of)
    });
    (config, rules)
}

/// What keeps the VM from migrating, with the lookups of rule V7 (docs/rules.md) in their order:
/// (the KubeVirt CR, read by [`blocking`] when the strategy needed it,) the instancetype, the preference, the
/// KubeVirt CR when a reason depends on its configuration or release, the claims.
fn findings(vm: &Object, review: &Review) -> Findings {
    let settings = review.settings;
    let lookups = settings.cluster_lookups;
    let mut warnings = Vec::new();
    let instancetype = lookups
        .then(|| matcher(vm, review, Matcher::INSTANCETYPE, &mut warnings))
        .flatten();
    let preference = lookups
        .then(|| matcher(vm, review, Matcher::PREFERENCE, &mut warnings))
        .flatten();
    let sources = Sources {
        instancetype: instancetype.as_ref().map(|(_, spec)| spec),
        preference: preference.as_ref().map(|(_, spec)| spec),
    };
    let kubevirt = &settings.kubevirt;
    let (mut config, mut rules) = known(review);
    let mut vmi = vmi::expand(vm, sources, &config, rules.unwrap_or(Rules::V1_9));
    let need = needs(&vmi, rules);
    let missing = (need.configuration && kubevirt.configuration.is_none())
        || (need.version && kubevirt.version.is_none());
    if lookups && missing && !review.cluster.kubevirt_read() {
        review
            .cluster
            .kubevirt("KubeVirt's defaults and v1.9 rules used");
        (config, rules) = known(review);
        vmi = vmi::expand(vm, sources, &config, rules.unwrap_or(Rules::V1_9));
    }
    if !vmi.conflicts.is_empty() {
        let what = instancetype.as_ref().map_or("", |(what, _)| what.as_str());
        warnings.push(format!(
            "spec.instancetype: {what} conflicts with the VM in {}; KubeVirt rejects the VM",
            vmi.conflicts.join(", ")
        ));
    }
    let unread = std::cell::RefCell::new(Vec::new());
    let external_claim = |name: &str| {
        if !lookups {
            return None;
        }
        let Some(namespace) = review.namespace else {
            unread.borrow_mut().push(name.to_owned());
            return None;
        };
        review.cluster.claim_access_modes(namespace, name)
    };
    let context = Context {
        vm,
        config: &config,
        rules: rules.unwrap_or(Rules::V1_9),
        external_claim: &external_claim,
    };
    let mut found = reasons_of(&vmi, &context);
    let unread = unread.into_inner();
    if !unread.is_empty() {
        found.warnings.push(format!(
            "{FIELD}: no namespace, claims not checked ({})",
            unread.join(", ")
        ));
    }
    warnings.append(&mut found.warnings);
    found.warnings = warnings;
    found
}

/// `spec.instancetype` or `spec.preference` of a VM.
struct Matcher {
    field: &'static str,
    cluster_kind: &'static str,
    namespaced_kind: &'static str,
}

impl Matcher {
    const INSTANCETYPE: Matcher = Matcher {
        field: "instancetype",
        cluster_kind: "VirtualMachineClusterInstancetype",
        namespaced_kind: "VirtualMachineInstancetype",
    };
    const PREFERENCE: Matcher = Matcher {
        field: "preference",
        cluster_kind: "VirtualMachineClusterPreference",
        namespaced_kind: "VirtualMachinePreference",
    };
}

/// Reads the object a matcher names (`pkg/instancetype/find/spec.go:64-81`: the kind matched
/// case-insensitively, singular or plural, omitted = the cluster-wide kind): `(what, spec)`, what
/// being `KIND NAME` for messages. A matcher the policy cannot resolve is a warning.
fn matcher(
    vm: &Object,
    review: &Review,
    matcher: Matcher,
    warnings: &mut Vec<String>,
) -> Option<(String, Value)> {
    let found = member(vm.get("spec"), matcher.field)?;
    let field = format!("spec.{}", matcher.field);
    let Some(name) = found
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    else {
        warnings.push(format!("{field}: no name (inferFromVolume?), not applied"));
        return None;
    };
    let kind = found
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_ascii_lowercase();
    let is = |k: &str| {
        let k = k.to_ascii_lowercase();
        kind == k || kind == format!("{k}s")
    };
    let (kind, namespace) = if kind.is_empty() || is(matcher.cluster_kind) {
        (matcher.cluster_kind, None)
    } else if is(matcher.namespaced_kind) {
        let Some(namespace) = review.namespace else {
            warnings.push(format!("{field}: no namespace, {name} not applied"));
            return None;
        };
        (matcher.namespaced_kind, Some(namespace))
    } else {
        warnings.push(format!("{field}.kind: unknown kind {kind:?}, not applied"));
        return None;
    };
    let spec = review.cluster.instancetype_spec(kind, namespace, name)?;
    Some((format!("{kind} {name}"), spec))
}

/// The effective strategy as far as the VM and the settings tell: the VM's own (a non-string
/// counts as a strategy of no effect), else `evictionStrategy.clusterDefault`, else
/// `kubevirt.configuration.evictionStrategy`.
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
            .or_else(|| {
                settings
                    .kubevirt
                    .configuration
                    .as_ref()
                    .and_then(|c: &Configuration| c.eviction_strategy.as_deref())
            })
            .map(|value| (Cow::Borrowed(value), StrategySource::Settings)),
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
    if mode == NonMigratable::Ignore {
        return;
    }
    if !findings.reasons.is_empty() {
        let reasons = findings.reasons.join("; ");
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

impl StrategySource {
    /// The name it is serialized as.
    pub fn as_str(self) -> &'static str {
        match self {
            StrategySource::Vm => "vm",
            StrategySource::Settings => "settings",
            StrategySource::Cluster => "cluster",
            StrategySource::Default => "default",
        }
    }
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
/// eviction strategy whenever the VM and the settings set none, for its instancetype and
/// preference, for the CR's configuration and release when a reason depends on them, and for
/// every claim the spec does not describe (with `clusterLookups`). The node-dependent reasons are
/// among the warnings.
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
        None if settings.cluster_lookups => match review
            .cluster
            .kubevirt("treated as None")
            .and_then(|cr| cr.configuration.eviction_strategy.clone())
        {
            Some(strategy) => (Some(strategy), StrategySource::Cluster),
            None => (None, StrategySource::Default),
        },
        None => (None, StrategySource::Default),
    };
    let mut findings = findings(vm, &review);
    findings.warnings.append(&mut findings.node);
    findings.warnings.extend(review.cluster.warning());
    Assessment {
        eviction_strategy,
        source,
        reasons: findings.reasons,
        warnings: findings.warnings,
    }
}
