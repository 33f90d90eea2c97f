//! The pipeline (docs/rules.md): gate (G1–G5) → mutation (M) → validation (V, or K for the
//! KubeVirt CR), answering Kubewarden's bytes. Every rule family offers the same two steps; the
//! pipeline alone decides whether the object changed, by comparing the paths mutations own, and
//! adds the one warning about cluster lookups that failed.

use kubewarden_policy_sdk::settings::SettingsValidationResponse;
use serde_json::value::RawValue;

use crate::admission::request::{Operation, Payload, Request, Target};
use crate::admission::response;
use crate::admission::review::Review;
use crate::admission::verdict::{MISCONFIGURED, UNPROCESSABLE, Verdict};
use crate::cluster::{Cluster, Host};
use crate::object::splice::{Edit, splice_at};
use crate::object::view::Scalar;
use crate::object::vm::{self, OwnedPaths, Vm};
use crate::rules::kubevirt::Cr;
use crate::rules::{eviction, kubevirt, labels, live_update};
use crate::settings::Settings;

/// A mutation step: may edit only the paths its rules own, and may add warnings about what it did.
type Mutation = fn(&mut Vm, &Review, &mut Verdict);
/// A validation step: reads the (mutated) object and adds to the verdict.
type Validation = fn(&Vm, &Review, &mut Verdict);

/// A VirtualMachine: M1, M2, then M3 and V7's `fix`.
const VM_MUTATIONS: [Mutation; 2] = [labels::mutate, eviction::mutate];
/// A VirtualMachine: V1–V5, then V6 and V7, then L1–L9.
const VM_VALIDATIONS: [Validation; 3] =
    [labels::validate, eviction::validate, live_update::validate];
/// The KubeVirt CR is never mutated: K1–K3.
const KUBEVIRT_VALIDATIONS: [fn(&Cr, &Review, &mut Verdict); 1] = [kubevirt::validate];

/// The `validate` waPC function: the cluster is read through Kubewarden's host calls.
pub fn validate(payload: &[u8]) -> Vec<u8> {
    validate_with(payload, &Host::wapc())
}

/// `validate` with the cluster's answers from `cluster` (native tests and tools).
pub fn validate_with(payload: &[u8], cluster: &dyn Cluster) -> Vec<u8> {
    let text = match Payload::text(payload) {
        Ok(text) => text,
        Err(message) => return response::bad_request(message),
    };
    let Payload { request, settings } = match Payload::parse(text) {
        Ok(payload) => payload,
        Err(message) => return response::bad_request(message),
    };
    let Some((target, operation)) = gate(&request) else {
        return response::accept();
    };
    let settings = match Settings::load(settings.map_or("{}", RawValue::get).as_bytes()) {
        Ok(settings) => settings,
        Err(message) => {
            return response::reject(format!("invalid policy settings: {message}"), MISCONFIGURED);
        }
    };
    let context = Context {
        namespace: request.namespace.as_deref(),
        operation,
        settings: &settings,
        cluster,
        payload: text,
        old: request.old_object,
    };
    match target {
        Target::VirtualMachine => {
            let object = request.object.into_vm();
            context.answer(object, Vm::namespace, |vm, review| {
                virtual_machine(vm, text, review)
            })
        }
        Target::KubeVirt => {
            let object = request.object.into_view();
            context.answer(object, Cr::namespace, |cr, review| {
                let mut verdict = Verdict::default();
                KUBEVIRT_VALIDATIONS
                    .iter()
                    .for_each(|step| step(&cr, review, &mut verdict));
                response::respond(verdict, None)
            })
        }
    }
}

/// What the review of a request's object is made of, but the object's own namespace.
struct Context<'a> {
    /// The request's namespace.
    namespace: Option<&'a str>,
    operation: Operation,
    settings: &'a Settings,
    cluster: &'a dyn Cluster,
    payload: &'a str,
    old: Option<&'a RawValue>,
}

