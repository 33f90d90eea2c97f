//! The bytes `validate` answers: a Kubewarden `ValidationResponse` that always carries the warnings.

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::splice::Spliced;
use crate::verdict::{BAD_REQUEST, Verdict};

/// The SDK's `ValidationResponse` field for field, as it goes on the wire, except that
/// `mutated_object` is the request's object spliced (`splice`), written straight into the answer.
/// The SDK holds it as a `serde_json::Value`, whose serialisation would rewrite numbers serde_json
/// cannot hold exactly and sort the keys.
#[derive(Serialize)]
struct ValidationResponse<'m, 'a, 'e> {
    accepted: bool,
    message: Option<String>,
    code: Option<u16>,
    mutated_object: Option<&'m Mutated<'a, 'e>>,
    audit_annotations: Option<()>,
    warnings: Option<Vec<String>>,
}

/// A changed object: spliced, or re-serialised whole when the text does not take the edits
/// (`policy::virtual_machine`).
pub(crate) enum Mutated<'a, 'e> {
    Spliced(Spliced<'a, 'e>),
    Whole(Value),
}

impl Serialize for Mutated<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Mutated::Spliced(spliced) => spliced.serialize(serializer),
            Mutated::Whole(value) => value.serialize(serializer),
        }
    }
}

/// Accept (with `mutated_object` when the object changed) or reject, with the verdict's warnings.
pub(crate) fn respond(verdict: Verdict, mutated_object: Option<Mutated>) -> Vec<u8> {
    let warnings = Some(verdict.warnings).filter(|w| !w.is_empty());
    let response = match verdict.rejection {
        Some((message, code)) => ValidationResponse {
            accepted: false,
            message: Some(message),
            code: Some(code),
            mutated_object: None,
            audit_annotations: None,
            warnings,
        },
        None => ValidationResponse {
            accepted: true,
            message: None,
            code: None,
            mutated_object: mutated_object.as_ref(),
            audit_annotations: None,
            warnings,
        },
    };
    // The envelope and messages fit in 1 KiB; a mutation adds the object's own length.
    let capacity = 1024
        + match &mutated_object {
            Some(Mutated::Spliced(spliced)) => spliced.written_len(),
            _ => 0,
        };
    let mut answer = Vec::with_capacity(capacity);
    serde_json::to_writer(&mut answer, &response).map(|()| answer).unwrap_or_else(|_| {
        // Serializing strings and raw JSON cannot fail; answer a rejection if it ever does.
        br#"{"accepted":false,"message":"internal error: cannot serialize the response","code":500}"#
            .to_vec()
    })
}

/// A plain acceptance, untouched.
pub(crate) fn accept() -> Vec<u8> {
    respond(Verdict::default(), None)
}

/// A rejection with the given code and no warnings.
pub(crate) fn reject(message: String, code: u16) -> Vec<u8> {
    respond(
        Verdict {
            rejection: Some((message, code)),
            warnings: Vec::new(),
        },
        None,
    )
}

/// A payload that is not a validation request.
pub(crate) fn bad_request(message: String) -> Vec<u8> {
    reject(message, BAD_REQUEST)
}
