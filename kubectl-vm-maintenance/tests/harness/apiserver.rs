//! A loopback Kubernetes API server for the plugin's tests (there is no kube-apiserver to be had
//! here), answering as the API server and KubeVirt's virt-api do, from objects it keeps:
//! - lists (`GET /api/v1/pods`, `/apis/G/V/namespaces/NS/PLURAL`, ...) with equality label
//!   selectors, in pages (`limit`, `continue`), items without `apiVersion` and `kind` as the API
//!   server writes a built-in list; a single object by its path;
//! - `PATCH` of an object with a JSON patch (`application/json-patch+json`, else 415): `test`,
//!   `add`, `replace`, `remove`, with evanphx/json-patch's rules (a `test` of `null` passes on an
//!   absent member of an existing parent); a patch that does not apply is the API server's 422
//!   (`NewGenericServerResponse`: reason `Invalid`, its generic message);
//! - `PUT .../virtualmachines/NAME/restart` as virt-api's `RestartVMRequestHandler`: 404 without
//!   the VM, 409 for runStrategy `Halted` or `Once` and for a VM that does not run, else 202
//!   with an empty body; the restart is then modelled: the VMI and its launcher Pods take the
//!   template's labels, the VMI the eviction strategy a new VMI gets;
//! - `dryRun=All` (the query, or a restart body's `dryRun: ["All"]`): checked, answered, nothing
//!   kept;
//! - every request recorded, every write with its body, and a hook that changes the objects
//!   just before a write (a concurrent change); 401 or 403 for every write on demand.

#![allow(dead_code, reason = "each test binary uses part of the server")]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};

/// A write the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// The path without the query.
    pub path: String,
    pub query: String,
    pub content_type: String,
    pub body: Value,
    pub dry_run: bool,
    /// The status answered.
    pub status: u16,
    /// When it arrived.
    pub at: std::time::Instant,
}

/// A change made to the objects just before the server handles the write to `path`.
pub type Hook = Box<dyn FnMut(&str, &mut Vec<Value>) + Send>;

#[derive(Default)]
pub struct State {
    pub objects: Vec<Value>,
    /// Every request: `METHOD URL`.
    pub requests: Vec<String>,
    pub writes: Vec<Recorded>,
    /// Every request answered with this status.
    pub status: Option<u16>,
    /// The plural whose lists are forbidden (403).
    pub forbidden: Option<&'static str>,
    /// Every write answered with this status (401 or 403).
    pub deny_writes: Option<u16>,
    pub before_write: Option<Hook>,
}

pub struct ApiServer {
    pub url: String,
    state: Arc<Mutex<State>>,
}

const PATCH_NOT_APPLIED: &str = "the server rejected our request due to an error in our request";

fn failure(code: u16, reason: &str, message: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": message, "reason": reason, "code": code})
}

/// The API server's answer to a path it does not serve.
fn not_found() -> (u16, Value) {
    let message = "the server could not find the requested resource";
    (404, failure(404, "NotFound", message))
}

impl ApiServer {
    pub fn start(objects: Vec<Value>, status: Option<u16>) -> ApiServer {
        ApiServer::forbidding(objects, status, None)
    }

