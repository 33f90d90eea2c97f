//! `kubectl vm-maintenance sync`: bring the cluster's objects in line with the policy, once.
//! The plan (this file) is what would be written: the maintenance label added to a VM without
//! it (`defaultStrategy`) and copied into its template where they differ, one PATCH of the VM;
//! the VMI's and each launcher Pod's label set to the VM's value where they differ; with
//! `--restart-stale`, a restart of each running VM whose VMI carries a stale `LiveMigrate` and
//! cannot live-migrate, in batches. An invalid value is never changed (as the policy keeps it,
//! docs/rules.md V2), only reported. [`crate::apply`] sends the plan.
//!
//! Every patch is a JSON patch (RFC 6902) whose `test` pins what it replaces, so that an object
//! changed since it was read is never overwritten: an existing key by its value; a key absent
//! from an existing labels map by that map (its parent); an absent (or `null`) labels map, or
//! `metadata` of the template, by a `test` of `null` at that path, which the API server's JSON
//! patch (evanphx/json-patch, as KubeVirt's own patches use it) passes only when the member is
//! absent or `null`.

use std::collections::BTreeMap;
use std::time::Duration;

use cluster_model::restart::RunStrategy;
use serde::Serialize;
use serde_json::{Value, json};
use vm_maintenance_strategy::settings::Settings;

use crate::columns::{Columns, Layout};
use crate::input::Dump;
use crate::label_sync::LabelSync;
use crate::maintenance::Extra;
use crate::running::{Running, Vmi};
use crate::staleness::{self, shown};

const LIVE_MIGRATE: &str = "LiveMigrate";

/// What `sync` was asked.
#[derive(Debug, Clone)]
pub struct Options {
    /// `--restart-stale`: plan the restarts too.
    pub restart_stale: bool,
    /// `--batch-size`: restarts per batch (at least 1).
    pub batch_size: usize,
    /// `--batch-interval`: the wait between two batches.
    pub batch_interval: Duration,
}

/// The plan, and after `--apply` what became of each write. Serialized as `-o json`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// The label key (`labelKey`).
    pub label_key: String,
    /// The value a VM without the label gets (`defaultStrategy`).
    pub default_strategy: String,
    /// What the KubeVirt CR does with the key (K4).
    pub label_sync: LabelSync,
    /// `plan` (nothing written), `apply`, or `dryRun` (sent with `dryRun=All`).
    pub mode: Mode,
    /// The writes, in the order they are sent: per VM its patch, its VMI's, its Pods'; then the
    /// restarts, batch by batch.
    pub writes: Vec<Write>,
    /// What is not changed, and why (invalid values, restarts not planned or refused).
    pub not_changed: Vec<Finding>,
    /// The restart batches: size and interval.
    pub restart_batches: Batches,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Mode {
    Plan,
    Apply,
    DryRun,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Batches {
    pub count: usize,
    pub size: usize,
    pub interval_seconds: f64,
}

/// One write.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Write {
    pub namespace: String,
    /// `VirtualMachine`, `VirtualMachineInstance` or `Pod`.
    pub kind: &'static str,
    pub name: String,
    /// The VM the write is for.
    pub vm: String,
    /// `patch`, or `update` (the `virtualmachines/restart` subresource, as RBAC names it).
    pub verb: &'static str,
    /// The API path the write goes to.
    pub path: String,
    /// What it does, in words.
    pub change: String,
    /// The label before and after (`null` for a restart).
    pub label: Option<LabelChange>,
    /// For a VMI's or Pod's label: the KubeVirt CR syncs the key, so virt-controller would bring
    /// it to the template's value anyway.
    pub kube_virt_syncs: bool,
    /// The JSON patch (`application/json-patch+json`), or the restart's body.
    pub body: Value,
    /// For a restart: its batch, from 1.
    pub batch: Option<usize>,
    /// After `--apply`: what became of it (`null`: not sent).
    pub result: Option<Outcome>,
    /// The API server's answer or why it was skipped.
    pub message: Option<String>,
    /// What the object must hold once written: `(JSON pointer, value)`; a write that failed
    /// its `test` counts as done when the object holds them all already.
    #[serde(skip)]
    pub holds: Vec<(String, Value)>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelChange {
    pub from: Option<Value>,
    pub to: Value,
    /// For a VM: its template's label before (`null`: unset, or no change to the template).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub template_from: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome {
    /// Written (or, with `--dry-run=server`, accepted).
    Done,
    /// Its `test` failed and the object holds the value already (KubeVirt's sync, Harvester, a
    /// person): nothing to write.
    AlreadyDone,
    /// Its `test` failed: the object changed since it was read; not overwritten.
    Conflict,
    /// The API server or KubeVirt refused it.
    Failed,
    /// Not sent: a write it depends on failed, or an earlier restart batch did.
    Skipped,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::AlreadyDone => "already done",
            Outcome::Conflict => "conflict",
            Outcome::Failed => "failed",
            Outcome::Skipped => "skipped",
        }
    }

    /// The write did what it was for.
    pub fn succeeded(self) -> bool {
        matches!(self, Outcome::Done | Outcome::AlreadyDone)
    }
}

