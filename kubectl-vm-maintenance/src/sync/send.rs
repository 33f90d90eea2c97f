//! Sending `sync`'s plan to the live cluster: each write in order, the patches first, then the
//! restarts batch by batch, `--batch-interval` apart, stopping at the first batch with a write
//! that failed. A patch whose `test` failed (the API server's 422 for a JSON patch that does not
//! apply) is a conflict, unless the object, read again, holds the wanted value already; the
//! object is never written again. 401 and 403 stop the run: the error names the verb, the
//! resource and the object.

use std::collections::BTreeSet;

use kube::Client;
use kube::core::Status;
use serde_json::{Value, json};

use crate::context::PROGRAM;
use crate::input::live::{self, Target};
use crate::sync::{Kind, Mode, Outcome, Plan, Write};

/// The message of the API server's 422 for a JSON patch that does not apply to the object
/// (k8s.io/apiserver `patch.go` `applyJSPatch`: `NewGenericServerResponse(422, ...)`, whose own
/// message hides the json-patch error).
const PATCH_NOT_APPLIED: &str = "the server rejected our request due to an error in our request";

/// How the plan is sent.
pub struct Sending<'a> {
    pub target: &'a Target,
    /// `--dry-run=server`: `dryRun=All` on every write, and no wait between batches.
    pub dry_run: bool,
    /// `--batch-interval`.
    pub interval: std::time::Duration,
}

