//! The `validate` payload, parsed only as far as routing needs, in one pass: a VirtualMachine's
//! `object` is read straight into its view ([`RequestObject::Vm`]) as the payload is read; every other
//! `object`, `oldObject` and the settings stay borrowed raw JSON until a rule needs them. The
//! payload is read by the views' reader as typed structs (`src/view/typed.rs`): serde's messages
//! for a member of the wrong type, a member given twice refused, unknown members skipped.
//!
//! The one pass reads `object` as a view only when `request.kind` came before it (the API server
//! writes it first). Whatever the one pass cannot read, the payload is read again with `object`
//! raw ([`Reading::Raw`]), so that every answer, and every message, is the one of reading the
//! object's own text.

use std::borrow::Cow;
use std::cell::Cell;

use serde_json::value::RawValue;

use crate::view::typed::{Named, Typed};
use crate::view::{self, AsSlot, Field, Members, Slot};
use crate::vm::Vm;

/// The payload: its request and the settings' raw text.
pub(crate) struct Payload<'a> {
    pub(crate) request: Request<'a>,
    pub(crate) settings: Option<&'a RawValue>,
}

/// The payload as the reader fills it (`request` is required).
#[derive(Default)]
struct Envelope<'a> {
    request: Option<Request<'a>>,
    settings: Option<&'a RawValue>,
}

impl<'a> Members<'a> for Envelope<'a> {
    fn slot(&mut self, key: &Cow<'a, str>) -> Slot<'_, 'a> {
        match key.as_ref() {
            "request" => Slot::Typed(Typed::Object(&mut self.request)),
            "settings" => self.settings.slot(),
            _ => Slot::Skip,
        }
    }
    fn once(&self) -> Option<&'static [&'static str]> {
        Some(&["request", "settings"])
    }
}

impl Named for Envelope<'_> {
    const EXPECTING: &'static str = "struct Payload";
}

/// The fields of a Kubernetes `AdmissionRequest` the policy reads. Like the SDK's
/// `KubernetesAdmissionRequest` it accepts camelCase and snake_case names and defaults what is missing.
#[derive(Default)]
pub(crate) struct Request<'a> {
    pub(crate) kind: Kind<'a>,
    pub(crate) operation: Cow<'a, str>,
    pub(crate) namespace: Option<String>,
    pub(crate) sub_resource: Option<String>,
    /// `object` as raw JSON, or (the one pass) a VirtualMachine's view: see [`Request::object`].
    object: Option<&'a RawValue>,
    vm: Field<Vm<'a>>,
    pub(crate) old_object: Option<&'a RawValue>,
}

const REQUEST_MEMBERS: &[&str] = &[
    "kind",
    "operation",
    "namespace",
    "subResource",
    "sub_resource",
    "object",
    "oldObject",
    "old_object",
];

impl<'a> Members<'a> for Request<'a> {
    fn slot(&mut self, key: &Cow<'a, str>) -> Slot<'_, 'a> {
        match key.as_ref() {
            "kind" => Slot::Typed(Typed::Object(&mut self.kind)),
            "operation" => Slot::Typed(Typed::Text(&mut self.operation)),
            "namespace" => self.namespace.slot(),
            "subResource" | "sub_resource" => self.sub_resource.slot(),
            "object" if READING.get() == Reading::Views && self.kind.is_vm() => self.vm.slot(),
            "object" => self.object.slot(),
            "oldObject" | "old_object" => self.old_object.slot(),
            _ => Slot::Skip,
        }
    }
    fn once(&self) -> Option<&'static [&'static str]> {
        Some(REQUEST_MEMBERS)
    }
}

impl Named for Request<'_> {
    const EXPECTING: &'static str = "struct Request";
}

#[derive(Default)]
pub(crate) struct Kind<'a> {
    pub(crate) group: Cow<'a, str>,
    pub(crate) kind: Cow<'a, str>,
}