impl Context<'_> {
    /// `step`'s answer on the request's object read as `T` (missing or unreadable: 422),
    /// reviewed in the request's namespace, else the object's own. Inlined: each target's code is
    /// then what it would be written out.
    #[inline(always)]
    fn answer<T>(
        &self,
        object: Result<Option<T>, String>,
        own_namespace: impl Fn(&T) -> Option<&str>,
        step: impl FnOnce(T, &Review) -> Vec<u8>,
    ) -> Vec<u8> {
        let unreadable = |why: String| response::reject(format!("object: {why}"), UNPROCESSABLE);
        let object = match object {
            Ok(Some(object)) => object,
            Ok(None) => return unreadable("missing".to_owned()),
            Err(why) => return unreadable(why),
        };
        let namespace = match self.namespace {
            Some(namespace) if !namespace.is_empty() => Some(namespace.to_owned()),
            _ => own_namespace(&object).map(str::to_owned),
        };
        let review = Review::new(
            self.operation,
            self.settings,
            namespace.as_deref(),
            self.cluster,
            self.payload,
            self.old,
        );
        step(object, &review)
    }
}

/// G1–G3: which rules apply; `None` means accept untouched.
fn gate(request: &Request) -> Option<(Target, Operation)> {
    if request.is_subresource() {
        return None;
    }
    Some((request.kind.target()?, request.operation()?))
}

/// G5, mutation, then validation of the mutated object. The mutation steps' warnings follow the
/// validation's: they say what the policy did about what validation found. `payload`: the
/// payload's text, whose `request.object` a mutation splices.
fn virtual_machine(mut vm: Vm, payload: &str, review: &Review) -> Vec<u8> {
    if let Err(message) = labels::check_shape(&vm) {
        return response::reject(message, UNPROCESSABLE);
    }
    if eviction::reads_devices(&vm, review.settings)
        && let Err(why) = vm.load_later()
    {
        return response::reject(format!("object: {why}"), UNPROCESSABLE);
    }
    let key = review.settings.label_key.as_ref();
    let mut done = Verdict::default();
    let before = review.settings.mutate.then(|| vm::owned_values(&vm, key));
    if review.settings.mutate {
        VM_MUTATIONS
            .iter()
            .for_each(|step| step(&mut vm, review, &mut done));
    }
    let mut verdict = Verdict::default();
    VM_VALIDATIONS
        .iter()
        .for_each(|step| step(&vm, review, &mut verdict));
    verdict.warnings.append(&mut done.warnings);
    verdict.warnings.extend(review.cluster.warning());
    let Some(before) = before else {
        return response::respond(verdict, None);
    };
    let after = vm::owned_values(&vm, key);
    if before == after {
        return response::respond(verdict, None);
    }
    // The view is no longer needed: its memory serves the answer.
    drop(vm);
    let paths = OwnedPaths::new(key);
    let Some(changes) = changes(&paths, &before, &after) else {
        return response::reject(
            "object: a mutation removed a value".to_owned(),
            UNPROCESSABLE,
        );
    };
    let edits: Vec<Edit> = changes
        .iter()
        .map(|(path, value)| (*path, &**value))
        .collect();
    match splice_at(payload, &["request", "object"], &edits) {
        Some(spliced) => response::respond(verdict, Some(spliced)),
        // The shape checks refuse such an object before any mutation.
        None => response::reject(
            "object: an edited path is not an object".to_owned(),
            UNPROCESSABLE,
        ),
    }
}

/// The changed owned paths with their new values as JSON text; `None` when a mutation removed a
/// value (none does).
fn changes<'p>(
    paths: &'p OwnedPaths,
    before: &[Option<Scalar>; 3],
    after: &[Option<Scalar>; 3],
) -> Option<Vec<(&'p [&'p str], Box<RawValue>)>> {
    let mut changes = Vec::with_capacity(3);
    for ((path, before), after) in paths.all().into_iter().zip(before).zip(after) {
        match after {
            Some(value) if before.as_ref() != Some(value) => {
                changes.push((path, serde_json::value::to_raw_value(value).ok()?));
            }
            None if before.is_some() => return None,
            _ => {}
        }
    }
    Some(changes)
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
