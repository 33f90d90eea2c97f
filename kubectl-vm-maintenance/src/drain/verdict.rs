//! The policy's verdict on a VM: its answer to a CREATE of it, as Kubewarden's audit scanner asks
//! it, on the real module with the dump as the cluster.

use policy_host::{Evaluation, Session};
use serde_json::{Value, json};

use crate::drain::rows::{Verdict, VerdictKind};

/// The user the audit scanner's requests carry.
const AUDIT_USER: &str = "system:serviceaccount:kubewarden:kubewarden-audit-scanner";

/// The policy's answer to a CREATE of the VM, as the audit scanner asks it.
pub(super) fn verdict(
    vm: &Value,
    namespace: &str,
    name: Option<&str>,
    session: &mut Session,
) -> Verdict {
    let gvk = json!({"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"});
    let gvr = json!({"group": "kubevirt.io", "version": "v1", "resource": "virtualmachines"});
    let request = json!({
        "uid": format!("vm-maintenance-{namespace}-{}", name.unwrap_or_default()),
        "kind": gvk,
        "resource": gvr,
        "requestKind": gvk,
        "requestResource": gvr,
        "name": name.unwrap_or_default(),
        "namespace": namespace,
        "operation": "CREATE",
        "userInfo": {"username": AUDIT_USER, "groups": ["system:serviceaccounts", "system:authenticated"]},
        "object": vm,
        "dryRun": false,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
    });
    match session.evaluate(&request) {
        Err(error) => Verdict::error(format!("the host failed: {error}")),
        Ok(Evaluation::SettingsRefused(message)) => {
            Verdict::error(format!("settings refused: {message}"))
        }
        Ok(Evaluation::Answered(answer)) => {
            let response = &answer.response;
            let warnings = response.warnings.clone().unwrap_or_default();
            if !response.allowed {
                let status = response.status.as_ref();
                return Verdict {
                    kind: VerdictKind::Rejected,
                    message: status.and_then(|s| s.message.clone()),
                    code: status.and_then(|s| s.code),
                    warnings,
                    patch: None,
                };
            }
            let patch = answer
                .patch
                .as_ref()
                .and_then(|p| serde_json::to_value(p).ok());
            Verdict {
                kind: if patch.is_some() {
                    VerdictKind::Mutated
                } else {
                    VerdictKind::Allowed
                },
                message: None,
                code: None,
                warnings,
                patch,
            }
        }
    }
}