impl<'a> Members<'a> for Kind<'a> {
    fn slot(&mut self, key: &Cow<'a, str>) -> Slot<'_, 'a> {
        match key.as_ref() {
            "group" => Slot::Typed(Typed::Text(&mut self.group)),
            "kind" => Slot::Typed(Typed::Text(&mut self.kind)),
            _ => Slot::Skip,
        }
    }
    fn once(&self) -> Option<&'static [&'static str]> {
        Some(&["group", "kind"])
    }
}

impl Named for Kind<'_> {
    const EXPECTING: &'static str = "struct Kind";
}

impl Kind<'_> {
    fn is_vm(&self) -> bool {
        self.group == "kubevirt.io" && self.kind == "VirtualMachine"
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    Create,
    Update,
}

/// `request.object`: a VirtualMachine's view read in the payload's one pass, or raw JSON.
pub(crate) enum RequestObject<'a> {
    Raw(&'a RawValue),
    Vm(Box<Vm<'a>>),
}

/// How `request.object` is read in the pass under way (one request at a time per instance).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// Raw JSON, whatever the kind.
    Raw,
    /// The one pass: `object` is read as the VM's view when `request.kind` named a
    /// VirtualMachine before it.
    Views,
}

thread_local! {
    static READING: Cell<Reading> = const { Cell::new(Reading::Raw) };
}

impl<'a> Payload<'a> {
    /// The payload's text: it is read as text, not bytes (as the settings are). JSON is UTF-8,
    /// and the hosts write the payload with serde_json.
    pub(crate) fn text(bytes: &[u8]) -> Result<&str, String> {
        std::str::from_utf8(bytes)
            .map_err(|e| format!("invalid validation payload: not UTF-8: {e}"))
    }

    /// The payload, in one pass where it can be (module comment).
    pub(crate) fn parse(text: &'a str) -> Result<Payload<'a>, String> {
        Self::read(text, Reading::Views).or_else(|_| Self::read(text, Reading::Raw))
    }

    /// The payload read again with `object` raw: for the splice of a mutated VM.
    pub(crate) fn parse_raw(text: &'a str) -> Result<Payload<'a>, String> {
        Self::read(text, Reading::Raw)
    }

    fn read(text: &'a str, reading: Reading) -> Result<Payload<'a>, String> {
        let mut envelope = Envelope::default();
        READING.set(reading);
        let read = view::read_typed(text, &mut envelope);
        READING.set(Reading::Raw);
        read.map_err(|e| format!("invalid validation payload: {e}"))?;
        match envelope.request {
            Some(request) => Ok(Payload {
                request,
                settings: envelope.settings,
            }),
            None => Err("invalid validation payload: missing field `request`".to_owned()),
        }
    }
}

impl<'a> Request<'a> {
    /// `object`: `None` when missing or `null`; an error when the one pass met a VirtualMachine's
    /// `object` that is not an object (as reading its own text says).
    pub(crate) fn object(&mut self) -> Result<Option<RequestObject<'a>>, String> {
        match std::mem::take(&mut self.vm) {
            Field::Object(vm) => Ok(Some(RequestObject::Vm(Box::new(vm)))),
            Field::Other(kind) => Err(format!("must be a JSON object, got {kind}")),
            Field::Null => Ok(None),
            Field::Absent => Ok(self
                .object
                .filter(|raw| raw.get() != "null")
                .map(RequestObject::Raw)),
        }
    }

    /// CREATE or UPDATE; every other operation is not evaluated (G2).
    pub(crate) fn operation(&self) -> Option<Operation> {
        match self.operation.as_ref() {
            "CREATE" => Some(Operation::Create),
            "UPDATE" => Some(Operation::Update),
            _ => None,
        }
    }

    pub(crate) fn is_subresource(&self) -> bool {
        self.sub_resource.as_deref().is_some_and(|s| !s.is_empty())
    }
}