/// Sends the writes of `plan` and records what became of each; `Err` (exit 1) for a kubeconfig
/// or client error and for 401/403 on a write, after which nothing more is sent.
pub fn apply(plan: &mut Plan, sending: &Sending) -> Result<(), String> {
    plan.mode = if sending.dry_run {
        Mode::DryRun
    } else {
        Mode::Apply
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let client = runtime.block_on(live::client(sending.target))?;
    let mut failed_vms: BTreeSet<(String, String)> = BTreeSet::new();
    let (patches, restarts): (Vec<usize>, Vec<usize>) =
        (0..plan.writes.len()).partition(|&i| !plan.writes[i].is_restart());
    for index in patches {
        let write = &mut plan.writes[index];
        let owner = (write.namespace.clone(), write.vm.clone());
        if write.kind != Kind::Vm && failed_vms.contains(&owner) {
            write.result = Some(Outcome::Skipped);
            write.message = Some("the VM's own patch did not succeed".to_owned());
            continue;
        }
        runtime.block_on(send(&client, write, sending.dry_run))?;
        if write.kind == Kind::Vm && !write.result.is_some_and(Outcome::succeeded) {
            failed_vms.insert(owner);
        }
    }
    let mut batches: Vec<Vec<usize>> = Vec::new();
    for index in restarts {
        let batch = plan.writes[index].batch.unwrap_or(1);
        if batches.len() < batch {
            batches.resize_with(batch, Vec::new);
        }
        batches[batch - 1].push(index);
    }
    let mut stopped: Option<usize> = None;
    for (number, batch) in batches.iter().enumerate() {
        if let Some(at) = stopped {
            for &index in batch {
                let write = &mut plan.writes[index];
                write.result = Some(Outcome::Skipped);
                write.message = Some(format!("batch {at} failed: no later batch is sent"));
            }
            continue;
        }
        if number > 0 && !sending.dry_run && !sending.interval.is_zero() {
            eprintln!(
                "{PROGRAM}: waiting {}s before restart batch {}",
                sending.interval.as_secs_f64(),
                number + 1
            );
            std::thread::sleep(sending.interval);
        }
        for &index in batch {
            runtime.block_on(send(&client, &mut plan.writes[index], sending.dry_run))?;
        }
        if batch
            .iter()
            .any(|&i| !plan.writes[i].result.is_some_and(Outcome::succeeded))
        {
            stopped = Some(number + 1);
        }
    }
    Ok(())
}

/// The request of one write.
fn request(write: &Write, dry_run: bool) -> Result<http::Request<Vec<u8>>, String> {
    let mut body = write.body.clone();
    let path = if dry_run {
        format!("{}?dryRun=All", write.path)
    } else {
        write.path.clone()
    };
    let builder = if write.is_restart() {
        if dry_run && let Some(options) = body.as_object_mut() {
            options.insert("dryRun".to_owned(), json!(["All"]));
        }
        http::Request::put(&path).header(http::header::CONTENT_TYPE, "application/json")
    } else {
        http::Request::patch(&path)
            .header(http::header::CONTENT_TYPE, "application/json-patch+json")
    };
    let bytes = serde_json::to_vec(&body).map_err(|e| e.to_string())?;
    builder.body(bytes).map_err(|e| e.to_string())
}

/// Sends one write and records its outcome; `Err` for 401/403 (the run stops).
async fn send(client: &Client, write: &mut Write, dry_run: bool) -> Result<(), String> {
    let answer = client.request_text(request(write, dry_run)?).await;
    let (outcome, message) = match answer {
        Ok(_) => (Outcome::Done, None),
        Err(kube::Error::Api(status)) if matches!(status.code, 401 | 403) => {
            let what = if status.code == 401 {
                "the API server refused the credentials (401 Unauthorized)".to_owned()
            } else {
                format!(
                    "forbidden (403): {}; the sync role needs it (examples/rbac/sync.yaml)",
                    status.message
                )
            };
            write.result = Some(Outcome::Failed);
            write.message = Some(what.clone());
            return Err(format!(
                "{}: {what}; nothing more was sent",
                write.described()
            ));
        }
        Err(kube::Error::Api(status)) if !write.is_restart() && test_failed(&status) => {
            // Read it again: the value may be there already (KubeVirt's label sync, Harvester,
            // someone else).
            match holds(client, write).await {
                Ok(true) => (
                    Outcome::AlreadyDone,
                    Some("changed since read, and it holds the value already".to_owned()),
                ),
                Ok(false) => (
                    Outcome::Conflict,
                    Some(
                        "changed since read (the patch's test failed): not overwritten; run sync again to plan from what it holds now"
                            .to_owned(),
                    ),
                ),
                Err(why) => (
                    Outcome::Conflict,
                    Some(format!(
                        "changed since read (the patch's test failed), and reading it again failed: {why}"
                    )),
                ),
            }
        }
        Err(kube::Error::Api(status)) => (Outcome::Failed, Some(described(&status))),
        Err(error) => (Outcome::Failed, Some(error.to_string())),
    };
    write.result = Some(outcome);
    write.message = message;
    Ok(())
}

/// The API server's answer in words: `409 Conflict: MESSAGE`.
fn described(status: &Status) -> String {
    let mut text = format!("{}", status.code);
    if !status.reason.is_empty() {
        text.push(' ');
        text.push_str(&status.reason);
    }
    if !status.message.is_empty() {
        text.push_str(": ");
        text.push_str(&status.message);
    }
    text
}

/// A 422 for a JSON patch whose `test` failed: the API server's own generic message, or
/// json-patch's words (`testing value /x failed`, `test operation does not apply`) in the
/// message or a cause.
fn test_failed(status: &Status) -> bool {
    if status.code != 422 {
        return false;
    }
    let says = |text: &str| {
        let text = text.to_ascii_lowercase();
        text == PATCH_NOT_APPLIED
            || (text.contains("test")
                && (text.contains("failed") || text.contains("does not apply")))
    };
    says(&status.message)
        || status
            .details
            .iter()
            .flat_map(|d| &d.causes)
            .any(|c| says(&c.message))
}

/// Whether the object, read again, holds every value the write was for.
async fn holds(client: &Client, write: &Write) -> Result<bool, String> {
    let request = http::Request::get(&write.path)
        .body(Vec::new())
        .map_err(|e| e.to_string())?;
    let object: Value = client.request(request).await.map_err(|e| e.to_string())?;
    Ok(!write.holds.is_empty()
        && write
            .holds
            .iter()
            .all(|(pointer, value)| object.pointer(pointer) == Some(value)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_test_as_the_api_server_answers_it() {
        let status = |code: u16, message: &str, cause: Option<&str>| {
            let mut status: Status = serde_json::from_value(json!({
                "status": "Failure", "code": code, "message": message, "reason": "Invalid"
            }))
            .unwrap_or_else(|e| panic!("{e}"));
            if let Some(cause) = cause {
                status.details = serde_json::from_value(
                    json!({"causes": [{"reason": "UnexpectedServerResponse", "message": cause}]}),
                )
                .ok();
            }
            status
        };
        let cases = [
            (status(422, PATCH_NOT_APPLIED, None), true),
            (
                status(
                    422,
                    "x",
                    Some("testing value /metadata/labels/a failed: test failed"),
                ),
                true,
            ),
            (
                status(
                    422,
                    "jsonpatch test operation does not apply: is missing path: /a",
                    None,
                ),
                true,
            ),
            (
                status(
                    422,
                    "admission webhook \"x\" denied the request: metadata.labels[k]: invalid",
                    None,
                ),
                false,
            ),
            (status(409, PATCH_NOT_APPLIED, None), false),
        ];
        for (status, want) in cases {
            assert_eq!(test_failed(&status), want, "{status:?}");
        }
    }
}
