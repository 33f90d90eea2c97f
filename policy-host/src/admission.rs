//! From the policy's `ValidationResponse` to the AdmissionResponse the API server receives, the way
//! policy-server builds it: the mutated object becomes a base64 RFC 6902 patch against the
//! request's object (`json_patch::diff`), and an error from the module becomes a 500.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

use crate::cluster::HostCalls;
use crate::host::{Error, Instance, PolicyHost};

/// What the module answers from `validate` (Kubewarden's `ValidationResponse`, snake_case).
#[derive(Deserialize, Debug, Clone, PartialEq)]
pub struct ValidationResponse {
    pub accepted: bool,
    pub message: Option<String>,
    pub code: Option<u16>,
    pub mutated_object: Option<Value>,
    pub audit_annotations: Option<HashMap<String, String>>,
    pub warnings: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct SettingsAnswer {
    valid: bool,
    message: Option<String>,
}

/// Kubernetes `admission/v1` AdmissionResponse.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    pub uid: String,
    pub allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit_annotations: Option<HashMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct Status {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
}

/// The outcome of one evaluation.
#[derive(Debug)]
pub enum Evaluation {
    /// `validate_settings` refused the settings (kwctl stops here; policy-server would not start).
    SettingsRefused(String),
    Answered(Box<Answer>),
}

#[derive(Debug)]
pub struct Answer {
    pub response: AdmissionResponse,
    /// The decoded patch, when there is one.
    pub patch: Option<json_patch::Patch>,
    /// The request's object with the patch applied: what the API server would store.
    pub object: Value,
}

impl Evaluation {
    pub fn answer(&self) -> Option<&Answer> {
        match self {
            Evaluation::Answered(answer) => Some(answer),
            Evaluation::SettingsRefused(_) => None,
        }
    }
}

impl PolicyHost {
    /// Evaluates an AdmissionRequest with settings on a fresh instance that offers no host
    /// capability but logging.
    pub fn evaluate(&self, request: &Value, settings: &Value) -> Result<Evaluation, Error> {
        evaluate_on(&self.instance()?, request, settings)
    }

    /// The same, on an instance whose context-aware calls `cluster` answers.
    pub fn evaluate_with_cluster(
        &self,
        request: &Value,
        settings: &Value,
        cluster: Arc<dyn HostCalls>,
    ) -> Result<Evaluation, Error> {
        evaluate_on(&self.instance_with_cluster(cluster)?, request, settings)
    }
}

/// `validate_settings`, then (when valid) `validate`, on one instance.
fn evaluate_on(
    instance: &Instance,
    request: &Value,
    settings: &Value,
) -> Result<Evaluation, Error> {
    evaluate_through(request, settings, |function, payload| {
        instance.call(function, payload)
    })
}

/// `validate_settings`, then (when valid) `validate`, through `call(function, payload)`: the
/// module's waPC functions, or the policy's own functions run natively. The payloads are those
/// policy-server sends (the settings; `{request, settings}`), the answer the AdmissionResponse it
/// builds; an `Err` from `validate` is what a trap is, a 500.
pub fn evaluate_through(
    request: &Value,
    settings: &Value,
    call: impl Fn(&str, &[u8]) -> Result<Vec<u8>, Error>,
) -> Result<Evaluation, Error> {
    if let Some(message) = settings_refusal(settings, &call)? {
        return Ok(Evaluation::SettingsRefused(message));
    }
    let result = call("validate", &validate_payload(request, settings)?);
    Ok(Evaluation::Answered(Box::new(answer_of(request, result)?)))
}

/// `validate_settings` through `call`: `None` when the settings are valid, else the module's
/// message (empty when it gives none).
pub(crate) fn settings_refusal(
    settings: &Value,
    call: impl Fn(&str, &[u8]) -> Result<Vec<u8>, Error>,
) -> Result<Option<String>, Error> {
    let answer: SettingsAnswer =
        serde_json::from_slice(&call("validate_settings", &serde_json::to_vec(settings)?)?)?;
    Ok((!answer.valid).then(|| answer.message.unwrap_or_default()))
}

/// What policy-server sends to `validate`: `{"request": ..., "settings": ...}`.
pub(crate) fn validate_payload(request: &Value, settings: &Value) -> Result<Vec<u8>, Error> {
    #[derive(Serialize)]
    struct Payload<'a> {
        request: &'a Value,
        settings: &'a Value,
    }
    Ok(serde_json::to_vec(&Payload { request, settings })?)
}

/// The answer to `request` from what `validate` returned: its `ValidationResponse`, or (an
/// `Err`, what a trap is) a 500.
pub(crate) fn answer_of(request: &Value, result: Result<Vec<u8>, Error>) -> Result<Answer, Error> {
    let uid = request["uid"].as_str().unwrap_or_default().to_owned();
    let object = request.get("object").cloned().unwrap_or(Value::Null);
    match result {
        Ok(bytes) => admission_response(uid, object, serde_json::from_slice(&bytes)?),
        Err(error) => Ok(Answer {
            response: AdmissionResponse {
                uid,
                allowed: false,
                status: Some(Status {
                    message: Some(format!("internal server error: {error}")),
                    code: Some(500),
                }),
                ..AdmissionResponse::default()
            },
            patch: None,
            object,
        }),
    }
}

/// Builds the AdmissionResponse and applies its patch to `object`.
pub fn admission_response(
    uid: String,
    mut object: Value,
    validation: ValidationResponse,
) -> Result<Answer, Error> {
    let mut response = AdmissionResponse {
        uid,
        allowed: validation.accepted,
        audit_annotations: validation.audit_annotations,
        warnings: validation.warnings,
        ..AdmissionResponse::default()
    };
    if !validation.accepted {
        response.status = Some(Status {
            message: validation.message,
            code: validation.code,
        });
    }
    let mut patch = None;
    if let (true, Some(mutated)) = (validation.accepted, validation.mutated_object) {
        let diff = json_patch::diff(&object, &mutated);
        if !diff.0.is_empty() {
            json_patch::patch(&mut object, &diff)?;
            if object != mutated {
                return Err("the patch does not reproduce mutated_object".into());
            }
            response.patch_type = Some("JSONPatch".to_owned());
            response.patch = Some(BASE64.encode(serde_json::to_vec(&diff)?));
            patch = Some(diff);
        }
    }
    Ok(Answer {
        response,
        patch,
        object,
    })
}
