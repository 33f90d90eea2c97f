//! The plan's data, serialized as `-o json`: the writes in the order they are sent, what is left
//! alone and why, and after `--apply` what became of each write.

use serde::Serialize;
use serde_json::{Value, json};

use crate::context::Exit;
use crate::running::label_sync::LabelSync;

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

/// The kind of object a write goes to (`-o json`: its `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Kind {
    #[serde(rename = "VirtualMachine")]
    Vm,
    #[serde(rename = "VirtualMachineInstance")]
    Vmi,
    Pod,
}

impl Kind {
    /// `VirtualMachine`, `VirtualMachineInstance`, `Pod`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Vm => "VirtualMachine",
            Kind::Vmi => "VirtualMachineInstance",
            Kind::Pod => "Pod",
        }
    }

    /// The resource, as the API path and RBAC name it.
    pub fn plural(self) -> &'static str {
        match self {
            Kind::Vm => "virtualmachines",
            Kind::Vmi => "virtualmachineinstances",
            Kind::Pod => "pods",
        }
    }

    /// The table's KIND column, as kubectl's short names.
    pub fn short(self) -> &'static str {
        match self {
            Kind::Vm => "vm",
            Kind::Vmi => "vmi",
            Kind::Pod => "pod",
        }
    }
}

/// The write's verb, as RBAC names it (`-o json`: its `verb`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verb {
    /// A JSON patch of the object.
    Patch,
    /// A PUT of the `virtualmachines/restart` subresource.
    Update,
}

impl Verb {
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Patch => "patch",
            Verb::Update => "update",
        }
    }
}

/// One write.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Write {
    pub namespace: String,
    pub kind: Kind,
    pub name: String,
    /// The VM the write is for.
    pub vm: String,
    pub verb: Verb,
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
    pub kind: Kind,
    pub name: String,
    pub message: String,
}

impl Write {
    /// `patch virtualmachines prod/web-01`, `update virtualmachines/restart prod/web-01`: the
    /// verb and resource as RBAC names them.
    pub fn described(&self) -> String {
        let resource = match self.verb {
            Verb::Update => "virtualmachines/restart",
            Verb::Patch => self.kind.plural(),
        };
        format!(
            "{} {resource} {}/{}",
            self.verb.as_str(),
            self.namespace,
            self.name
        )
    }

    pub fn is_restart(&self) -> bool {
        self.batch.is_some()
    }

    /// A JSON patch of the object `namespace/name` of `kind`, for `vm`; nothing more known yet.
    pub(super) fn patch(
        kind: Kind,
        namespace: &str,
        name: &str,
        vm: &str,
        change: String,
        body: Vec<Value>,
    ) -> Write {
        Write {
            namespace: namespace.to_owned(),
            kind,
            name: name.to_owned(),
            vm: vm.to_owned(),
            verb: Verb::Patch,
            path: object_path(kind, namespace, name),
            change,
            label: None,
            kube_virt_syncs: false,
            body: Value::Array(body),
            batch: None,
            result: None,
            message: None,
            holds: Vec::new(),
        }
    }

    /// A restart of the VM `namespace/name` (an empty body), its batch not yet known.
    pub(super) fn restart(namespace: &str, name: &str, change: String) -> Write {
        Write {
            verb: Verb::Update,
            path: restart_path(namespace, name),
            body: json!({}),
            ..Write::patch(Kind::Vm, namespace, name, name, change, Vec::new())
        }
    }
}

/// `/apis/kubevirt.io/v1/namespaces/NS/virtualmachines/NAME` and the like.
pub fn object_path(kind: Kind, namespace: &str, name: &str) -> String {
    let plural = kind.plural();
    match kind {
        Kind::Vm | Kind::Vmi => {
            format!("/apis/kubevirt.io/v1/namespaces/{namespace}/{plural}/{name}")
        }
        Kind::Pod => format!("/api/v1/namespaces/{namespace}/{plural}/{name}"),
    }
}

/// The restart subresource of a VM (KubeVirt v1.9.0 `pkg/virt-api/rest/lifecycle.go`
/// `RestartVMRequestHandler`).
pub fn restart_path(namespace: &str, name: &str) -> String {
    format!(
        "/apis/subresources.kubevirt.io/v1/namespaces/{namespace}/virtualmachines/{name}/restart"
    )
}

/// Clear: nothing to do, or everything done; Blocked: a plan not applied, or a write that did
/// not succeed.
pub fn exit_code(plan: &Plan) -> Exit {
    let all_done = plan
        .writes
        .iter()
        .all(|w| w.result.is_some_and(Outcome::succeeded));
    if plan.writes.is_empty() || (plan.mode != Mode::Plan && all_done) {
        Exit::Clear
    } else {
        Exit::Blocked
    }
}
