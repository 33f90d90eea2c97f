//! The pipeline: gate (G1–G5) → mutation (M) → validation (V), answering Kubewarden's bytes.

use kubewarden_policy_sdk::settings::SettingsValidationResponse;
use serde_json::Value;

use crate::request::{Operation, Payload, Request, parse_object};
use crate::response;
use crate::review::Review;
use crate::settings::Settings;
use crate::verdict::{MISCONFIGURED, UNPROCESSABLE, Verdict};
use crate::vm::{FieldError, Object};
use crate::{eviction, kubevirt, labels};

/// What the gate routes a request to.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    VirtualMachine,
    KubeVirt,
}

/// The `validate` waPC function.
pub fn validate(payload: &[u8]) -> Vec<u8> {
    let payload = match Payload::parse(payload) {
        Ok(payload) => payload,
        Err(message) => return response::bad_request(message),
    };
    let request = &payload.request;
    let Some((target, operation)) = gate(request) else {
        return response::accept();
    };
    let settings = match Settings::load(payload.settings_json().as_bytes()) {
        Ok(settings) => settings,
        Err(message) => {
            return response::reject(format!("invalid policy settings: {message}"), MISCONFIGURED);
        }
    };
    let object = match parse_object(request.object) {
        Ok(Some(object)) => object,
        Ok(None) => return response::reject("object: missing".to_owned(), UNPROCESSABLE),
        Err(why) => return response::reject(format!("object: {why}"), UNPROCESSABLE),
    };
    let review = Review::new(operation, &settings, request.old_object);
    match target {
        Target::VirtualMachine => virtual_machine(object, &review),
        Target::KubeVirt => {
            let mut verdict = Verdict::default();
            kubevirt::validate(&object, &settings.kubevirt, &mut verdict);
            response::respond(verdict, None)
        }
    }
}

/// G1–G3: which rules apply; `None` means accept untouched.
fn gate(request: &Request) -> Option<(Target, Operation)> {
    if request.kind.group != "kubevirt.io" || request.is_subresource() {
        return None;
    }
    let target = match request.kind.kind.as_ref() {
        "VirtualMachine" => Target::VirtualMachine,
        "KubeVirt" => Target::KubeVirt,
        _ => return None,
    };
    Some((target, request.operation()?))
}

/// Mutation, then validation of the mutated object.
fn virtual_machine(mut vm: Object, review: &Review) -> Vec<u8> {
    if let Err(FieldError(message)) = labels::check_shape(&vm) {
        return response::reject(message, UNPROCESSABLE);
    }
    let settings = review.settings;
    let had_own_eviction_strategy = crate::vm::eviction_strategy(&vm).is_some();
    let mut changed = false;
    if settings.mutate {
        changed |= labels::default_label(&mut vm, &settings.label_key, &settings.default_strategy);
        changed |= labels::propagate_label(&mut vm, &settings.label_key);
        if let Some(default) = &settings.eviction_strategy.default {
            changed |= eviction::default_strategy(&mut vm, default);
        }
    }
    let mut verdict = Verdict::default();
    labels::validate(&vm, review, &mut verdict);
    changed |= eviction::validate(&mut vm, had_own_eviction_strategy, review, &mut verdict);
    response::respond(verdict, changed.then_some(Value::Object(vm)))
}

/// The `validate_settings` waPC function.
pub fn validate_settings(payload: &[u8]) -> Vec<u8> {
    let response = match Settings::load(payload) {
        Ok(_) => SettingsValidationResponse {
            valid: true,
            message: None,
        },
        Err(message) => SettingsValidationResponse {
            valid: false,
            message: Some(message),
        },
    };
    serde_json::to_vec(&response)
        .unwrap_or_else(|_| br#"{"valid":false,"message":"cannot serialize the answer"}"#.to_vec())
}
