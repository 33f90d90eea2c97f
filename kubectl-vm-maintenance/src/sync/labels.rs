//! The label writes: the VM's own patch (its label added when it has none, its template's set to
//! the same value), then its VMI's and each launcher Pod's label set to the VM's value, each a
//! JSON patch whose `test` pins what it replaces.

use cluster_model::object::ObjectExt;
use serde_json::{Value, json};

use super::plan::{Kind, LabelChange, Write};
use super::planner::Planner;
use crate::output::stale::shown;
use crate::running::Vmi;
use crate::running::staleness;

impl Planner<'_> {
    /// The VM's label and template, then its VMI's and Pods' labels.
    pub(super) fn labels(&mut self, vm: &Value, namespace: &str, name: &str, vmi: Option<&Vmi>) {
        let value = label_at(vm, "/metadata", self.key);
        let Some(to) = self.wanted(value.as_ref(), namespace, name) else {
            return;
        };
        let patch = match vm_patch(vm, self.key, value.as_ref(), &to) {
            Ok(patch) => patch,
            Err(message) => {
                self.finding(namespace, Kind::Vm, name, message);
                return;
            }
        };
        if !patch.ops.is_empty() {
            self.writes.push(Write {
                label: Some(LabelChange {
                    from: value,
                    to: json!(to),
                    template_from: patch.template_from,
                }),
                holds: patch.holds,
                ..Write::patch(
                    Kind::Vm,
                    namespace,
                    name,
                    name,
                    patch.words.join(", "),
                    patch.ops,
                )
            });
        }
        let Some(vmi) = vmi else {
            return;
        };
        let mut objects = vec![(Kind::Vmi, vmi.vmi)];
        objects.extend(vmi.pods.iter().map(|pod| (Kind::Pod, *pod)));
        for (kind, object) in objects {
            self.running_label(kind, object, namespace, name, &to);
        }
    }

    /// The value the VM's objects get: its own when allowed, `defaultStrategy` when it has none;
    /// `None`, reported, when it is not allowed.
    fn wanted(&mut self, value: Option<&Value>, namespace: &str, name: &str) -> Option<String> {
        let allowed = &self.settings.allowed_strategies;
        match value {
            None => Some(self.settings.default_strategy.to_string()),
            Some(Value::String(v)) if allowed.iter().any(|a| a == v) => Some(v.clone()),
            Some(other) => {
                let allowed: Vec<&str> = allowed.iter().map(AsRef::as_ref).collect();
                self.finding(
                    namespace,
                    Kind::Vm,
                    name,
                    format!(
                        "label {} is not in allowedStrategies ({}): not changed, and not copied to its template, VMI or Pods (the policy keeps it too)",
                        shown(Some(other)),
                        allowed.join(", ")
                    ),
                );
                None
            }
        }
    }

    /// A VMI's or launcher Pod's label to the VM's value `to`.
    fn running_label(&mut self, kind: Kind, object: &Value, namespace: &str, vm: &str, to: &str) {
        let object_name = object.text_at("/metadata/name").unwrap_or(vm).to_owned();
        let from = label_at(object, "/metadata", self.key);
        if from.as_ref() == Some(&json!(to)) {
            return;
        }
        let ops = match label_ops(object, "/metadata", self.key, to) {
            Ok(ops) => ops,
            Err(why) => {
                self.finding(namespace, kind, &object_name, format!("{why}: not changed"));
                return;
            }
        };
        let mut change = match &from {
            None => format!("add label {to}"),
            Some(old) => format!("label {} -> {to}", shown(Some(old))),
        };
        if self.syncs {
            change.push_str(" (KubeVirt's label sync would too)");
        }
        self.writes.push(Write {
            label: Some(LabelChange {
                from,
                to: json!(to),
                template_from: None,
            }),
            kube_virt_syncs: self.syncs,
            holds: vec![(format!("/metadata/labels/{}", escaped(self.key)), json!(to))],
            ..Write::patch(kind, namespace, &object_name, vm, change, ops)
        });
    }
}

/// The VM's own patch: its operations (none: nothing to write), the change in words, what the VM
/// must hold once written, and its template's label before (when the template changes).
struct VmPatch {
    ops: Vec<Value>,
    words: Vec<String>,
    holds: Vec<(String, Value)>,
    template_from: Option<Value>,
}

/// The VM's label added when it has none (`value`), its template's set to `to`; `Err`: why it is
/// not changed.
fn vm_patch(vm: &Value, key: &str, value: Option<&Value>, to: &str) -> Result<VmPatch, String> {
    let mut patch = VmPatch {
        ops: Vec::new(),
        words: Vec::new(),
        holds: vec![(format!("/metadata/labels/{}", escaped(key)), json!(to))],
        template_from: None,
    };
    if value.is_none() {
        let ops =
            label_ops(vm, "/metadata", key, to).map_err(|why| format!("{why}: not changed"))?;
        patch.ops.extend(ops);
        patch.words.push(format!("add label {to}"));
    }
    if vm.pointer("/spec/template").is_some_and(Value::is_object) {
        template_patch(vm, key, to, &mut patch)?;
    }
    Ok(patch)
}

