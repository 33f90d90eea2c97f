//! [`assess`]: a VM as V7 reads it, for the tools (the drain preview), without admission's "only
//! when it matters" economy.

use super::lookups::{StrategySource, effective_without_lookup, findings};

use serde::Serialize;
use serde_json::Value;

use crate::admission::request::Operation;
use crate::admission::review::Review;
use crate::cluster::{Cluster, CrFallback};
use crate::object::vm::{Vm, Whole};
use crate::reason::Reason;
use crate::settings::Settings;
use crate::strategy::EvictionStrategy;

/// A VM as the policy reads it for V7, without the "only when it matters" economy of admission:
/// what the tools (the drain preview) need for every VM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assessment {
    /// The effective eviction strategy (`None` when nothing sets one: KubeVirt's `None`).
    pub eviction_strategy: Option<EvictionStrategy>,
    pub source: StrategySource,
    /// Why the VM cannot live-migrate (spec, and claims read from the cluster).
    pub reasons: Vec<Reason>,
    /// What could not be read or checked.
    pub warnings: Vec<String>,
}

/// Reads a VM (`metadata.namespace` is its namespace) the way V7 does, asking the cluster for the
/// eviction strategy whenever the VM and the settings set none, for its instancetype and
/// preference, for the CR's configuration and release when a reason depends on them, and for
/// every claim the spec does not describe (with `clusterLookups`). The node-dependent reasons are
/// among the warnings.
pub fn assess(vm: &Value, settings: &Settings, cluster: &dyn Cluster) -> Assessment {
    // A VM that is not an object, or cannot be read, reads as an empty one.
    let text = vm.to_string();
    let read = crate::object::vm::parse_whole(&text).ok();
    let whole = read
        .as_ref()
        .and_then(Vm::whole)
        .unwrap_or_else(Whole::empty);
    let vm = whole.vm();
    let namespace = vm.namespace();
    let review = Review::new(Operation::Create, settings, namespace, cluster, &text, None);
    let (eviction_strategy, source) = match effective_without_lookup(vm, settings) {
        Some((strategy, source)) => (Some(EvictionStrategy::parse(&strategy)), source),
        None if settings.cluster_lookups => match review
            .cluster
            .kubevirt(CrFallback::AsNone)
            .and_then(|cr| cr.configuration.eviction_strategy.as_deref())
        {
            Some(strategy) => (
                Some(EvictionStrategy::parse(strategy)),
                StrategySource::Cluster,
            ),
            None => (None, StrategySource::Default),
        },
        None => (None, StrategySource::Default),
    };
    let mut findings = findings(whole, &review);
    let node = findings.node.iter().map(ToString::to_string);
    findings.warnings.extend(node);
    findings.warnings.extend(review.cluster.warning());
    Assessment {
        eviction_strategy,
        source,
        reasons: findings.reasons,
        warnings: findings.warnings,
    }
}
