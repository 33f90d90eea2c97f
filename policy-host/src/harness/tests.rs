use serde_json::{Value, json};

use super::replay::{Exchange, Response};
use super::*;
use crate::cluster::tests::{OTHER_CALLS, OTHER_PAYLOAD, call, get, kubevirt, list_all, sample};

fn recording() -> RecordingCluster {
    RecordingCluster::new(sample())
}

#[test]
fn failure_rules() {
    let cluster = recording()
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
    let cluster = recording()
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
    let cluster = recording().deny_all();
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
    let cluster = recording();
    for (binding, namespace, operation, want) in OTHER_CALLS {
        let got = cluster.host_call(binding, namespace, operation, OTHER_PAYLOAD);
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
    let cluster = RecordingCluster::new(vec![kubevirt()])
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
    let cluster = RecordingCluster::new(vec![kubevirt()]).fail(
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
