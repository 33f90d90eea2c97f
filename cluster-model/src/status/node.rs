//! What holds the node as a whole: a `policy/v1` PodDisruptionBudget with
//! `status.disruptionsAllowed: 0` whose selector matches a running Pod on the node. The drain's
//! eviction of that Pod is refused (429) until the budget allows one. Longhorn's
//! instance-manager budget (`longhorn.io/component=instance-manager`) is kept while a replica on
//! the node is the last healthy one of its volume (longhorn-manager v1.11.2
//! `controller/instance_manager_controller.go` `canDeleteInstanceManagerPDB`, l.1193-1283):
//! that is `LastHealthyReplica`, any other such budget `PodDisruptionBudget`.

use serde_json::Value;

use super::{NodeCause, NodeFinding, Objects, finished, named};
use crate::Object;
use crate::object::ObjectExt;

/// The node's findings, by budget namespace and name.
pub(super) fn findings(node: &str, objects: &Objects) -> Vec<NodeFinding> {
    let pods: Vec<&Value> = objects
        .pods
        .iter()
        .filter(|pod| pod.text_at("/spec/nodeName") == Some(node) && !finished(pod))
        .collect();
    let mut found: Vec<NodeFinding> = objects
        .pdbs
        .iter()
        .filter(|pdb| {
            pdb.pointer("/status/disruptionsAllowed")
                .and_then(Value::as_i64)
                == Some(0)
        })
        .filter_map(|pdb| finding(pdb, &pods, node, objects))
        .collect();
    found.sort_by(|a, b| a.object.cmp(&b.object));
    found
}

fn finding(pdb: &Value, pods: &[&Value], node: &str, objects: &Objects) -> Option<NodeFinding> {
    let selector = pdb.pointer("/spec/selector")?;
    let covered: Vec<&&Value> = pods
        .iter()
        .filter(|pod| pod.namespace() == pdb.namespace())
        .filter(|pod| selector_matches(selector, pod.labels()))
        .collect();
    let first = covered.first()?;
    let (namespace, name) = pdb.key();
    let mut evidence = vec![format!(
        "{} status.disruptionsAllowed=0",
        named("PodDisruptionBudget", pdb)
    )];
    evidence.extend(
        covered
            .iter()
            .map(|pod| format!("{} spec.nodeName={node}", named("Pod", pod))),
    );
    let instance_manager = selector.pointer("/matchLabels/longhorn.io~1component")
        == Some(&Value::from("instance-manager"));
    let last: Vec<String> = if instance_manager {
        last_healthy_replicas(node, objects)
    } else {
        Vec::new()
    };
    if !last.is_empty() {
        evidence.extend(last.iter().cloned());
        return Some(NodeFinding {
            cause: NodeCause::LastHealthyReplica,
            object: format!("{namespace}/{name}"),
            why: format!("Longhorn keeps its instance-manager budget while a replica on the node is the last healthy one of its volume ({} here): the eviction of {} is refused", last.len(), first.name()),
            evidence,
            action: "let Longhorn rebuild a healthy replica on another node (check the volume's replica count and the other nodes' disks), or change Longhorn's node-drain-policy setting".to_owned(),
        });
    }
    Some(NodeFinding {
        cause: NodeCause::PodDisruptionBudget,
        object: format!("{namespace}/{name}"),
        why: format!("the budget allows no disruption now: the eviction of {} is refused until it does", first.name()),
        evidence,
        action: "wait for the budget's other Pods to be ready, or change the budget (minAvailable / maxUnavailable)".to_owned(),
    })
}

/// The Longhorn replicas on `node` whose volume has no healthy replica elsewhere
/// (`spec.healthyAt` set, `spec.failedAt` empty, another `spec.nodeID`), as evidence.
fn last_healthy_replicas(node: &str, objects: &Objects) -> Vec<String> {
    let healthy = |r: &Value| {
        r.text_at("/spec/healthyAt").is_some_and(|t| !t.is_empty())
            && r.text_at("/spec/failedAt").unwrap_or_default().is_empty()
    };
    objects
        .replicas
        .iter()
        .filter(|r| r.text_at("/spec/nodeID") == Some(node) && healthy(r))
        .filter(|r| {
            let volume = r.text_at("/spec/volumeName");
            !objects.replicas.iter().any(|other| {
                other.text_at("/spec/volumeName") == volume
                    && other.text_at("/spec/nodeID") != Some(node)
                    && healthy(other)
            })
        })
        .map(|r| {
            format!(
                "{} spec.volumeName={}: the volume's only healthy replica",
                named("Replica", r),
                r.text_at("/spec/volumeName").unwrap_or_default()
            )
        })
        .collect()
}

/// Whether a `LabelSelector` (`matchLabels`, `matchExpressions` with `In`, `NotIn`, `Exists`,
/// `DoesNotExist`) selects these labels. An empty selector selects everything (policy/v1); an
/// unknown operator selects nothing.
pub fn selector_matches(selector: &Value, labels: Option<&Object>) -> bool {
    let empty = Object::new();
    let labels = labels.unwrap_or(&empty);
    let label = |key: &str| labels.get(key).and_then(Value::as_str);
    let match_labels = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .all(|(key, want)| label(key).is_some() && label(key) == want.as_str());
    let expressions = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .all(|e| {
            let key = e.text_at("/key").unwrap_or_default();
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            match e.text_at("/operator") {
                Some("In") => label(key).is_some_and(|v| values.contains(&v)),
                Some("NotIn") => label(key).is_none_or(|v| !values.contains(&v)),
                Some("Exists") => label(key).is_some(),
                Some("DoesNotExist") => label(key).is_none(),
                _ => false,
            }
        });
    match_labels && expressions
}
