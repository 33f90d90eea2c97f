//! A thin view over a VirtualMachine's raw JSON: the label maps, the template and the parts of its
//! spec the rules read, and the few writes the mutation rules own. Nothing here deserializes into a
//! typed object, so a mutation can never drop a field the policy does not know.

use serde_json::Value;

use crate::json::{FieldError, child_map, child_map_mut, items, member};
// The VM view works on raw objects; `drain` still names the type through here.
pub(crate) use crate::json::Object;

/// `x.metadata.labels`.
pub(crate) fn labels(vm: &Object) -> Result<Option<&Object>, FieldError> {
    match child_map(vm, "metadata", "metadata")? {
        Some(metadata) => child_map(metadata, "labels", "metadata.labels"),
        None => Ok(None),
    }
}

/// `x.spec.template` when `spec` and `template` are objects; anything else means "no template".
pub(crate) fn template(vm: &Object) -> Option<&Object> {
    vm.get("spec")?.get("template")?.as_object()
}

pub(crate) fn template_mut(vm: &mut Object) -> Option<&mut Object> {
    vm.get_mut("spec")?.get_mut("template")?.as_object_mut()
}

/// `x.spec.template.metadata.labels`; `None` without a template.
pub(crate) fn template_labels(vm: &Object) -> Result<Option<&Object>, FieldError> {
    let Some(template) = template(vm) else {
        return Ok(None);
    };
    match child_map(template, "metadata", "spec.template.metadata")? {
        Some(metadata) => child_map(metadata, "labels", "spec.template.metadata.labels"),
        None => Ok(None),
    }
}

/// The value of `key` in an optional label map.
pub(crate) fn label<'a>(labels: Option<&'a Object>, key: &str) -> Option<&'a Value> {
    labels?.get(key)
}

/// `x.metadata.labels[key]`; `None` also when the map has the wrong type.
pub(crate) fn label_of<'a>(vm: &'a Object, key: &str) -> Option<&'a Value> {
    label(labels(vm).ok().flatten(), key)
}

/// `x.spec.template.metadata.labels[key]`; `None` also when the map has the wrong type.
pub(crate) fn template_label_of<'a>(vm: &'a Object, key: &str) -> Option<&'a Value> {
    label(template_labels(vm).ok().flatten(), key)
}

/// Sets `map.metadata.labels[key] = value`, creating `metadata` and `labels` when absent or `null`.
pub(crate) fn set_label(map: &mut Object, key: &str, value: Value) {
    if let Some(labels) = child_map_mut(map, "metadata").and_then(|m| child_map_mut(m, "labels")) {
        labels.insert(key.to_owned(), value);
    }
}

/// `x.spec.template.spec` when it is an object.
pub(crate) fn template_spec(vm: &Object) -> Option<&Object> {
    template(vm)?.get("spec")?.as_object()
}

fn template_spec_mut(vm: &mut Object) -> Option<&mut Object> {
    template_mut(vm)?.get_mut("spec")?.as_object_mut()
}

/// The VM's own eviction strategy, `spec.template.spec.evictionStrategy` (`null` = unset).
pub fn eviction_strategy(vm: &Object) -> Option<&Value> {
    template_spec(vm)?
        .get("evictionStrategy")
        .filter(|v| !v.is_null())
}

/// Sets `spec.template.spec.evictionStrategy`; `false` when the VM has no `spec.template.spec`
/// object (it is never created).
pub(crate) fn set_eviction_strategy(vm: &mut Object, value: &str) -> bool {
    let Some(spec) = template_spec_mut(vm) else {
        return false;
    };
    spec.insert(
        "evictionStrategy".to_owned(),
        Value::String(value.to_owned()),
    );
    true
}

/// Every path a mutation may write: the label, its template copy, the eviction strategy.
pub(crate) struct OwnedPaths<'k> {
    label: [&'k str; 3],
    template_label: [&'k str; 5],
}

const EVICTION_STRATEGY: [&str; 4] = ["spec", "template", "spec", "evictionStrategy"];

impl<'k> OwnedPaths<'k> {
    pub(crate) fn new(key: &'k str) -> OwnedPaths<'k> {
        OwnedPaths {
            label: ["metadata", "labels", key],
            template_label: ["spec", "template", "metadata", "labels", key],
        }
    }

    pub(crate) fn all(&self) -> [&[&'k str]; 3] {
        [&self.label, &self.template_label, &EVICTION_STRATEGY]
    }
}

/// The values at every owned path (`None` where a step is missing or not an object), to tell
/// what a mutation changed.
pub(crate) fn owned_values(vm: &Object, paths: &OwnedPaths) -> [Option<Value>; 3] {
    paths.all().map(|path| {
        let (last, parents) = path.split_last()?;
        let parent = parents
            .iter()
            .try_fold(vm, |map, step| map.get(*step)?.as_object())?;
        parent.get(*last).cloned()
    })
}

/// `x.metadata.annotations[key]`.
pub(crate) fn annotation<'a>(vm: &'a Object, key: &str) -> Option<&'a Value> {
    member(vm.get("metadata"), "annotations")?.get(key)
}

/// `x.spec.template.spec.domain`.
pub(crate) fn domain(vm: &Object) -> Option<&Value> {
    template_spec(vm)?.get("domain")
}

/// `x.spec.template.spec[list]` (`volumes`, `networks`).
pub(crate) fn template_spec_items<'a>(vm: &'a Object, list: &str) -> &'a [Value] {
    items(template_spec(vm).and_then(|s| s.get(list)))
}

/// `x.spec.dataVolumeTemplates`.
pub(crate) fn data_volume_templates(vm: &Object) -> &[Value] {
    items(vm.get("spec").and_then(|s| s.get("dataVolumeTemplates")))
}