/// An object left alone, and why.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub namespace: String,
    pub kind: &'static str,
    pub name: String,
    pub message: String,
}

impl Write {
    /// `patch virtualmachines prod/web-01`, `update virtualmachines/restart prod/web-01`: the
    /// verb and resource as RBAC names them.
    pub fn described(&self) -> String {
        let resource = match (self.kind, self.verb) {
            ("VirtualMachine", "update") => "virtualmachines/restart",
            ("VirtualMachine", _) => "virtualmachines",
            ("VirtualMachineInstance", _) => "virtualmachineinstances",
            _ => "pods",
        };
        format!("{} {resource} {}/{}", self.verb, self.namespace, self.name)
    }

    pub fn is_restart(&self) -> bool {
        self.batch.is_some()
    }
}

fn text<'v>(value: &'v Value, pointer: &str) -> Option<&'v str> {
    value.pointer(pointer).and_then(Value::as_str)
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

/// `/apis/kubevirt.io/v1/namespaces/NS/virtualmachines/NAME` and the like.
pub fn object_path(kind: &str, namespace: &str, name: &str) -> String {
    match kind {
        "VirtualMachine" => {
            format!("/apis/kubevirt.io/v1/namespaces/{namespace}/virtualmachines/{name}")
        }
        "VirtualMachineInstance" => {
            format!("/apis/kubevirt.io/v1/namespaces/{namespace}/virtualmachineinstances/{name}")
        }
        _ => format!("/api/v1/namespaces/{namespace}/pods/{name}"),
    }
}

/// The restart subresource of a VM (KubeVirt v1.9.0 `pkg/virt-api/rest/lifecycle.go`
/// `RestartVMRequestHandler`).
pub fn restart_path(namespace: &str, name: &str) -> String {
    format!(
        "/apis/subresources.kubevirt.io/v1/namespaces/{namespace}/virtualmachines/{name}/restart"
    )
}

/// The plan for the objects of `dump` and `extra`.
pub fn plan(
    dump: &Dump,
    extra: &Extra,
    settings: &Settings,
    sync: LabelSync,
    options: &Options,
) -> Plan {
    let key: &str = &settings.label_key;
    let running = Running::new(extra);
    let cluster = dump
        .kubevirts
        .first()
        .and_then(|cr| text(cr, "/spec/configuration/evictionStrategy"));
    let mut vms: Vec<&Value> = dump.vms.iter().collect();
    let name_of = |vm: &Value| {
        (
            text(vm, "/metadata/namespace")
                .unwrap_or("default")
                .to_owned(),
            text(vm, "/metadata/name").unwrap_or_default().to_owned(),
        )
    };
    vms.sort_by_key(|vm| name_of(vm));
    let mut planner = Planner {
        key,
        settings,
        syncs: sync.synced(),
        writes: Vec::new(),
        not_changed: Vec::new(),
        restarts: Vec::new(),
    };
    for vm in vms {
        let (namespace, name) = name_of(vm);
        if name.is_empty() {
            continue;
        }
        let vmi = running.vmi(&namespace, &name);
        planner.labels(vm, &namespace, &name, vmi.as_ref());
        if let Some(vmi) = &vmi {
            planner.restart(vm, &namespace, &name, vmi, cluster, options.restart_stale);
        }
    }
    let size = options.batch_size.max(1);
    let count = planner.restarts.len().div_ceil(size);
    for (index, mut restart) in planner.restarts.into_iter().enumerate() {
        let batch = index / size + 1;
        restart.batch = Some(batch);
        restart.change = format!("restart (batch {batch}/{count}): {}", restart.change);
        planner.writes.push(restart);
    }
    Plan {
        label_key: key.to_owned(),
        default_strategy: settings.default_strategy.to_string(),
        label_sync: sync,
        mode: Mode::Plan,
        writes: planner.writes,
        not_changed: planner.not_changed,
        restart_batches: Batches {
            count,
            size,
            interval_seconds: options.batch_interval.as_secs_f64(),
        },
    }
}

