//! The `validate` payload, parsed only as far as routing needs, in one pass: a VirtualMachine's
//! `object` is read straight into its view ([`RequestObject::Vm`]) as the payload is read; every other
//! `object`, `oldObject` and the settings stay borrowed raw JSON until a rule needs them.
//!
//! The one pass reads `object` as a view only when `request.kind` came before it (the API server
//! writes it first). Whatever the one pass cannot read, the payload is read again with `object`
//! raw ([`Reading::Raw`]), so that every answer, and every message, is the one of reading the
//! object's own text.

use std::borrow::Cow;
use std::cell::Cell;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::view;
use crate::vm::Vm;

#[derive(Deserialize)]
pub(crate) struct Payload<'a> {
    #[serde(borrow)]
    pub(crate) request: Request<'a>,
    #[serde(borrow, default)]
    pub(crate) settings: Option<&'a RawValue>,
}

/// The fields of a Kubernetes `AdmissionRequest` the policy reads. Like the SDK's
/// `KubernetesAdmissionRequest` it accepts camelCase and snake_case names and defaults what is missing.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(crate) struct Request<'a> {
    #[serde(borrow, deserialize_with = "routed")]
    pub(crate) kind: Kind<'a>,
    #[serde(borrow)]
    pub(crate) operation: Cow<'a, str>,
    #[serde(borrow)]
    pub(crate) namespace: Option<Cow<'a, str>>,
    #[serde(borrow, alias = "subResource")]
    pub(crate) sub_resource: Option<Cow<'a, str>>,
    #[serde(borrow)]
    pub(crate) object: Option<RequestObject<'a>>,
    #[serde(borrow, alias = "oldObject")]
    pub(crate) old_object: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub(crate) struct Kind<'a> {
    #[serde(borrow)]
    pub(crate) group: Cow<'a, str>,
    #[serde(borrow)]
    pub(crate) kind: Cow<'a, str>,
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
    /// The one pass, before a `request.kind` naming a VirtualMachine.
    Views,
    /// The one pass, after it: `object` is read as the VM's view.
    Vm,
}

thread_local! {
    static READING: Cell<Reading> = const { Cell::new(Reading::Raw) };
}

/// `request.kind`, noting for `object` whether it names a VirtualMachine.
fn routed<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Kind<'de>, D::Error> {
    let kind = Kind::deserialize(deserializer)?;
    if READING.get() != Reading::Raw {
        let vm = kind.group == "kubevirt.io" && kind.kind == "VirtualMachine";
        READING.set(if vm { Reading::Vm } else { Reading::Views });
    }
    Ok(kind)
}

impl<'de: 'a, 'a> Deserialize<'de> for RequestObject<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if READING.get() != Reading::Vm {
            return <&RawValue>::deserialize(deserializer).map(RequestObject::Raw);
        }
        match view::read_in::<Vm, D>(deserializer)? {
            Some(vm) => Ok(RequestObject::Vm(Box::new(vm))),
            // Not an object: the raw reading words the answer.
            None => Err(D::Error::custom("object: not an object")),
        }
    }
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
        READING.set(reading);
        let payload = serde_json::from_str(text);
        READING.set(Reading::Raw);
        payload.map_err(|e| format!("invalid validation payload: {e}"))
    }
}

impl Request<'_> {
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
