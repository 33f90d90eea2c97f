//! Live updates of a running VM (docs/rules.md, "Live updates", L1–L9): on an UPDATE of a VM
//! whose VMI runs, what KubeVirt does with each change of `spec.template.spec` — applied without
//! a migration, applied by a live migration, `RestartRequired`, or, for a change that needs a
//! migration the VM cannot make, evicted by the workload updater, never applied, or not applied
//! until the VM restarts. [`changes`] tells the changes apart, [`facts`] reads what decides
//! their fate (the KubeVirt CR, the running VMI, migratability), [`outcome`] decides and words it; [`text`] reads the VM's own text.

mod changes;
mod facts;
mod json;
mod outcome;
mod quantity;
mod text;

use crate::admission::review::Review;
use crate::admission::verdict::Verdict;
use crate::object::vm::Vm;
use crate::settings::Mode;
use text::Text;

/// The validation step (L1): an UPDATE of a running VM that changes its template spec.
pub(crate) fn validate(vm: &Vm, review: &Review, verdict: &mut Verdict) {
    let mode = review.settings.live_updates;
    if mode == Mode::Ignore {
        return;
    }
    let (Some(old), Some(old_text)) = (review.old(), review.old_text()) else {
        return;
    };
    if !old.running() {
        return;
    }
    let (new_vm, old_vm) = match (Text::of_request(review.payload()), Text::read(old_text)) {
        (Ok(new), Ok(old)) => (new, old),
        (Err(why), _) | (_, Err(why)) => return not_read(&why, verdict),
    };
    // The mutation steps may have set the eviction strategy: the VM KubeVirt gets is the mutated one.
    let strategy_kept = vm.eviction_strategy() == old.eviction_strategy();
    if strategy_kept && new_vm.template_spec() == old_vm.template_spec() {
        return;
    }
    let (old_spec, mut new_spec) = match (old_vm.spec_value(), new_vm.spec_value()) {
        (Ok(old), Ok(new)) => (old, new),
        (Err(why), _) | (_, Err(why)) => return not_read(&why, verdict),
    };
    if let Some(strategy) = vm.eviction_strategy() {
        json::set(&mut new_spec, &["evictionStrategy"], Some(strategy.clone()));
    }
    let cluster = facts::Cluster::read(review);
    let changes = changes::of(
        &old_spec,
        &new_spec,
        new_vm.volume_migration(),
        &cluster.configuration,
        cluster.rules,
    );
    if changes.is_empty() {
        return;
    }
    let facts = facts::of(
        old, &old_spec, &new_spec, &new_vm, &changes, &cluster, review,
    );
    for finding in outcome::judge(&changes, &facts) {
        match (finding.refusable, mode) {
            (true, Mode::Reject) => verdict.reject(finding.message),
            _ => verdict.warn(finding.message),
        }
    }
}

/// A text the rules cannot read (past serde_json's nesting limit): a warning, no check.
fn not_read(why: &str, verdict: &mut Verdict) {
    verdict.warn(format!(
        "spec.template.spec: not read ({why}); live updates not checked"
    ));
}
