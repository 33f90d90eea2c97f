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
use crate::cluster::Cluster;
use crate::host::{Error, Instance, PolicyHost, plain_host_call};

/// The cluster the session's instance asks, swapped between requests; `None`: no cluster, only
/// the log call is answered (as [`PolicyHost::instance`]).
type Slot = Arc<RwLock<Option<Arc<Cluster>>>>;

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

    /// The same, its context-aware calls answered (and recorded) by `cluster` until
    /// [`Session::set_cluster`] names another.
    pub fn session_with_cluster(
        &self,
        settings: &Value,
        cluster: Arc<Cluster>,
    ) -> Result<Session<'_>, Error> {
        Session::open(self, settings, Some(cluster))
    }
}

impl<'h> Session<'h> {
    fn open(
        host: &'h PolicyHost,
        settings: &Value,
        cluster: Option<Arc<Cluster>>,
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

    /// The cluster the following requests' context-aware calls are answered (and recorded) by.
    pub fn set_cluster(&mut self, cluster: Arc<Cluster>) {
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