struct Planner<'a> {
    key: &'a str,
    settings: &'a Settings,
    /// The KubeVirt CR syncs the key.
    syncs: bool,
    writes: Vec<Write>,
    not_changed: Vec<Finding>,
    restarts: Vec<Write>,
}

impl Planner<'_> {
    fn finding(&mut self, namespace: &str, kind: &'static str, name: &str, message: String) {
        self.not_changed.push(Finding {
            namespace: namespace.to_owned(),
            kind,
            name: name.to_owned(),
            message,
        });
    }

    /// The VM's label and template, then its VMI's and Pods' labels.
    fn labels(&mut self, vm: &Value, namespace: &str, name: &str, vmi: Option<&Vmi>) {
        let key = self.key;
        let value = label_at(vm, "/metadata", key);
        let to = match &value {
            None => self.settings.default_strategy.to_string(),
            Some(Value::String(v)) if self.settings.allowed_strategies.iter().any(|a| a == v) => {
                v.clone()
            }
            Some(other) => {
                let allowed: Vec<&str> = self
                    .settings
                    .allowed_strategies
                    .iter()
                    .map(AsRef::as_ref)
                    .collect();
                self.finding(
                    namespace,
                    "VirtualMachine",
                    name,
                    format!(
                        "label {} is not in allowedStrategies ({}): not changed, and not copied to its template, VMI or Pods (the policy keeps it too)",
                        shown(Some(other)),
                        allowed.join(", ")
                    ),
                );
                return;
            }
        };
        let mut ops = Vec::new();
        let mut words = Vec::new();
        let mut holds = vec![(format!("/metadata/labels/{}", escaped(key)), json!(to))];
        if value.is_none() {
            match label_ops(vm, "/metadata", key, &to) {
                Ok(more) => ops.extend(more),
                Err(why) => {
                    self.finding(
                        namespace,
                        "VirtualMachine",
                        name,
                        format!("{why}: not changed"),
                    );
                    return;
                }
            }
            words.push(format!("add label {to}"));
        }
        let mut template_from = None;
        if vm.pointer("/spec/template").is_some_and(Value::is_object) {
            let template = label_at(vm, "/spec/template/metadata", key);
            holds.push((
                format!("/spec/template/metadata/labels/{}", escaped(key)),
                json!(to),
            ));
            if template.as_ref() != Some(&json!(to)) {
                match label_ops(vm, "/spec/template/metadata", key, &to) {
                    Ok(more) => ops.extend(more),
                    Err(why) => {
                        self.finding(
                            namespace,
                            "VirtualMachine",
                            name,
                            format!("spec.{why}: not changed"),
                        );
                        return;
                    }
                }
                words.push(match &template {
                    None => format!("copy {to} to the template"),
                    Some(old) => format!("template label {} -> {to}", shown(Some(old))),
                });
                template_from = Some(template.unwrap_or(Value::Null));
            }
        }
        if !ops.is_empty() {
            self.writes.push(Write {
                namespace: namespace.to_owned(),
                kind: "VirtualMachine",
                name: name.to_owned(),
                vm: name.to_owned(),
                verb: "patch",
                path: object_path("VirtualMachine", namespace, name),
                change: words.join(", "),
                label: Some(LabelChange {
                    from: value.clone(),
                    to: json!(to),
                    template_from,
                }),
                kube_virt_syncs: false,
                body: Value::Array(ops),
                batch: None,
                result: None,
                message: None,
                holds,
            });
        }
        let Some(vmi) = vmi else {
            return;
        };
        let mut objects = vec![("VirtualMachineInstance", vmi.vmi)];
        objects.extend(vmi.pods.iter().map(|pod| ("Pod", *pod)));
        for (kind, object) in objects {
            self.running_label(kind, object, namespace, name, &to);
        }
    }

    /// A VMI's or launcher Pod's label to the VM's value `to`.
    fn running_label(
        &mut self,
        kind: &'static str,
        object: &Value,
        namespace: &str,
        vm: &str,
        to: &str,
    ) {
        let object_name = text(object, "/metadata/name").unwrap_or(vm).to_owned();
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
            namespace: namespace.to_owned(),
            kind,
            name: object_name.clone(),
            vm: vm.to_owned(),
            verb: "patch",
            path: object_path(kind, namespace, &object_name),
            change,
            label: Some(LabelChange {
                from,
                to: json!(to),
                template_from: None,
            }),
            kube_virt_syncs: self.syncs,
            body: Value::Array(ops),
            batch: None,
            result: None,
            message: None,
            holds: vec![(format!("/metadata/labels/{}", escaped(self.key)), json!(to))],
        });
    }

    /// A VMI whose own `LiveMigrate` is stale and that cannot live-migrate: every drain blocks
    /// on it until it restarts. Restarted with `--restart-stale` unless KubeVirt refuses to
    /// (runStrategy `Halted` or `Once`, 409); every other stale VMI is reported.
    fn restart(
        &mut self,
        vm: &Value,
        namespace: &str,
        name: &str,
        vmi: &Vmi,
        cluster: Option<&str>,
        restart_stale: bool,
    ) {
        let state = staleness::eviction(vmi.vmi, Some(vm), cluster);
        if !state.stale {
            return;
        }
        let own = state.vmi.as_deref().unwrap_or_default();
        let current = state.current.as_deref().unwrap_or("None");
        let stale = format!("evictionStrategy {own} on the VMI, {current} now");
        let condition = live_migratable(vmi.vmi);
        let not_migratable = condition
            .as_ref()
            .is_some_and(|(status, _)| status == "False");
        if own != LIVE_MIGRATE || !not_migratable {
            let why = match (&condition, own == LIVE_MIGRATE) {
                (_, false) => {
                    "only a stale LiveMigrate that cannot migrate blocks a drain".to_owned()
                }
                (Some((status, _)), true) => format!("LiveMigratable={status}: it migrates"),
                (None, true) => "no LiveMigratable condition on the VMI".to_owned(),
            };
            self.finding(
                namespace,
                "VirtualMachineInstance",
                name,
                format!("{stale}: not restarted ({why}); it gets {current} at its next restart"),
            );
            return;
        }
        let reason = condition.map(|(_, reason)| reason).unwrap_or_default();
        let run = RunStrategy::of(Some(vm));
        let refused = match run.value.as_deref() {
            Some(value @ ("Halted" | "Once")) => Some(format!(
                "runStrategy {value}: KubeVirt refuses a restart (409); stop and start it by hand"
            )),
            None => Some(format!(
                "runStrategy not readable ({}): KubeVirt cannot restart it",
                run.field
            )),
            Some(_) => None,
        };
        if let Some(refused) = refused {
            self.finding(
                namespace,
                "VirtualMachine",
                name,
                format!(
                    "{stale}, LiveMigratable=False ({reason}): every drain blocks on it; {refused}"
                ),
            );
            return;
        }
        if !restart_stale {
            self.finding(
                namespace,
                "VirtualMachine",
                name,
                format!("{stale}, LiveMigratable=False ({reason}): every drain blocks on it; --restart-stale restarts it"),
            );
            return;
        }
        self.restarts.push(Write {
            namespace: namespace.to_owned(),
            kind: "VirtualMachine",
            name: name.to_owned(),
            vm: name.to_owned(),
            verb: "update",
            path: restart_path(namespace, name),
            change: format!("evictionStrategy {own} -> {current} (LiveMigratable=False: {reason})"),
            label: None,
            kube_virt_syncs: false,
            body: json!({}),
            batch: None,
            result: None,
            message: None,
            holds: Vec::new(),
        });
    }
}

