//! Many evaluations on one instance: settings validated once, then `validate` for request after
//! request on the same instance, the way a long-running policy-server worker serves a policy.
//!
//! [`PolicyHost::evaluate`] makes a fresh instance for every request and validates the settings
//! before each; that costs an instantiation (memory mapped, initialised, unmapped) and a
//! `validate_settings` per request, most of the time of a short `validate`. A [`Session`] pays
//! them once.
//!
//! Reusing the instance is sound because the policy keeps no state between calls: `wapc_init`
//! only registers the waPC functions, and every `validate` builds what it reads (the request, the
//! settings from the payload, its cluster lookups) afresh and drops it on return, so the only
//! thing a call leaves behind is the allocator's free memory (and a linear memory as large as the
//! largest call needed). The answers are therefore those a fresh instance gives, byte for byte.
//! A call that fails (a trap: a panic of the policy, an exhausted memory) may have stopped the
//! guest half-way, so the instance is dropped then and the next request gets a fresh one.

use std::sync::{Arc, PoisonError, RwLock};

use serde_json::Value;

use crate::admission::{Evaluation, answer_of, settings_refusal, validate_payload};
use crate::cluster::HostCalls;
use crate::host::{Error, Instance, PolicyHost, plain_host_call};

/// The cluster the session's instance asks, swapped between requests; `None`: no cluster, only
/// the log call is answered (as [`PolicyHost::instance`]).
type Slot = Arc<RwLock<Option<Arc<dyn HostCalls>>>>;

/// Settings `validate_settings` has judged, and one instance that serves request after request.
/// Made by [`PolicyHost::session`] / [`PolicyHost::session_with_cluster`].
pub struct Session<'h> {
    host: &'h PolicyHost,
    settings: Value,
    /// `validate_settings`' refusal (its message, empty when it gave none), or `None`.
    refused: Option<String>,
    cluster: Slot,
    /// `None` after a failed call, until the next request makes a fresh one.
    instance: Option<Instance>,
}

impl PolicyHost {
    /// A session whose instance offers no host capability but logging: `validate_settings` runs
    /// now, once, on its instance.
    pub fn session(&self, settings: &Value) -> Result<Session<'_>, Error> {
        Session::open(self, settings, None)
    }

    /// The same, its context-aware calls answered by `cluster` until
    /// [`Session::set_cluster`] names another.
    pub fn session_with_cluster(
        &self,
        settings: &Value,
        cluster: Arc<dyn HostCalls>,
    ) -> Result<Session<'_>, Error> {
        Session::open(self, settings, Some(cluster))
    }
}

