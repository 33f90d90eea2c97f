use super::*;
use serde_json::json;

pub(crate) fn kubevirt() -> Value {
    json!({
        "apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt", "labels": {"app": "kv"}},
        "spec": {"configuration": {"evictionStrategy": "LiveMigrate"}},
    })
}

pub(crate) fn pvc(name: &str, namespace: &str, mode: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"accessModes": [mode]},
    })
}

pub(crate) fn node(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
}

pub(crate) fn sample() -> Vec<Value> {
    vec![
        kubevirt(),
        pvc("data", "team-a", "ReadWriteOnce"),
        pvc("data", "team-b", "ReadWriteMany"),
        pvc("logs", "team-a", "ReadWriteMany"),
        node("n1"),
    ]
}

pub(crate) fn list_all(api_version: &str, kind: &str) -> Value {
    json!({"api_version": api_version, "kind": kind, "label_selector": null,
           "field_selector": null, "field_masks": null})
}

pub(crate) fn get(kind: &str, name: &str, namespace: Option<&str>) -> Value {
    let api_version = if kind == "KubeVirt" {
        "kubevirt.io/v1"
    } else {
        "v1"
    };
    json!({"api_version": api_version, "kind": kind, "name": name,
           "namespace": namespace, "disable_cache": false, "field_masks": null})
}

pub(crate) fn call(
    cluster: &dyn HostCalls,
    operation: &str,
    request: &Value,
) -> Result<Value, String> {
    let bytes = serde_json::to_vec(request).map_err(|e| e.to_string())?;
    cluster
        .host_call("kubewarden", "kubernetes", operation, &bytes)
        .map(|answer| serde_json::from_slice(&answer).unwrap_or(Value::Null))
}

pub(crate) fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            format!(
                "{}/{}",
                namespace_of(o),
                o["metadata"]["name"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

#[test]
fn list_answers() {
    let with = |fields: Value| {
        let mut request = list_all("v1", "PersistentVolumeClaim");
        if let (Some(r), Some(f)) = (request.as_object_mut(), fields.as_object()) {
            r.extend(f.clone());
        }
        request
    };
    let table: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "kubevirt",
            list_all("kubevirt.io/v1", "KubeVirt"),
            vec!["kubevirt/kubevirt"],
        ),
        (
            "claims",
            list_all("v1", "PersistentVolumeClaim"),
            vec!["team-a/data", "team-b/data", "team-a/logs"],
        ),
        (
            "wrong version",
            list_all("kubevirt.io/v1alpha3", "KubeVirt"),
            vec![],
        ),
        ("no such kind", list_all("v1", "Secret"), vec![]),
        ("cluster-scoped", list_all("v1", "Node"), vec!["/n1"]),
        (
            "field selector",
            with(json!({"field_selector": "metadata.namespace=team-a"})),
            vec!["team-a/data", "team-a/logs"],
        ),
        (
            "field selector !=",
            with(json!({"field_selector": "metadata.name!=data"})),
            vec!["team-a/logs"],
        ),
        (
            "label selector",
            with(json!({"label_selector": "app"})),
            vec![],
        ),
    ];
    let cluster = Cluster::new(sample());
    for (what, request, want) in table {
        let list = call(&cluster, "list_resources_all", &request).unwrap_or_default();
        assert_eq!(names(&list), want, "{what}");
        let kind = request["kind"].as_str().unwrap_or_default();
        assert_eq!(list["kind"], json!(format!("{kind}List")), "{what}");
        assert_eq!(list["apiVersion"], request["api_version"], "{what}");
        assert_eq!(list["metadata"], json!({}), "{what}");
    }
    let by_namespace = json!({"api_version": "v1", "kind": "PersistentVolumeClaim",
        "namespace": "team-b", "label_selector": null, "field_selector": null, "field_masks": null});
    let list = call(&cluster, "list_resources_by_namespace", &by_namespace);
    assert_eq!(names(&list.unwrap_or_default()), vec!["team-b/data"]);
}