/// The VMI's `LiveMigratable` condition: its status and reason.
fn live_migratable(vmi: &Value) -> Option<(String, String)> {
    let conditions = vmi
        .pointer("/status/conditions")
        .and_then(Value::as_array)?;
    let condition = conditions
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("LiveMigratable"))?;
    let field = |name: &str| {
        condition
            .get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Some((field("status"), field("reason")))
}

/// A Go-style duration: `90s`, `1m30s`, `500ms`, `2h`, `0s` (or a bare number of seconds).
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let bad = || format!("{text:?}: not a duration such as 30s, 1m30s or 500ms");
    if let Ok(seconds) = text.parse::<u64>() {
        return Ok(Duration::from_secs(seconds));
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .ok_or_else(bad)?;
        let number: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = match &rest[..unit_end] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        rest = &rest[unit_end..];
        total += Duration::from_secs_f64(number * unit);
    }
    Ok(total)
}

/// 0: nothing to do, or everything done; 2: a plan not applied, or a write that did not
/// succeed.
pub fn exit_code(plan: &Plan) -> u8 {
    let all_done = plan
        .writes
        .iter()
        .all(|w| w.result.is_some_and(Outcome::succeeded));
    if plan.writes.is_empty() || (plan.mode != Mode::Plan && all_done) {
        0
    } else {
        2
    }
}

