//! The KubeVirt CR rules K1–K4 (docs/rules.md): validation only, the CR is never mutated. K4, the
//! label sync, is in [`label_sync`].

use crate::admission::review::Review;
use crate::admission::verdict::Verdict;
use crate::configuration::parse_version;
use crate::duration;
use crate::listing::listed;
use crate::object::view::{Field, Scalar, shown, view};
use crate::rules::allowed::{Allowance, allowance};
use crate::rules::label_sync::{self, Customize};
use crate::settings::KubevirtSettings;

const EVICTION: &str = "spec.configuration.evictionStrategy";
const METHODS: &str = "spec.workloadUpdateStrategy.workloadUpdateMethods";
const UPDATE_METHODS: [&str; 2] = ["LiveMigrate", "Evict"];

view! {
    /// The KubeVirt CR as far as K1–K4 read it.
    Cr<'a> {
        "metadata" => metadata: Field<CrMetadata<'a>>,
        "spec" => spec: Field<CrSpec<'a>>,
        "status" => status: Field<CrStatus<'a>>,
    }
}

view! {
    CrStatus<'a> {
        "observedKubeVirtVersion" => observed_version: Option<Scalar<'a>>,
    }
}

view! {
    CrMetadata<'a> {
        "namespace" => namespace: Option<Scalar<'a>>,
    }
}

view! {
    CrSpec<'a> {
        "configuration" => configuration: Field<CrConfiguration<'a>>,
        "workloadUpdateStrategy" => workload_update_strategy: Field<WorkloadUpdateStrategy<'a>>,
        "customizeComponents" => customize_components: Field<Customize<'a>>,
    }
}

view! {
    CrConfiguration<'a> {
        "evictionStrategy" => eviction_strategy: Option<Scalar<'a>>,
    }
}

view! {
    WorkloadUpdateStrategy<'a> {
        "workloadUpdateMethods" => workload_update_methods: Option<Scalar<'a>>,
        "batchEvictionSize" => batch_eviction_size: Option<Scalar<'a>>,
        "batchEvictionInterval" => batch_eviction_interval: Option<Scalar<'a>>,
    }
}

impl Cr<'_> {
    /// `metadata.namespace`, when a string.
    pub(crate) fn namespace(&self) -> Option<&str> {
        self.metadata.get()?.namespace.as_ref()?.as_str()
    }

    /// The release the cluster runs: `kubevirt.version`, else `status.observedKubeVirtVersion`.
    fn release(&self, settings: &KubevirtSettings) -> Option<(u64, u64)> {
        let observed = || self.observed_version();
        settings
            .version
            .as_deref()
            .or_else(observed)
            .and_then(parse_version)
    }

    /// `status.observedKubeVirtVersion`, when a string.
    pub(crate) fn observed_version(&self) -> Option<&str> {
        self.status.get()?.observed_version.as_ref()?.as_str()
    }

    /// `spec.customizeComponents`, when an object.
    pub(crate) fn customize(&self) -> Option<&Customize<'_>> {
        self.spec.get()?.customize_components.get()
    }
}

/// The validation step: K1, K2, K3, K4.
pub(crate) fn validate(cr: &Cr, review: &Review, verdict: &mut Verdict) {
    let settings = &review.settings.kubevirt;
    let spec = cr.spec.get();
    cluster_eviction_strategy(
        spec.and_then(|s| s.configuration.get())
            .and_then(|c| c.eviction_strategy.as_ref()),
        settings,
        verdict,
    );
    let strategy = spec.and_then(|s| s.workload_update_strategy.get());
    workload_update_methods(
        strategy.and_then(|s| s.workload_update_methods.as_ref()),
        settings,
        verdict,
    );
    batch_eviction(strategy, verdict);
    label_sync::validate(
        cr.customize(),
        &review.settings.label_key,
        cr.release(settings),
        settings.label_sync,
        verdict,
    );
}

/// K1: the cluster-wide eviction strategy.
fn cluster_eviction_strategy(
    value: Option<&Scalar>,
    settings: &KubevirtSettings,
    verdict: &mut Verdict,
) {
    let Some(value) = value.filter(|v| **v != Scalar::Null) else {
        verdict.warn(format!("{EVICTION}: not set; KubeVirt then uses None"));
        return;
    };
    let allowed = &settings.allowed_eviction_strategies;
    // The cluster's value is not grandfathered: a KubeVirt CR is edited by its operator only.
    if allowance(value, allowed, || None) != Allowance::Allowed {
        verdict.reject(format!(
            "{EVICTION}: unsupported value \"{}\" (valid: {})",
            shown(Some(value)),
            listed(allowed, ", ")
        ));
        return;
    }
    let recommended = &settings.recommended_eviction_strategy;
    if value.as_str() != Some(recommended.as_ref()) {
        verdict.warn(format!(
            "{EVICTION}: {}; {recommended} is recommended",
            shown(Some(value))
        ));
    }
}

/// K2: `LiveMigrate` and `Evict` only, and `Evict` as the fallback for VMs that cannot migrate.
fn workload_update_methods(
    value: Option<&Scalar>,
    settings: &KubevirtSettings,
    verdict: &mut Verdict,
) {
    let methods = match value {
        None | Some(Scalar::Null) => &[][..],
        Some(Scalar::Array(methods)) => methods.as_slice(),
        Some(other) => {
            verdict.reject(format!(
                "{METHODS}: must be a list, got {}",
                shown(Some(other))
            ));
            return;
        }
    };
    if methods.is_empty() {
        verdict.warn(format!(
            "{METHODS}: empty; workloads are never updated automatically"
        ));
        return;
    }
    for (i, method) in methods.iter().enumerate() {
        if !method.as_str().is_some_and(|m| UPDATE_METHODS.contains(&m)) {
            verdict.reject(format!(
                "{METHODS}[{i}]: unsupported value \"{}\" (valid: {})",
                shown(Some(method)),
                listed(&UPDATE_METHODS, ", ")
            ));
        }
    }
    let has = |name: &str| methods.iter().any(|m| m.as_str() == Some(name));
    if settings.require_evict_fallback && has("LiveMigrate") && !has("Evict") {
        verdict.reject(format!(
            "{METHODS}: must include Evict as a fallback for VMs that cannot live-migrate"
        ));
    }
}

/// K3: `batchEvictionSize` ≥ 1 and a positive `batchEvictionInterval` (Go's `time.ParseDuration`).
fn batch_eviction(strategy: Option<&WorkloadUpdateStrategy>, verdict: &mut Verdict) {
    let field = "spec.workloadUpdateStrategy";
    match strategy.and_then(|s| s.batch_eviction_size.as_ref()) {
        None | Some(Scalar::Null) => {}
        Some(size) if size.as_i64().is_some_and(|n| n >= 1) => {}
        Some(size) => verdict.reject(format!(
            "{field}.batchEvictionSize: must be an integer of at least 1, got {}",
            size.json()
        )),
    }
    match strategy.and_then(|s| s.batch_eviction_interval.as_ref()) {
        None | Some(Scalar::Null) => {}
        Some(Scalar::Str(d)) if duration::parse(d).is_ok_and(|ns| ns > 0) => {}
        Some(other) => verdict.reject(format!(
            "{field}.batchEvictionInterval: must be a positive duration such as 1m0s, got {}",
            other.json()
        )),
    }
}
