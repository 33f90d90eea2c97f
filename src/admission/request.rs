//! The `validate` payload, read as far as routing needs, in one pass with the object: when
//! `request.kind` comes before `request.object` (as the API server and policy-server write the
//! request) and names a VirtualMachine, the object is read as the VM's view in the same pass
//! (`Object::Vm`); otherwise it stays borrowed raw JSON (`Object::Text`) for the pipeline to read
//! (the KubeVirt CR, rare, is read there), as do `request.oldObject` and the settings. As the SDK's
//! `KubernetesAdmissionRequest`, the request accepts camelCase and snake_case names and defaults
//! what is missing; unknown members are skipped, a repeated one is refused.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, Error, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::object::view::objects::{Object as Struct, object, objects};
use crate::object::view::{self, Field, Members};
use crate::object::vm::Vm;

/// The payload: its request and the settings' raw text.
pub(crate) struct Payload<'a> {
    pub(crate) request: Request<'a>,
    pub(crate) settings: Option<&'a RawValue>,
}

/// The fields of a Kubernetes `AdmissionRequest` the policy reads.
#[derive(Default)]
pub(crate) struct Request<'a> {
    pub(crate) kind: Kind<'a>,
    pub(crate) operation: Cow<'a, str>,
    pub(crate) namespace: Option<String>,
    pub(crate) sub_resource: Option<String>,
    pub(crate) object: Object<'a>,
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

objects! {
    Kind<'a> => "struct Kind",
}

/// What a kind is evaluated as (G1); other kinds are let through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    VirtualMachine,
    KubeVirt,
}

impl Kind<'_> {
    pub(crate) fn target(&self) -> Option<Target> {
        if self.group != "kubevirt.io" {
            return None;
        }
        match self.kind.as_ref() {
            "VirtualMachine" => Some(Target::VirtualMachine),
            "KubeVirt" => Some(Target::KubeVirt),
            _ => None,
        }
    }
}

/// `request.object` as the payload's reading leaves it. One per request, moved once into the
/// pipeline: a box for the VM's view would only add an allocation.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Object<'a> {
    /// Not read yet: its text (`None`: absent or `null`).
    Text(Option<&'a RawValue>),
    /// Read with the payload, as a VM.
    Vm(Field<Vm<'a>>),
}

impl Default for Object<'_> {
    fn default() -> Self {
        Object::Text(None)
    }
}

