//! What V7 reads, in the order of its lookups: the effective strategy as far as the VM and the
//! settings tell, then (the KubeVirt CR,) the instancetype, the preference, the KubeVirt CR when a
//! reason depends on its configuration or release, the claims.

use std::borrow::Cow;

use serde::Serialize;

use crate::admission::review::Review;
use crate::cluster::CrFallback;
use crate::configuration::{Configuration, Rules};
use crate::listing::listed;
use crate::object::view::{self, Field, Members, Scalar};
use crate::object::vm::{self, Spec, Vm, Whole};
use crate::rules::migratability::{Context, Findings, needs, reasons_of};
use crate::rules::vmi::{self, Instancetype, Preference, Sources};
use crate::settings::Settings;

pub(super) const FIELD: &str = "spec.template.spec.evictionStrategy";

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

/// The effective strategy as far as the VM and the settings tell: the VM's own (a non-string
/// counts as a strategy of no effect), else `evictionStrategy.clusterDefault`, else
/// `kubevirt.configuration.evictionStrategy`.
pub(super) fn effective_without_lookup<'a>(
    vm: &'a Vm,
    settings: &'a Settings,
) -> Option<(Cow<'a, str>, StrategySource)> {
    match vm.eviction_strategy() {
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

/// The configuration and the rules migratability is judged with: the settings' own, else the
/// KubeVirt CR's when it has been read (its `observed_version` for the rules).
fn known(review: &Review) -> (Configuration, Option<Rules>) {
    review
        .settings
        .kubevirt
        .or_cr(review.cluster.kubevirt_if_read())
}

/// What keeps the VM from migrating, with the lookups of rule V7 (docs/rules.md) in their order:
/// (the KubeVirt CR, read by [`blocking`] when the strategy needed it,) the instancetype, the preference, the
/// KubeVirt CR when a reason depends on its configuration or release, the claims.
pub(super) fn findings(vm: Whole, review: &Review) -> Findings {
    let settings = review.settings;
    let lookups = settings.cluster_lookups;
    let mut warnings = Vec::new();
    let instancetype = lookups
        .then(|| matcher(&vm, review, Matcher::INSTANCETYPE, &mut warnings))
        .flatten();
    let preference = lookups
        .then(|| matcher(&vm, review, Matcher::PREFERENCE, &mut warnings))
        .flatten();
    // The cluster answers with the specs' text: a view of each shares the VM's reader.
    let instancetype_view: Option<Instancetype> =
        instancetype.as_ref().and_then(|(_, spec)| spec_view(spec));
    let preference_view: Option<Preference> =
        preference.as_ref().and_then(|(_, spec)| spec_view(spec));
    let sources = Sources {
        instancetype: instancetype_view.as_ref(),
        preference: preference_view.as_ref(),
    };
    let kubevirt = &settings.kubevirt;
    let (mut config, mut rules) = known(review);
    let mut vmi = vmi::expand(vm, sources, &config, rules.unwrap_or(Rules::V1_9));
    let need = needs(&vmi, rules);
    let missing = (need.configuration && kubevirt.configuration.is_none())
        || (need.version && kubevirt.version.is_none());
    if lookups && missing && !review.cluster.kubevirt_read() {
        review.cluster.kubevirt(CrFallback::Defaults);
        (config, rules) = known(review);
        vmi = vmi::expand(vm, sources, &config, rules.unwrap_or(Rules::V1_9));
    }
    if !vmi.conflicts.is_empty() {
        let what = instancetype.as_ref().map_or("", |(what, _)| what.as_str());
        warnings.push(format!(
            "spec.instancetype: {what} conflicts with the VM in {}; KubeVirt rejects the VM",
            listed(&vmi.conflicts, ", ")
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
            listed(&unread, ", ")
        ));
    }
    warnings.append(&mut found.warnings);
    found.warnings = warnings;
    found
}

/// An instancetype's or preference's `spec` as expansion reads it (one that is not an object
/// sets nothing).
fn spec_view<'s, T: Members<'s> + Default>(spec: &'s str) -> Option<T> {
    view::parse(spec).ok().flatten()
}

/// `spec.instancetype` or `spec.preference` of a VM.
struct Matcher {
    field: &'static str,
    of: for<'s, 'a> fn(&'s Spec<'a>) -> &'s Field<vm::Matcher<'a>>,
    cluster_kind: &'static str,
    namespaced_kind: &'static str,
}

impl Matcher {
    const INSTANCETYPE: Matcher = Matcher {
        field: "instancetype",
        of: |spec| &spec.instancetype,
        cluster_kind: "VirtualMachineClusterInstancetype",
        namespaced_kind: "VirtualMachineInstancetype",
    };
    const PREFERENCE: Matcher = Matcher {
        field: "preference",
        of: |spec| &spec.preference,
        cluster_kind: "VirtualMachineClusterPreference",
        namespaced_kind: "VirtualMachinePreference",
    };
}

/// Reads the object a matcher names (`pkg/instancetype/find/spec.go:64-81`: the kind matched
/// case-insensitively, singular or plural, omitted = the cluster-wide kind): `(what, spec)`, what
/// being `KIND NAME` for messages. A matcher the policy cannot resolve is a warning.
fn matcher(
    vm: &Vm,
    review: &Review,
    matcher: Matcher,
    warnings: &mut Vec<String>,
) -> Option<(String, String)> {
    let spec = vm.spec()?;
    let found = (matcher.of)(spec);
    if !found.is_set() {
        return None;
    }
    let found = found.get();
    let text = |value: Option<&Scalar>| value.and_then(Scalar::as_str).map(str::to_owned);
    let field = format!("spec.{}", matcher.field);
    let Some(name) = text(found.and_then(|f| f.name.as_ref())).filter(|n| !n.is_empty()) else {
        warnings.push(format!("{field}: no name (inferFromVolume?), not applied"));
        return None;
    };
    let kind = text(found.and_then(|f| f.kind.as_ref()))
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
    let spec = review.cluster.instancetype_spec(kind, namespace, &name)?;
    Some((format!("{kind} {name}"), spec))
}