/// The template's label to `to`, where it differs.
fn template_patch(vm: &Value, key: &str, to: &str, patch: &mut VmPatch) -> Result<(), String> {
    let template = label_at(vm, "/spec/template/metadata", key);
    patch.holds.push((
        format!("/spec/template/metadata/labels/{}", escaped(key)),
        json!(to),
    ));
    if template.as_ref() == Some(&json!(to)) {
        return Ok(());
    }
    let ops = label_ops(vm, "/spec/template/metadata", key, to)
        .map_err(|why| format!("spec.{why}: not changed"))?;
    patch.ops.extend(ops);
    patch.words.push(match &template {
        None => format!("copy {to} to the template"),
        Some(old) => format!("template label {} -> {to}", shown(Some(old))),
    });
    patch.template_from = Some(template.unwrap_or(Value::Null));
    Ok(())
}

/// A JSON pointer token: `~` as `~0`, `/` as `~1`.
fn escaped(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The operations that set `labels[key]` to `to` under the map at `base` (`/metadata`,
/// `/spec/template/metadata`), each pinned by a `test`; `Err` when a member on the way is not a
/// map.
fn label_ops(object: &Value, base: &str, key: &str, to: &str) -> Result<Vec<Value>, String> {
    let parent = object.pointer(base);
    let labels_path = format!("{base}/labels");
    let key_path = format!("{labels_path}/{}", escaped(key));
    let shown_path = |p: &str| p.trim_start_matches('/').replace('/', ".");
    Ok(match parent {
        None | Some(Value::Null) => vec![
            json!({"op": "test", "path": base, "value": null}),
            json!({"op": "add", "path": base, "value": {"labels": {key: to}}}),
        ],
        Some(Value::Object(parent)) => match parent.get("labels") {
            None | Some(Value::Null) => vec![
                json!({"op": "test", "path": labels_path, "value": null}),
                json!({"op": "add", "path": labels_path, "value": {key: to}}),
            ],
            Some(Value::Object(labels)) => match labels.get(key) {
                None => vec![
                    json!({"op": "test", "path": labels_path, "value": labels}),
                    json!({"op": "add", "path": key_path, "value": to}),
                ],
                Some(old) => vec![
                    json!({"op": "test", "path": key_path, "value": old}),
                    json!({"op": "replace", "path": key_path, "value": to}),
                ],
            },
            Some(_) => return Err(format!("{}: not a map", shown_path(&labels_path))),
        },
        Some(_) => return Err(format!("{}: not a map", shown_path(base))),
    })
}

/// `labels[key]` under `base`.
fn label_at(object: &Value, base: &str, key: &str) -> Option<Value> {
    staleness::label_in(object.pointer(&format!("{base}/labels")), key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pinned_label_operations() {
        let key = "harvesterhci.io/maintain-mode-strategy";
        let path = "/metadata/labels/harvesterhci.io~1maintain-mode-strategy";
        let cases = [
            (
                json!({"metadata": {"labels": {key: "Shutdown"}}}),
                json!([{"op": "test", "path": path, "value": "Shutdown"},
                       {"op": "replace", "path": path, "value": "Migrate"}]),
            ),
            (
                json!({"metadata": {"labels": {"app": "web"}}}),
                json!([{"op": "test", "path": "/metadata/labels", "value": {"app": "web"}},
                       {"op": "add", "path": path, "value": "Migrate"}]),
            ),
            (
                json!({"metadata": {"name": "x"}}),
                json!([{"op": "test", "path": "/metadata/labels", "value": null},
                       {"op": "add", "path": "/metadata/labels", "value": {key: "Migrate"}}]),
            ),
            (
                json!({"metadata": {"labels": null}}),
                json!([{"op": "test", "path": "/metadata/labels", "value": null},
                       {"op": "add", "path": "/metadata/labels", "value": {key: "Migrate"}}]),
            ),
        ];
        for (object, want) in cases {
            let got = label_ops(&object, "/metadata", key, "Migrate").map(Value::Array);
            assert_eq!(got, Ok(want), "{object}");
        }
        let template = json!({"spec": {"template": {"spec": {}}}});
        assert_eq!(
            label_ops(&template, "/spec/template/metadata", key, "Migrate").map(Value::Array),
            Ok(
                json!([{"op": "test", "path": "/spec/template/metadata", "value": null},
                      {"op": "add", "path": "/spec/template/metadata", "value": {"labels": {key: "Migrate"}}}])
            )
        );
        assert_eq!(
            label_ops(
                &json!({"metadata": {"labels": "x"}}),
                "/metadata",
                key,
                "Migrate"
            ),
            Err("metadata.labels: not a map".to_owned())
        );
        assert_eq!(escaped("a~b/c"), "a~0b~1c");
    }
}
