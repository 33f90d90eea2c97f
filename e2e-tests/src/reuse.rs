//! A case on a reused instance: twice on one [`Session`], the second time on the instance the
//! first request left behind (as the plugin's drain judges every VM), each answer judged against
//! `expect` and compared with the fresh instance's.

use std::sync::Arc;

use policy_host::{Evaluation, PolicyHost, host::Error};
use serde_json::{Value, json};

use crate::cases::Case;

/// The case on a fresh instance ([`Case::run`]'s check), then twice on one session: each answer
/// meets `expect` and equals the fresh instance's.
pub fn run(case: &Case, host: &PolicyHost) -> Result<(), Error> {
    let (request, fresh, cluster) = case.evaluate(host)?;
    case.judge(&request, &fresh, &cluster.calls())?;
    on_a_session(case, host, &request, &outcome(&fresh)?)
}

/// `request` (the case's) twice on one session: each answer meets `expect` and is `fresh`.
fn on_a_session(
    case: &Case,
    host: &PolicyHost,
    request: &Value,
    fresh: &Value,
) -> Result<(), Error> {
    let mut session = host.session(&case.settings)?;
    for round in ["a session's first request", "a session's reused instance"] {
        let cluster = Arc::new(case.cluster()?);
        session.set_cluster(cluster.clone());
        let evaluation = session.evaluate(request)?;
        let judged = case.judge(request, &evaluation, &cluster.calls());
        judged.map_err(|e| format!("{round}: {e}"))?;
        if &outcome(&evaluation)? != fresh {
            return Err(format!("{round}: not the fresh instance's answer").into());
        }
    }
    Ok(())
}

/// An evaluation as JSON: the AdmissionResponse, or the settings' refusal.
fn outcome(evaluation: &Evaluation) -> Result<Value, Error> {
    Ok(match evaluation {
        Evaluation::SettingsRefused(message) => json!({"settingsRefused": message}),
        Evaluation::Answered(answer) => serde_json::to_value(&answer.response)?,
    })
}