/// The plan as a table (`-o wide`: with each write's JSON patch or body), then the counts, what
/// failed, what is not changed, and what the KubeVirt CR does with the label.
pub fn table(plan: &Plan, layout: &Layout) -> String {
    let sent = plan.mode != Mode::Plan;
    let mut header = vec!["NAMESPACE", "KIND", "NAME", "CHANGE"];
    if sent {
        header.push("RESULT");
    }
    if layout.wide() {
        header.push("BODY");
    }
    let mut table = Columns::new(header);
    for write in &plan.writes {
        let kind = match write.kind {
            "VirtualMachine" => "vm",
            "VirtualMachineInstance" => "vmi",
            _ => "pod",
        };
        let mut cells = vec![
            write.namespace.clone(),
            kind.to_owned(),
            write.name.clone(),
            write.change.clone(),
        ];
        if sent {
            cells.push(
                write
                    .result
                    .map(Outcome::as_str)
                    .unwrap_or("not sent")
                    .to_owned(),
            );
        }
        if layout.wide() {
            cells.push(write.body.to_string());
        }
        table.row(cells);
    }
    if !layout.headers {
        return table.render(false);
    }
    let mut text = String::new();
    if plan.writes.is_empty() {
        text.push_str("Nothing to write.\n");
    } else {
        text.push_str(&table.render(true));
        text.push('\n');
    }
    let count = |kind: &str, restart: bool| {
        plan.writes
            .iter()
            .filter(|w| w.kind == kind && w.is_restart() == restart)
            .count()
    };
    let restarts = count("VirtualMachine", true);
    let mut summary = format!(
        "{} writes: {} VMs, {} VMIs, {} Pods patched",
        plan.writes.len(),
        count("VirtualMachine", false),
        count("VirtualMachineInstance", false),
        count("Pod", false),
    );
    if restarts > 0 {
        let b = &plan.restart_batches;
        summary.push_str(&format!(
            "; {restarts} VMs restarted in {} batches of {} every {}",
            b.count,
            b.size,
            shown_seconds(b.interval_seconds)
        ));
    }
    match plan.mode {
        Mode::Plan if !plan.writes.is_empty() => {
            summary.push_str(". Nothing was written: --apply writes them.");
        }
        Mode::Plan => summary.push('.'),
        Mode::Apply | Mode::DryRun => {
            let mut by: BTreeMap<&str, usize> = BTreeMap::new();
            for write in &plan.writes {
                *by.entry(write.result.map(Outcome::as_str).unwrap_or("not sent"))
                    .or_default() += 1;
            }
            let counts: Vec<String> = [
                "done",
                "already done",
                "conflict",
                "failed",
                "skipped",
                "not sent",
            ]
            .iter()
            .filter_map(|o| by.get(o).map(|n| format!("{n} {o}")))
            .collect();
            let how = if plan.mode == Mode::DryRun {
                " (server-side dry run: nothing changed)"
            } else {
                ""
            };
            if !counts.is_empty() {
                summary.push_str(&format!(": {}{how}.", counts.join(", ")));
            } else {
                summary.push_str(&format!("{how}."));
            }
        }
    }
    layout.line(&summary, &mut text);
    let section = |title: &str, lines: Vec<String>, text: &mut String| {
        if !lines.is_empty() {
            text.push('\n');
            layout.section(title, &lines, text);
        }
    };
    let results = |outcome: Outcome| {
        plan.writes
            .iter()
            .filter(|w| w.result == Some(outcome))
            .map(|w| {
                format!(
                    "{}: {}",
                    w.described(),
                    w.message.as_deref().unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
    };
    section(
        "Conflicts (changed since read, not overwritten)",
        results(Outcome::Conflict),
        &mut text,
    );
    section("Failed", results(Outcome::Failed), &mut text);
    section("Skipped", results(Outcome::Skipped), &mut text);
    section(
        "Not changed",
        plan.not_changed
            .iter()
            .map(|f| format!("{}/{} ({}): {}", f.namespace, f.name, f.kind, f.message))
            .collect(),
        &mut text,
    );
    section(
        "KubeVirt label sync",
        vec![plan.label_sync.message.clone()],
        &mut text,
    );
    text
}

/// `60s`, `1.5s`.
fn shown_seconds(seconds: f64) -> String {
    format!("{seconds}s")
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

    #[test]
    fn durations() {
        let cases = [
            ("0s", Some(0.0)),
            ("90s", Some(90.0)),
            ("1m30s", Some(90.0)),
            ("500ms", Some(0.5)),
            ("2h", Some(7200.0)),
            ("1.5s", Some(1.5)),
            ("30", Some(30.0)),
            ("", None),
            ("1x", None),
            ("m", None),
        ];
        for (text, want) in cases {
            let got = parse_duration(text).ok().map(|d| d.as_secs_f64());
            assert_eq!(got, want, "{text}");
        }
    }
}