    /// The same, answering 403 to the list of the kind `forbidden` (a plural).
    pub fn forbidding(
        objects: Vec<Value>,
        status: Option<u16>,
        forbidden: Option<&'static str>,
    ) -> ApiServer {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let url = format!("http://{}", server.server_addr());
        let state = Arc::new(Mutex::new(State {
            objects,
            status,
            forbidden,
            ..State::default()
        }));
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            for mut request in server.incoming_requests() {
                let mut body = String::new();
                let _ = request.as_reader().read_to_string(&mut body);
                let content_type = request
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("Content-Type"))
                    .map(|h| h.value.to_string())
                    .unwrap_or_default();
                let method = request.method().to_string();
                let url = request.url().to_owned();
                let (code, answer) = match shared.lock() {
                    Ok(mut state) => state.handle(&method, &url, &content_type, &body),
                    Err(_) => (500, failure(500, "InternalError", "poisoned")),
                };
                let text = if answer.is_null() {
                    String::new()
                } else {
                    answer.to_string()
                };
                let header = tiny_http::Header::from_bytes("Content-Type", "application/json");
                let mut response = tiny_http::Response::from_string(text).with_status_code(code);
                if let Ok(header) = header {
                    response.add_header(header);
                }
                let _ = request.respond(response);
            }
        });
        ApiServer { url, state }
    }

    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| panic!("{e}"))
    }

    pub fn requests(&self) -> Vec<String> {
        self.state().requests.clone()
    }

    pub fn writes(&self) -> Vec<Recorded> {
        self.state().writes.clone()
    }

    pub fn objects(&self) -> Vec<Value> {
        self.state().objects.clone()
    }

    /// The object of `kind` `namespace/name`.
    pub fn object(&self, kind: &str, namespace: &str, name: &str) -> Option<Value> {
        self.state()
            .objects
            .iter()
            .find(|o| {
                o["kind"] == kind
                    && o["metadata"]["namespace"] == namespace
                    && o["metadata"]["name"] == name
            })
            .cloned()
    }

    pub fn deny_writes(&self, code: u16) {
        self.state().deny_writes = Some(code);
    }

    pub fn before_write(&self, hook: Hook) {
        self.state().before_write = Some(hook);
    }

    pub fn kubeconfig(&self, dir: &Path) -> PathBuf {
        let path = dir.join("kubeconfig");
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: {}\nusers:\n- name: test\n  user:\n    token: abc\ncontexts:\n- name: test\n  context:\n    cluster: test\n    user: test\ncurrent-context: test\n",
            self.url
        );
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        path
    }
}

/// What a path names: the kind's plural, its namespace, an object's name, a subresource.
#[derive(Debug, PartialEq)]
struct Route<'a> {
    group: &'a str,
    plural: &'a str,
    namespace: Option<&'a str>,
    name: Option<&'a str>,
    subresource: Option<&'a str>,
}

fn route(path: &str) -> Option<Route<'_>> {
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let (group, rest) = match parts.as_slice() {
        ["api", "v1", rest @ ..] => ("", rest),
        ["apis", group, _, rest @ ..] => (*group, rest),
        _ => return None,
    };
    let (namespace, rest) = match rest {
        ["namespaces", namespace, rest @ ..] if !rest.is_empty() => (Some(*namespace), rest),
        _ => (None, rest),
    };
    let (plural, name, subresource) = match rest {
        [plural] => (*plural, None, None),
        [plural, name] => (*plural, Some(*name), None),
        [plural, name, sub] => (*plural, Some(*name), Some(*sub)),
        _ => return None,
    };
    Some(Route {
        group,
        plural,
        namespace,
        name,
        subresource,
    })
}

fn kind_of(plural: &str) -> Option<&'static str> {
    Some(match plural {
        "virtualmachines" => "VirtualMachine",
        "virtualmachineinstances" => "VirtualMachineInstance",
        "pods" => "Pod",
        "nodes" => "Node",
        "persistentvolumeclaims" => "PersistentVolumeClaim",
        "persistentvolumes" => "PersistentVolume",
        "kubevirts" => "KubeVirt",
        "volumes" => "Volume",
        "replicas" => "Replica",
        "virtualmachineinstancemigrations" => "VirtualMachineInstanceMigration",
        "poddisruptionbudgets" => "PodDisruptionBudget",
        _ => return None,
    })
}