impl<'a> Object<'a> {
    /// The object as a VM: `Ok(None)` when absent or `null`, an error for another type.
    pub(crate) fn into_vm(self) -> Result<Option<Vm<'a>>, String> {
        match self {
            Object::Vm(field) => field.into_parsed(),
            text => text.into_view(),
        }
    }

    /// The object as a view of type `T` read from its text, as [`Object::into_vm`]. Only a VM is
    /// read with the payload (the reading and the gate route by the same [`Kind::target`]).
    pub(crate) fn into_view<T: Members<'a> + Default>(self) -> Result<Option<T>, String> {
        match self {
            Object::Text(text) => text.map_or(Ok(None), |text| view::parse(text.get())),
            Object::Vm(_) => Err("read as a VirtualMachine".to_owned()),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Operation {
    Create,
    Update,
}

impl<'a> Payload<'a> {
    /// The payload's text: it is read as text, not bytes (as the settings are). JSON is UTF-8,
    /// and the hosts write the payload with serde_json.
    pub(crate) fn text(bytes: &[u8]) -> Result<&str, String> {
        std::str::from_utf8(bytes)
            .map_err(|e| format!("invalid validation payload: not UTF-8: {e}"))
    }

    /// The payload: an object with a `request` object. Reading the object within the payload can
    /// fail where its text alone reads (serde_json's nesting limit also counts the payload's two
    /// levels), and the object's errors come after the gate's and the settings' (a 422, not a
    /// 400): on any error the payload is read again with the object kept as text, which gives
    /// the answer the object's own reading gives.
    pub(crate) fn parse(text: &'a str) -> Result<Payload<'a>, String> {
        Self::read(text, true).or_else(|_| Self::read(text, false))
    }

    /// One reading; `views`: the object may be read as its kind's view.
    fn read(text: &'a str, views: bool) -> Result<Payload<'a>, String> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        PayloadSeed { views }
            .deserialize(&mut deserializer)
            .and_then(|payload| deserializer.end().map(|()| payload))
            .map_err(|e| format!("invalid validation payload: {e}"))
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

// ---------------------------------------------------------------- the readers
// As serde's derive would read the structs (same errors: `invalid type: ..., expected struct
// Payload`, `missing field `request``, `duplicate field `object``), plus the object's view.

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "camelCase")]
enum PayloadMember {
    Request,
    Settings,
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(field_identifier, rename_all = "camelCase")]
enum RequestMember {
    Kind,
    Operation,
    Namespace,
    #[serde(alias = "sub_resource")]
    SubResource,
    Object,
    #[serde(alias = "old_object")]
    OldObject,
    #[serde(other)]
    Other,
}

impl RequestMember {
    const NAMED: [RequestMember; 6] = [
        RequestMember::Kind,
        RequestMember::Operation,
        RequestMember::Namespace,
        RequestMember::SubResource,
        RequestMember::Object,
        RequestMember::OldObject,
    ];
    const NAMES: [&'static str; 6] = [
        "kind",
        "operation",
        "namespace",
        "subResource",
        "object",
        "oldObject",
    ];
}

struct PayloadSeed {
    views: bool,
}

impl<'a> DeserializeSeed<'a> for PayloadSeed {
    type Value = Payload<'a>;
    fn deserialize<D: Deserializer<'a>>(self, deserializer: D) -> Result<Payload<'a>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'a> Visitor<'a> for PayloadSeed {
    type Value = Payload<'a>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct Payload")
    }
    fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<Payload<'a>, M::Error> {
        let mut request = None;
        let mut settings = None;
        while let Some(member) = map.next_key()? {
            match member {
                PayloadMember::Request if request.is_some() => {
                    return Err(M::Error::duplicate_field("request"));
                }
                PayloadMember::Request => {
                    request = Some(map.next_value_seed(RequestSeed { views: self.views })?);
                }
                PayloadMember::Settings if settings.is_some() => {
                    return Err(M::Error::duplicate_field("settings"));
                }
                PayloadMember::Settings => settings = Some(map.next_value()?),
                PayloadMember::Other => drop(map.next_value::<IgnoredAny>()?),
            }
        }
        Ok(Payload {
            request: request.ok_or_else(|| M::Error::missing_field("request"))?,
            settings: settings.flatten(),
        })
    }
}

struct RequestSeed {
    views: bool,
}

impl<'a> DeserializeSeed<'a> for RequestSeed {
    type Value = Request<'a>;
    fn deserialize<D: Deserializer<'a>>(self, deserializer: D) -> Result<Request<'a>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'a> Visitor<'a> for RequestSeed {
    type Value = Request<'a>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("struct Request")
    }
    fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<Request<'a>, M::Error> {
        let mut request = Request::default();
        let mut seen = [false; 6];
        while let Some(member) = map.next_key::<RequestMember>()? {
            if let Some(at) = RequestMember::NAMED.iter().position(|m| *m == member) {
                if seen[at] {
                    return Err(M::Error::duplicate_field(RequestMember::NAMES[at]));
                }
                seen[at] = true;
            }
            match member {
                RequestMember::Kind => request.kind = map.next_value::<AsObject<Kind>>()?.0,
                RequestMember::Operation => request.operation = map.next_value::<Borrowed>()?.0,
                RequestMember::Namespace => request.namespace = map.next_value()?,
                RequestMember::SubResource => request.sub_resource = map.next_value()?,
                RequestMember::Object => {
                    // `kind` read already (its default, the empty kind, routes nowhere).
                    let target = self.views.then(|| request.kind.target()).flatten();
                    request.object = match target {
                        Some(Target::VirtualMachine) => Object::Vm(read_view(&mut map)?),
                        Some(Target::KubeVirt) | None => Object::Text(map.next_value()?),
                    };
                }
                RequestMember::OldObject => request.old_object = map.next_value()?,
                RequestMember::Other => drop(map.next_value::<IgnoredAny>()?),
            }
        }
        Ok(request)
    }
}

/// The next value as a view of type `T`.
fn read_view<'a, T: Members<'a> + Default, M: MapAccess<'a>>(
    map: &mut M,
) -> Result<Field<T>, M::Error> {
    let mut field = Field::Absent;
    map.next_value_seed(view::seed(&mut field))?;
    Ok(field)
}

/// A struct read through [`object`].
struct AsObject<T>(T);

impl<'a, T: Struct<'a>> Deserialize<'a> for AsObject<T> {
    fn deserialize<D: Deserializer<'a>>(deserializer: D) -> Result<Self, D::Error> {
        object(deserializer).map(AsObject)
    }
}

/// A string borrowed from the text unless it has escapes (serde's `#[serde(borrow)]` of a
/// `Cow<str>`).
struct Borrowed<'a>(Cow<'a, str>);

impl<'a> Deserialize<'a> for Borrowed<'a> {
    fn deserialize<D: Deserializer<'a>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'a> Visitor<'a> for Text {
            type Value = Borrowed<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: Error>(self, v: &'a str) -> Result<Self::Value, E> {
                Ok(Borrowed(Cow::Borrowed(v)))
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Borrowed(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(Text)
    }
}
