//! What a [`RecordingCluster`] recorded, as a kwctl session to replay.

use serde::{Deserialize, Serialize};

use super::RecordingCluster;

impl RecordingCluster {
    /// A kwctl session (`kwctl run --allow-context-aware --replay-host-capabilities-interactions
    /// FILE`) replaying the calls recorded so far: each request as kwctl's tagged YAML
    /// (`!KubernetesGetResource ...`), each answer `type: Success` with the JSON `payload` or
    /// `type: Error` with the cluster side's `message`. Calls refused before they reach the
    /// cluster (denied capability, unreadable request) are not part of a session.
    pub fn session_yaml(&self) -> Result<String, serde_yaml::Error> {
        let mut exchanges = Vec::new();
        for record in self.lock().iter() {
            if let Some((request, answer)) = &record.exchange {
                exchanges.push(Exchange {
                    request: serde_yaml::to_string(request)?,
                    response: match answer {
                        Ok(payload) => Response::Success {
                            payload: payload.clone(),
                        },
                        Err(message) => Response::Error {
                            message: message.clone(),
                        },
                    },
                });
            }
        }
        serde_yaml::to_string(&exchanges)
    }
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(tag = "type")]
pub(super) struct Exchange {
    pub(super) request: String,
    pub(super) response: Response,
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
#[serde(tag = "type")]
pub(super) enum Response {
    Success { payload: String },
    Error { message: String },
}
