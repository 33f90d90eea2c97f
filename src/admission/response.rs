//! The bytes `validate` answers: a Kubewarden `ValidationResponse` that always carries the warnings.

use serde::Serialize;

use crate::admission::verdict::{BAD_REQUEST, Verdict};
use crate::object::splice::Spliced;

/// The SDK's `ValidationResponse` field for field, as it goes on the wire, except that
/// `mutated_object` is the request's object spliced (`splice`), written straight into the answer.
/// The SDK holds it as a `serde_json::Value`, whose serialisation would rewrite numbers serde_json
/// cannot hold exactly and sort the keys.
#[derive(Serialize)]
struct ValidationResponse<'m, 'a, 'e> {
    accepted: bool,
    message: Option<String>,
    code: Option<u16>,
    mutated_object: Option<&'m Spliced<'a, 'e>>,
    audit_annotations: Option<()>,
    warnings: Option<Vec<String>>,
}

/// Accept (with `mutated_object` when the object changed) or reject, with the verdict's warnings.
pub(crate) fn respond(verdict: Verdict, mutated_object: Option<Spliced>) -> Vec<u8> {
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
    let capacity = 1024 + mutated_object.as_ref().map_or(0, Spliced::written_len);
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