#[test]
fn label_selectors() {
    let cluster = Cluster::new(vec![kubevirt()]);
    let table = [
        ("app=kv", Ok(1)),
        ("app==kv", Ok(1)),
        ("app!=kv", Ok(0)),
        ("app", Ok(1)),
        ("!app", Ok(0)),
        ("app=kv,tier", Ok(0)),
        ("app in (kv)", Err(())),
    ];
    for (selector, want) in table {
        let mut request = list_all("kubevirt.io/v1", "KubeVirt");
        request["label_selector"] = json!(selector);
        let got = call(&cluster, "list_resources_all", &request)
            .map(|list| names(&list).len())
            .map_err(|e| assert!(e.contains("e2e host: unsupported label selector"), "{e}"));
        assert_eq!(got, want, "{selector}");
    }
}

#[test]
fn get_answers() {
    let cluster = Cluster::new(sample());
    let table: Vec<(Value, Result<Value, &str>)> = vec![
        (
            get("PersistentVolumeClaim", "data", Some("team-a")),
            Ok(pvc("data", "team-a", "ReadWriteOnce")),
        ),
        (
            get("PersistentVolumeClaim", "data", Some("team-b")),
            Ok(pvc("data", "team-b", "ReadWriteMany")),
        ),
        (get("Node", "n1", None), Ok(node("n1"))),
        (get("Node", "n1", Some("")), Ok(node("n1"))),
        (
            get("PersistentVolumeClaim", "data", Some("team-c")),
            Err(
                "Callback evaluation failure: Cannot find v1/PersistentVolumeClaim named 'data' inside of namespace 'Some(\"team-c\")'",
            ),
        ),
        (
            get("PersistentVolumeClaim", "data", None),
            Err(
                "Callback evaluation failure: Cannot find v1/PersistentVolumeClaim named 'data' inside of namespace 'None'",
            ),
        ),
        (
            get("KubeVirt", "other", Some("kubevirt")),
            Err(
                "Callback evaluation failure: Cannot find kubevirt.io/v1/KubeVirt named 'other' inside of namespace 'Some(\"kubevirt\")'",
            ),
        ),
    ];
    for (request, want) in table {
        let got = call(&cluster, "get_resource", &request);
        assert_eq!(got, want.map_err(str::to_owned), "{request}");
    }
}

#[test]
fn field_masks_prune() {
    let cluster = Cluster::new(sample());
    let mut request = get("KubeVirt", "kubevirt", Some("kubevirt"));
    request["field_masks"] = json!(["metadata.name", "spec.configuration.evictionStrategy"]);
    assert_eq!(
        call(&cluster, "get_resource", &request),
        Ok(json!({"metadata": {"name": "kubevirt"},
                  "spec": {"configuration": {"evictionStrategy": "LiveMigrate"}}}))
    );
    let mut request = list_all("v1", "PersistentVolumeClaim");
    request["field_masks"] = json!(["spec.accessModes"]);
    let list = call(&cluster, "list_resources_all", &request).unwrap_or_default();
    assert_eq!(
        list["items"][0],
        json!({"spec": {"accessModes": ["ReadWriteOnce"]}})
    );
}

/// Calls the cluster does not serve, with a payload that is not a whole request, and the
/// answers: (binding, namespace, operation, error).
pub(crate) const OTHER_CALLS: [(&str, &str, &str, &str); 5] = [
    (
        "other",
        "kubernetes",
        "get_resource",
        "unknown binding: other",
    ),
    (
        "kubewarden",
        "oci",
        "v1/verify",
        "Policy has not been granted access to the 'oci/v1/verify' host capability. The violation has been reported.",
    ),
    (
        "kubewarden",
        "kubernetes",
        "watch",
        "unknown operation: watch",
    ),
    (
        "kubewarden",
        "kubernetes",
        "can_i",
        "Callback evaluation failure: the e2e host does not serve can_i",
    ),
    (
        "kubewarden",
        "kubernetes",
        "get_resource",
        "missing field `name` at line 1 column 34",
    ),
];

/// Their payload.
pub(crate) const OTHER_PAYLOAD: &[u8] = br#"{"api_version":"v1","kind":"Node"}"#;

#[test]
fn other_calls() {
    let cluster = Cluster::new(sample());
    for (binding, namespace, operation, want) in OTHER_CALLS {
        let got = cluster.host_call(binding, namespace, operation, OTHER_PAYLOAD);
        assert_eq!(
            got,
            Err(want.to_owned()),
            "{binding}/{namespace}/{operation}"
        );
    }
}