/// `key=value` pairs of a query string, decoded.
fn query_pairs(query: &str) -> Vec<(String, String)> {
    url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// Whether `labels` match an equality selector `a=b,c!=d`.
fn selects(selector: &str, object: &Value) -> bool {
    selector.split(',').filter(|s| !s.is_empty()).all(|term| {
        if let Some((key, value)) = term.split_once("!=") {
            return object["metadata"]["labels"][key] != value;
        }
        let (key, value) = term.split_once('=').unwrap_or((term, ""));
        let value = value.trim_start_matches('=');
        object["metadata"]["labels"][key] == value
    })
}

/// Whether an object matches a field selector `spec.nodeName=X` (the one field the plugin
/// selects on; a dotted path, equality only).
fn selects_fields(selector: &str, object: &Value) -> bool {
    selector.split(',').filter(|s| !s.is_empty()).all(|term| {
        let (path, value) = term.split_once('=').unwrap_or((term, ""));
        let pointer = format!("/{}", path.replace('.', "/"));
        object
            .pointer(&pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
            == value
    })
}

impl State {
    fn handle(&mut self, method: &str, url: &str, content_type: &str, body: &str) -> (u16, Value) {
        self.requests.push(format!("{method} {url}"));
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        let query = query_pairs(query);
        let param = |name: &str| {
            query
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        if let Some(code) = self.status {
            let reason = if code == 403 {
                "Forbidden"
            } else {
                "Unauthorized"
            };
            return (code, failure(code, reason, reason));
        }
        let Some(route) = route(path) else {
            return not_found();
        };
        if method == "GET" {
            return self.get(
                &route,
                (param("labelSelector"), param("fieldSelector")),
                param("limit"),
                param("continue"),
            );
        }
        let body_value: Value = serde_json::from_str(body).unwrap_or(Value::Null);
        let dry_run = param("dryRun").as_deref() == Some("All")
            || body_value.get("dryRun") == Some(&json!(["All"]));
        let mut record = Recorded {
            method: method.to_owned(),
            path: path.to_owned(),
            query: query
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("&"),
            content_type: content_type.to_owned(),
            body: body_value.clone(),
            dry_run,
            status: 0,
            at: std::time::Instant::now(),
        };
        if let Some(mut hook) = self.before_write.take() {
            hook(path, &mut self.objects);
            self.before_write = Some(hook);
        }
        let (code, answer) = if let Some(code) = self.deny_writes {
            let (reason, message) = if code == 401 {
                ("Unauthorized", "Unauthorized".to_owned())
            } else {
                (
                    "Forbidden",
                    format!(
                        "{} is forbidden: User \"test\" cannot {} resource \"{}\" in API group \"{}\" in the namespace \"{}\"",
                        route.plural,
                        method.to_lowercase(),
                        route.plural,
                        route.group,
                        route.namespace.unwrap_or_default()
                    ),
                )
            };
            (code, failure(code, reason, &message))
        } else {
            match (method, route.subresource) {
                ("PATCH", None) => self.patch(&route, content_type, &body_value, dry_run),
                ("PUT", Some("restart")) => self.restart(&route, dry_run),
                _ => (
                    405,
                    failure(
                        405,
                        "MethodNotAllowed",
                        "the server does not allow this method on the requested resource",
                    ),
                ),
            }
        };
        record.status = code;
        self.writes.push(record);
        (code, answer)
    }

    fn position(&self, kind: &str, namespace: Option<&str>, name: &str) -> Option<usize> {
        self.objects.iter().position(|o| {
            o["kind"] == kind
                && o["metadata"]["name"] == name
                && namespace.is_none_or(|n| o["metadata"]["namespace"] == n)
        })
    }

    fn get(
        &self,
        route: &Route,
        (selector, fields): (Option<String>, Option<String>),
        limit: Option<String>,
        token: Option<String>,
    ) -> (u16, Value) {
        let Some(kind) = kind_of(route.plural) else {
            return not_found();
        };
        if self.forbidden == Some(route.plural) {
            return (403, failure(403, "Forbidden", "Forbidden"));
        }
        if let Some(name) = route.name {
            return match self.position(kind, route.namespace, name) {
                Some(at) => (200, self.objects[at].clone()),
                None => (
                    404,
                    failure(
                        404,
                        "NotFound",
                        &format!("{} \"{name}\" not found", route.plural),
                    ),
                ),
            };
        }
        let items: Vec<Value> = self
            .objects
            .iter()
            .filter(|o| o["kind"] == kind)
            .filter(|o| {
                route
                    .namespace
                    .is_none_or(|n| o["metadata"]["namespace"] == n)
            })
            .filter(|o| selector.as_deref().is_none_or(|s| selects(s, o)))
            .filter(|o| fields.as_deref().is_none_or(|s| selects_fields(s, o)))
            .map(|o| {
                let mut item = o.clone();
                if let Some(map) = item.as_object_mut() {
                    map.remove("apiVersion");
                    map.remove("kind");
                }
                item
            })
            .collect();
        let start: usize = token.and_then(|t| t.parse().ok()).unwrap_or(0);
        let limit: usize = limit
            .and_then(|l| l.parse().ok())
            .filter(|&l| l > 0)
            .unwrap_or(usize::MAX);
        let end = start.saturating_add(limit).min(items.len());
        let page: Vec<Value> = items
            .get(start.min(items.len())..end)
            .unwrap_or_default()
            .to_vec();
        let mut metadata = json!({"resourceVersion": "1"});
        if end < items.len() {
            metadata["continue"] = json!(end.to_string());
        }
        (
            200,
            json!({"apiVersion": "v1", "kind": format!("{kind}List"), "metadata": metadata, "items": page}),
        )
    }

    fn patch(
        &mut self,
        route: &Route,
        content_type: &str,
        body: &Value,
        dry_run: bool,
    ) -> (u16, Value) {
        if content_type != "application/json-patch+json" {
            return (
                415,
                failure(
                    415,
                    "UnsupportedMediaType",
                    &format!(
                        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, ... (got {content_type})"
                    ),
                ),
            );
        }
        let Some(kind) = kind_of(route.plural) else {
            return not_found();
        };
        let Some(at) = route
            .name
            .and_then(|name| self.position(kind, route.namespace, name))
        else {
            return (
                404,
                failure(
                    404,
                    "NotFound",
                    &format!(
                        "{} \"{}\" not found",
                        route.plural,
                        route.name.unwrap_or_default()
                    ),
                ),
            );
        };
        let Some(operations) = body.as_array() else {
            return (
                400,
                failure(
                    400,
                    "BadRequest",
                    "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
                ),
            );
        };
        let mut object = self.objects[at].clone();
        for operation in operations {
            if apply(&mut object, operation).is_err() {
                let mut status = failure(422, "Invalid", PATCH_NOT_APPLIED);
                status["details"] = json!({});
                return (422, status);
            }
        }
        if !dry_run {
            self.objects[at] = object.clone();
        }
        (200, object)
    }

    fn restart(&mut self, route: &Route, dry_run: bool) -> (u16, Value) {
        let name = route.name.unwrap_or_default();
        let conflict = |message: String| {
            let mut status = failure(
                409,
                "Conflict",
                &format!(
                    "Operation cannot be fulfilled on virtualmachine.kubevirt.io \"{name}\": {message}"
                ),
            );
            status["details"] =
                json!({"name": name, "group": "kubevirt.io", "kind": "virtualmachine"});
            (409, status)
        };
        let Some(vm_at) = self.position("VirtualMachine", route.namespace, name) else {
            return (
                404,
                failure(
                    404,
                    "NotFound",
                    &format!("virtualmachines.kubevirt.io \"{name}\" not found"),
                ),
            );
        };
        let vm = self.objects[vm_at].clone();
        let run = match (&vm["spec"]["runStrategy"], &vm["spec"]["running"]) {
            (Value::String(run), _) => run.clone(),
            (_, Value::Bool(true)) => "Always".to_owned(),
            _ => "Halted".to_owned(),
        };
        if run == "Halted" || run == "Once" {
            return conflict(format!(
                "RunStategy {run} does not support manual restart requests"
            ));
        }
        let Some(vmi_at) = self.position("VirtualMachineInstance", route.namespace, name) else {
            return conflict("VM is not running: Halted".to_owned());
        };
        if dry_run {
            return (202, Value::Null);
        }
        // The VMI started again: the template's labels, the strategy a new VMI gets.
        let template = vm["spec"]["template"]["metadata"]["labels"].clone();
        let cluster = self
            .objects
            .iter()
            .find(|o| o["kind"] == "KubeVirt")
            .map(|cr| cr["spec"]["configuration"]["evictionStrategy"].clone())
            .unwrap_or(Value::Null);
        let strategy = match &vm["spec"]["template"]["spec"]["evictionStrategy"] {
            Value::Null => cluster,
            own => own.clone(),
        };
        let relabel = |object: &mut Value| {
            let mut labels = template.as_object().cloned().unwrap_or_default();
            if let Some(old) = object["metadata"]["labels"].as_object() {
                for (key, value) in old {
                    if key.starts_with("kubevirt.io") || key.starts_with("vm.kubevirt.io") {
                        labels.insert(key.clone(), value.clone());
                    }
                }
            }
            object["metadata"]["labels"] = Value::Object(labels);
        };
        let vmi = &mut self.objects[vmi_at];
        relabel(vmi);
        match &strategy {
            Value::Null => {
                if let Some(spec) = vmi["spec"].as_object_mut() {
                    spec.remove("evictionStrategy");
                }
            }
            strategy => vmi["spec"]["evictionStrategy"] = strategy.clone(),
        }
        let namespace = route.namespace.unwrap_or_default();
        for pod in self.objects.iter_mut().filter(|o| {
            o["kind"] == "Pod"
                && o["metadata"]["namespace"] == namespace
                && o["metadata"]["ownerReferences"][0]["name"] == name
        }) {
            relabel(pod);
        }
        (202, Value::Null)
    }
}

/// The parent of a JSON pointer's last token, and that token (unescaped).
fn split(path: &str) -> Result<(String, String), ()> {
    let at = path.rfind('/').ok_or(())?;
    let token = path[at + 1..].replace("~1", "/").replace("~0", "~");
    Ok((path[..at].to_owned(), token))
}

/// One JSON patch operation, as evanphx/json-patch applies it.
fn apply(object: &mut Value, operation: &Value) -> Result<(), ()> {
    let op = operation["op"].as_str().ok_or(())?;
    let path = operation["path"].as_str().ok_or(())?;
    let (parent_path, token) = split(path)?;
    let parent = object.pointer_mut(&parent_path).ok_or(())?;
    let map = parent.as_object_mut().ok_or(())?;
    let value = operation.get("value").cloned();
    match op {
        // A missing member tests as null.
        "test" => {
            let current = map.get(&token).cloned().unwrap_or(Value::Null);
            (Some(current) == value.or(Some(Value::Null)))
                .then_some(())
                .ok_or(())
        }
        "add" => {
            map.insert(token, value.ok_or(())?);
            Ok(())
        }
        "replace" => {
            let slot = map.get_mut(&token).ok_or(())?;
            *slot = value.ok_or(())?;
            Ok(())
        }
        "remove" => map.remove(&token).map(drop).ok_or(()),
        _ => Err(()),
    }
}

#[test]
fn json_patch_as_the_api_server_applies_it() {
    let object = json!({"metadata": {"labels": {"a": "1"}}, "spec": {}});
    let cases = [
        (
            json!({"op": "test", "path": "/metadata/labels/a", "value": "1"}),
            true,
        ),
        (
            json!({"op": "test", "path": "/metadata/labels/a", "value": "2"}),
            false,
        ),
        (
            json!({"op": "test", "path": "/metadata/labels/b", "value": null}),
            true,
        ),
        (
            json!({"op": "test", "path": "/metadata/labels", "value": {"a": "1"}}),
            true,
        ),
        (
            json!({"op": "test", "path": "/spec/template/metadata", "value": null}),
            false,
        ),
        (
            json!({"op": "test", "path": "/spec/template", "value": null}),
            true,
        ),
        (
            json!({"op": "replace", "path": "/metadata/labels/b", "value": "x"}),
            false,
        ),
        (
            json!({"op": "add", "path": "/metadata/labels/b", "value": "x"}),
            true,
        ),
    ];
    for (operation, ok) in cases {
        let mut copy = object.clone();
        assert_eq!(apply(&mut copy, &operation).is_ok(), ok, "{operation}");
    }
    assert_eq!(
        route("/apis/subresources.kubevirt.io/v1/namespaces/ns/virtualmachines/vm/restart"),
        Some(Route {
            group: "subresources.kubevirt.io",
            plural: "virtualmachines",
            namespace: Some("ns"),
            name: Some("vm"),
            subresource: Some("restart"),
        })
    );
    assert_eq!(
        route("/api/v1/namespaces/ns/pods").map(|r| (r.plural, r.namespace, r.name)),
        Some(("pods", Some("ns"), None))
    );
}
