//! The maintenance-mode strategy label rules (docs/rules.md): M1, M2 (mutation) and V1–V5
//! (validation).

use crate::admission::review::Review;
use crate::admission::verdict::Verdict;
use crate::listing::listed;
use crate::object::view::{Field, Scalar, shown};
use crate::object::vm::{self, Labels, Metadata, Vm};
use crate::rules::allowed::{Allowance, allowance};
use crate::settings::Mode;
use crate::strategy::is_maintenance_strategy;

/// G5: the two label maps (and the `metadata` holding them) must be objects or `null`; the
/// message names the first that is not.
pub(crate) fn check_shape(vm: &Vm) -> Result<(), String> {
    labels_shape(&vm.metadata, "metadata")?;
    match vm.template() {
        Some(template) => labels_shape(&template.metadata, "spec.template.metadata"),
        None => Ok(()),
    }
}

fn labels_shape(metadata: &Field<Metadata>, path: &str) -> Result<(), String> {
    let wrong = |path: &str, kind: &str| Err(format!("{path}: must be an object, got {kind}"));
    match metadata {
        Field::Other(kind) => wrong(path, kind),
        Field::Object(metadata) => match metadata.labels {
            Field::Other(kind) => wrong(&format!("{path}.labels"), kind),
            _ => Ok(()),
        },
        Field::Absent | Field::Null => Ok(()),
    }
}

/// The mutation step: M1, then M2.
pub(crate) fn mutate(vm: &mut Vm, review: &Review, _verdict: &mut Verdict) {
    let settings = review.settings;
    default_label(vm, &settings.label_key, &settings.default_strategy);
    propagate_label(vm, &settings.label_key);
}

/// M1: a VM without the label gets the default strategy. An existing value is never changed.
fn default_label(vm: &mut Vm, key: &str, default: &str) {
    if vm.label(key).is_none() {
        vm::set_label(&mut vm.metadata, key, Scalar::str(default.to_owned()));
    }
}

/// M2: copy the label verbatim into `spec.template.metadata.labels` (never creating `spec.template`).
fn propagate_label(vm: &mut Vm, key: &str) {
    let Some(value) = vm.label(key).cloned() else {
        return;
    };
    if vm.template_label(key) == Some(&value) {
        return;
    }
    if let Some(template) = vm.template_mut() {
        vm::set_label(&mut template.metadata, key, value);
    }
}

/// The validation step, on the (mutated) object: V1–V5.
pub(crate) fn validate(vm: &Vm, review: &Review, verdict: &mut Verdict) {
    let key = review.settings.label_key.as_ref();
    let labels = vm.labels();
    let template_labels = vm.template_labels();
    match vm.label(key) {
        None => missing_label(key, review, verdict),
        Some(value) => strategy_value(key, value, review, verdict),
    }
    if vm.template().is_some() {
        template_mismatch(key, vm.template_label(key), vm.label(key), review, verdict);
    }
    case_variant_keys("metadata.labels", labels, key, verdict);
    case_variant_keys(
        "spec.template.metadata.labels",
        template_labels,
        key,
        verdict,
    );
}

/// V1: the label is missing (only reachable with `mutate: false`).
fn missing_label(key: &str, review: &Review, verdict: &mut Verdict) {
    if !review.settings.require_label {
        verdict.warn(format!(
            "metadata.labels[{key}]: not set; a drain treats this VM as Migrate"
        ));
        return;
    }
    let legacy = review.old().is_some() && review.old_label(key).is_none();
    if legacy {
        verdict.warn(format!(
            "metadata.labels[{key}]: not set on this existing VM; a drain treats it as Migrate"
        ));
    } else {
        verdict.reject(format!("metadata.labels[{key}]: label `{key}` not found"));
    }
}

/// V2 and V3: the value must be an allowed strategy, unless an UPDATE keeps it unchanged.
fn strategy_value(key: &str, value: &Scalar, review: &Review, verdict: &mut Verdict) {
    let allowed = &review.settings.allowed_strategies;
    let shown = shown(Some(value));
    match allowance(value, allowed, || review.old_label(key)) {
        Allowance::Allowed => {}
        Allowance::Refused => verdict.reject(format!(
            "metadata.labels[{key}]: invalid maintenance mode strategy: {shown} (valid: {})",
            listed(allowed, ", ")
        )),
        // A real Harvester strategy that this policy does not allow: a drain still honours it.
        Allowance::Kept if value.as_str().is_some_and(is_maintenance_strategy) => verdict.warn(
            format!("metadata.labels[{key}]: kept {shown}, not in allowedStrategies"),
        ),
        Allowance::Kept => verdict.warn(format!(
            "metadata.labels[{key}]: kept invalid value {shown}; a drain treats this VM as Migrate"
        )),
    }
}

/// V4: the template's copy must equal the VM's label (only reachable with `mutate: false`).
fn template_mismatch(
    key: &str,
    in_template: Option<&Scalar>,
    on_vm: Option<&Scalar>,
    review: &Review,
    verdict: &mut Verdict,
) {
    if in_template == on_vm {
        return;
    }
    let (t, l) = (shown(in_template), shown(on_vm));
    let warning =
        || format!("spec.template.metadata.labels[{key}] ({t}) differs from metadata.labels ({l})");
    match review.settings.template_mismatch {
        Mode::Ignore => {}
        Mode::Warn => verdict.warn(warning()),
        Mode::Reject => {
            let kept = review.old().is_some()
                && review.old_template_label(key) == in_template
                && review.old_label(key) == on_vm;
            if kept {
                verdict.warn(warning());
            } else {
                verdict.reject(format!(
                    "spec.template.metadata.labels[{key}]: must equal metadata.labels[{key}] ({t} != {l})"
                ));
            }
        }
    }
}

/// V5: a key that equals the label key but for case is ignored by Harvester: say so.
fn case_variant_keys(path: &str, labels: Option<&Labels>, key: &str, verdict: &mut Verdict) {
    for other in labels.into_iter().flat_map(Labels::keys) {
        if other != key && other.eq_ignore_ascii_case(key) {
            verdict.warn(format!(
                "{path}[{other}] is ignored: label keys are case-sensitive"
            ));
        }
    }
}
