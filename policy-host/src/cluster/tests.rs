use super::*;

fn kubevirt() -> Value {
    json!({
        "apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt", "labels": {"app": "kv"}},
        "spec": {"configuration": {"evictionStrategy": "LiveMigrate"}},
    })
}

fn pvc(name: &str, namespace: &str, mode: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"accessModes": [mode]},
    })
}

fn node(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
}

fn sample() -> Cluster {
    Cluster::new(vec![
        kubevirt(),
        pvc("data", "team-a", "ReadWriteOnce"),
        pvc("data", "team-b", "ReadWriteMany"),
        pvc("logs", "team-a", "ReadWriteMany"),
        node("n1"),
    ])
}

fn list_all(api_version: &str, kind: &str) -> Value {
    json!({"api_version": api_version, "kind": kind, "label_selector": null,
           "field_selector": null, "field_masks": null})
}

fn get(kind: &str, name: &str, namespace: Option<&str>) -> Value {
    let api_version = if kind == "KubeVirt" {
        "kubevirt.io/v1"
    } else {
        "v1"
    };
    json!({"api_version": api_version, "kind": kind, "name": name,
           "namespace": namespace, "disable_cache": false, "field_masks": null})
}

fn call(cluster: &Cluster, operation: &str, request: &Value) -> Result<Value, String> {
    let bytes = serde_json::to_vec(request).map_err(|e| e.to_string())?;
    cluster
        .host_call("kubewarden", "kubernetes", operation, &bytes)
        .map(|answer| serde_json::from_slice(&answer).unwrap_or(Value::Null))
}