impl<'h> Session<'h> {
    fn open(
        host: &'h PolicyHost,
        settings: &Value,
        cluster: Option<Arc<dyn HostCalls>>,
    ) -> Result<Session<'h>, Error> {
        let mut session = Session {
            host,
            settings: settings.clone(),
            refused: None,
            cluster: Arc::new(RwLock::new(cluster)),
            instance: None,
        };
        let instance = session.instance()?;
        session.refused = settings_refusal(settings, |function, payload| {
            instance.call(function, payload)
        })?;
        Ok(session)
    }

    /// The message of `validate_settings` when it refused the settings (empty when it gave
    /// none); `None` when it accepted them.
    pub fn settings_refused(&self) -> Option<&str> {
        self.refused.as_deref()
    }

    /// The settings every request is judged with.
    pub fn settings(&self) -> &Value {
        &self.settings
    }

    /// The cluster the following requests' context-aware calls are answered by.
    pub fn set_cluster(&mut self, cluster: Arc<dyn HostCalls>) {
        *self.cluster.write().unwrap_or_else(PoisonError::into_inner) = Some(cluster);
    }

    /// `validate` of one AdmissionRequest with the session's settings, answered as
    /// [`PolicyHost::evaluate`] answers it; [`Evaluation::SettingsRefused`] for every request
    /// when the settings were refused.
    pub fn evaluate(&mut self, request: &Value) -> Result<Evaluation, Error> {
        if let Some(message) = &self.refused {
            return Ok(Evaluation::SettingsRefused(message.clone()));
        }
        let payload = validate_payload(request, &self.settings)?;
        let result = self.instance()?.call("validate", &payload);
        if result.is_err() {
            self.instance = None;
        }
        Ok(Evaluation::Answered(Box::new(answer_of(request, result)?)))
    }

    /// The session's instance, made when there is none.
    fn instance(&mut self) -> Result<&Instance, Error> {
        let instance = match self.instance.take() {
            Some(instance) => instance,
            None => {
                let slot = Arc::clone(&self.cluster);
                self.host.instance_calling(Box::new(
                    move |_id, binding, namespace, operation, payload| {
                        let cluster = slot.read().unwrap_or_else(PoisonError::into_inner).clone();
                        Ok(match cluster {
                            Some(cluster) => {
                                cluster.host_call(binding, namespace, operation, payload)?
                            }
                            None => plain_host_call(binding, namespace, operation)?,
                        })
                    },
                ))?
            }
        };
        Ok(self.instance.insert(instance))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A waPC guest that counts its calls in a global: `validate_settings` (the only 17-byte
    /// function name) and `validate` add one; `validate` refuses with the count as its message
    /// (`{"accepted":false,"message":"N"}`), and traps on a payload over 4 KiB.
    const COUNTER: &str = r#"(module
      (import "wapc" "__guest_request" (func $guest_request (param i32 i32)))
      (import "wapc" "__guest_response" (func $guest_response (param i32 i32)))
      (import "wapc" "__guest_error" (func $guest_error (param i32 i32)))
      (memory (export "memory") 4)
      (global $count (mut i32) (i32.const 0))
      (data (i32.const 0) "{\"valid\":true}")
      (data (i32.const 32) "{\"accepted\":false,\"message\":\"0\"}")
      (func (export "__guest_call") (param $op_len i32) (param $req_len i32) (result i32)
        (call $guest_request (i32.const 1024) (i32.const 2048))
        (global.set $count (i32.add (global.get $count) (i32.const 1)))
        (if (i32.eq (local.get $op_len) (i32.const 17))
          (then
            (call $guest_response (i32.const 0) (i32.const 14))
            (return (i32.const 1))))
        (if (i32.gt_u (local.get $req_len) (i32.const 4096)) (then unreachable))
        (i32.store8 (i32.const 61) (i32.add (i32.const 48) (global.get $count)))
        (call $guest_response (i32.const 32) (i32.const 32))
        (i32.const 1)))"#;

    /// The message of the answer: the guest's count, or the 500 of a trap.
    fn message(evaluation: Result<Evaluation, Error>) -> String {
        let evaluation = evaluation.unwrap_or_else(|e| panic!("{e}"));
        let status = evaluation.answer().and_then(|a| a.response.status.clone());
        status.and_then(|s| s.message).unwrap_or_default()
    }

    fn request(padding: usize) -> Value {
        json!({"uid": "u", "object": {"pad": "x".repeat(padding)}})
    }

    #[test]
    fn one_instance_serves_every_request_and_a_trap_gets_a_fresh_one() {
        let host = PolicyHost::from_bytes(COUNTER.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        let settings = json!({});
        let fresh: Vec<String> = (0..2)
            .map(|_| message(host.evaluate(&request(0), &settings)))
            .collect();
        assert_eq!(
            fresh,
            ["2", "2"],
            "a fresh instance each: settings, then validate"
        );
        let mut session = host.session(&settings).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(session.settings_refused(), None);
        let counts: Vec<String> = (0..3)
            .map(|_| message(session.evaluate(&request(0))))
            .collect();
        assert_eq!(counts, ["2", "3", "4"], "settings once, then one instance");
        let trapped = message(session.evaluate(&request(5000)));
        assert!(trapped.starts_with("internal server error: "), "{trapped}");
        assert_eq!(
            message(session.evaluate(&request(0))),
            "1",
            "after a trap the next request gets a fresh instance"
        );
    }
}