fn names(list: &Value) -> Vec<String> {
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
    let cluster = sample();
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
    let cluster = sample();
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
    let cluster = sample();
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

#[test]
fn failure_rules() {
    let cluster = sample()
        .fail(
            FailRule::new("get_resource")
                .kind("PersistentVolumeClaim")
                .name("data")
                .namespace("team-a")
                .message("timeout"),
        )
        .fail(FailRule::new("list_resources_all").api_version("kubevirt.io/v1"));
    let table: Vec<(&str, Value, Result<(), &str>)> = vec![
        (
            "get_resource",
            get("PersistentVolumeClaim", "data", Some("team-a")),
            Err("Callback evaluation failure: timeout"),
        ),
        (
            "get_resource",
            get("PersistentVolumeClaim", "data", Some("team-b")),
            Ok(()),
        ),
        (
            "get_resource",
            get("PersistentVolumeClaim", "logs", Some("team-a")),
            Ok(()),
        ),
        (
            "list_resources_all",
            list_all("kubevirt.io/v1", "KubeVirt"),
            Err("Callback evaluation failure: kube::Client was not initialized properly"),
        ),
        (
            "list_resources_all",
            list_all("v1", "PersistentVolumeClaim"),
            Ok(()),
        ),
    ];
    for (operation, request, want) in table {
        let got = call(&cluster, operation, &request).map(|_| ());
        assert_eq!(got, want.map_err(str::to_owned), "{operation} {request}");
    }
    // A rule with a name never matches a list; one with namespace "" matches no namespace.
    let cluster = sample()
        .fail(FailRule::new("list_resources_all").name("kubevirt"))
        .fail(FailRule::new("get_resource").namespace(""));
    assert!(
        call(
            &cluster,
            "list_resources_all",
            &list_all("kubevirt.io/v1", "KubeVirt")
        )
        .is_ok()
    );
    assert!(call(&cluster, "get_resource", &get("Node", "n1", None)).is_err());
    assert!(
        call(
            &cluster,
            "get_resource",
            &get("PersistentVolumeClaim", "logs", Some("team-a"))
        )
        .is_ok()
    );
}

#[test]
fn deny_all_refuses_everything_and_records_it() {
    let cluster = sample().deny_all();
    for (operation, request) in [
        ("list_resources_all", list_all("kubevirt.io/v1", "KubeVirt")),
        (
            "get_resource",
            get("PersistentVolumeClaim", "data", Some("team-a")),
        ),
        ("get_resource", json!("not even a request")),
    ] {
        assert_eq!(
            call(&cluster, operation, &request),
            Err(format!(
                "Policy has not been granted access to the 'kubernetes/{operation}' host capability. The violation has been reported."
            )),
        );
    }
    assert_eq!(cluster.calls().len(), 3);
    assert_eq!(cluster.session_yaml().ok().as_deref(), Some("[]\n"));
    assert_eq!(
        cluster.host_call("kubewarden", "tracing", "log", b"{}"),
        Ok(Vec::new())
    );
}

#[test]
fn other_calls() {
    let cluster = sample();
    let table = [
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
    for (binding, namespace, operation, want) in table {
        let got = cluster.host_call(
            binding,
            namespace,
            operation,
            br#"{"api_version":"v1","kind":"Node"}"#,
        );
        assert_eq!(
            got,
            Err(want.to_owned()),
            "{binding}/{namespace}/{operation}"
        );
    }
    let operations: Vec<String> = cluster.calls().into_iter().map(|c| c.operation).collect();
    assert_eq!(
        operations,
        ["oci/v1/verify", "watch", "can_i", "get_resource"],
        "every call but another binding's is recorded"
    );
}

#[test]
fn records_every_call_in_order_with_the_request_as_sent() {
    let cluster = Cluster::new(vec![kubevirt()])
        .fail(FailRule::new("get_resource").name("broken").message("boom"));
    let payloads: [(&str, &[u8]); 5] = [
        ("list_resources_all", br#"{"api_version":"kubevirt.io/v1","kind":"KubeVirt","label_selector":null,"field_selector":null,"field_masks":null}"#),
        ("get_resource", br#"{"api_version":"v1","kind":"PersistentVolumeClaim","name":"data","namespace":"team-a","disable_cache":false,"field_masks":null,"extra":1}"#),
        ("get_resource", br#"{"api_version":"v1","kind":"PersistentVolumeClaim","name":"broken","namespace":"team-a","disable_cache":true}"#),
        ("get_resource", b"not json"),
        ("list_resources_all", br#"{"api_version":"kubevirt.io/v1","kind":"KubeVirt"}"#),
    ];
    for (operation, payload) in payloads {
        let _ = cluster.host_call("kubewarden", "kubernetes", operation, payload);
        let _ = cluster.host_call("kubewarden", "tracing", "log", b"{\"msg\":\"x\"}");
    }
    let calls = cluster.calls();
    assert_eq!(calls.len(), payloads.len(), "log lines are not recorded");
    for (call, (operation, payload)) in calls.iter().zip(payloads) {
        assert_eq!(call.operation, operation);
        let want = serde_json::from_slice(payload)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(payload).into()));
        assert_eq!(call.request, want);
    }
    let text = serde_json::to_string(&calls[0]).unwrap_or_default();
    assert_eq!(
        serde_json::from_str::<Call>(&text).ok().as_ref(),
        Some(&calls[0])
    );
}

/// The session in kwctl's own format, read back the way kwctl's replay proxy reads it.
#[test]
fn session_for_kwctl() {
    let cluster = Cluster::new(vec![kubevirt()]).fail(
        FailRule::new("get_resource")
            .name("broken")
            .message("timeout"),
    );
    let _ = call(
        &cluster,
        "list_resources_all",
        &list_all("kubevirt.io/v1", "KubeVirt"),
    );
    let _ = call(
        &cluster,
        "get_resource",
        &get("PersistentVolumeClaim", "data", Some("team-a")),
    );
    let _ = call(
        &cluster,
        "get_resource",
        &get("PersistentVolumeClaim", "broken", Some("team-a")),
    );
    let _ = cluster.host_call("kubewarden", "kubernetes", "get_resource", b"{}");
    let yaml = cluster.session_yaml().unwrap_or_default();
    let want_start = "- type: Exchange\n  request: |\n    !KubernetesListResourceAll\n    api_version: kubevirt.io/v1\n    kind: KubeVirt\n    label_selector: null\n    field_selector: null\n    field_masks: null\n  response:\n    type: Success\n    payload: '";
    assert!(yaml.starts_with(want_start), "{yaml}");
    let exchanges: Vec<Exchange> = serde_yaml::from_str(&yaml).unwrap_or_default();
    assert_eq!(
        exchanges.len(),
        3,
        "the unreadable request never reaches kwctl's proxy"
    );
    let requests: Vec<Request> = exchanges
        .iter()
        .filter_map(|e| serde_yaml::from_str(&e.request).ok())
        .collect();
    assert_eq!(
        requests[1],
        Request::KubernetesGetResource {
            api_version: "v1".into(),
            kind: "PersistentVolumeClaim".into(),
            name: "data".into(),
            namespace: Some("team-a".into()),
            disable_cache: false,
            field_masks: None,
        }
    );
    let Response::Success { payload } = &exchanges[0].response else {
        panic!("want a success: {yaml}");
    };
    assert_eq!(
        serde_json::from_str::<Value>(payload).ok(),
        Some(
            json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirtList", "metadata": {}, "items": [kubevirt()]})
        )
    );
    assert_eq!(
        exchanges[1].response,
        Response::Error {
            message: "Cannot find v1/PersistentVolumeClaim named 'data' inside of namespace 'Some(\"team-a\")'".into()
        }
    );
    assert_eq!(
        exchanges[2].response,
        Response::Error {
            message: "timeout".into()
        }
    );
    // kwctl's own recorded sessions omit `field_masks` (older versions): still the same request.
    let old: Request = serde_yaml::from_str(
        "!KubernetesGetResource\napi_version: v1\nkind: Namespace\nname: test-policy\nnamespace: null\ndisable_cache: false\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        old.identity(),
        ("v1", "Namespace", Some("test-policy"), None)
    );
}
