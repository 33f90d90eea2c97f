//! The live cluster as sources: exactly the kinds the previews read, listed (never watched, never
//! written) through the Kubernetes API with the user's kubeconfig or the in-cluster config, in
//! pages of [`PAGE`] objects as kubectl reads them (`limit`, `continue`). A kind whose CRD is
//! missing or that the user may not list is one note, and what needs it is then not checked; a
//! bad kubeconfig, refused credentials or an unreachable server is an error.

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::kinds::{KINDS, Listed, STATUS_KINDS};
use crate::input::Source;

/// Objects per list page, as kubectl asks (`--chunk-size` 500).
pub const PAGE: usize = 500;

/// Where the cluster is and who asks.
#[derive(Debug, Default, Clone)]
pub struct Target {
    pub kubeconfig: Option<std::path::PathBuf>,
    pub context: Option<String>,
    /// `None`: every namespace.
    pub namespace: Option<String>,
    /// The node `status` diagnoses: its Pods that are not launchers are listed too.
    pub node: Option<String>,
}

/// What could not be listed: the kind's plural and why, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub plural: &'static str,
    pub text: String,
}

/// Every kind of [`KINDS`] as a source named `cluster: KIND`, and the notes on what could not
/// be listed.
pub fn read(target: &Target) -> Result<(Vec<Source>, Vec<String>), String> {
    let plurals: Vec<&str> = KINDS.iter().map(|k| k.plural).collect();
    let (sources, notes) = read_kinds(target, &plurals)?;
    Ok((sources, notes.into_iter().map(|n| n.text).collect()))
}

/// The kinds of [`KINDS`] named by their plurals (`virtualmachines`, `pods`, ...), as [`read`].
pub fn read_kinds(target: &Target, plurals: &[&str]) -> Result<(Vec<Source>, Vec<Note>), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let kinds: Vec<&Listed> = KINDS
        .iter()
        .filter(|k| plurals.contains(&k.plural))
        .collect();
    runtime.block_on(read_async(target, &kinds))
}

/// What `status` reads: the kinds of [`KINDS`] and [`STATUS_KINDS`] named by their plurals,
/// and with `node_pods` the Pods that are not launchers (of `target.node`, else all), as
/// [`read`].
pub fn read_status(
    target: &Target,
    plurals: &[&str],
    node_pods: bool,
) -> Result<(Vec<Source>, Vec<Note>), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let status = STATUS_KINDS.iter().filter(|k| match k.on_node {
        true => node_pods,
        false => plurals.contains(&k.plural),
    });
    let kinds: Vec<&Listed> = KINDS
        .iter()
        .filter(|k| plurals.contains(&k.plural))
        .chain(status)
        .collect();
    runtime.block_on(read_async(target, &kinds))
}

/// A client of the kubeconfig's cluster (or the in-cluster config), as [`read`] uses.
pub async fn client(target: &Target) -> Result<Client, String> {
    let config = config(target).await?;
    let server = config.cluster_url.to_string();
    Client::try_from(config).map_err(|e| format!("{server}: {e}"))
}

async fn config(target: &Target) -> Result<Config, String> {
    let options = KubeConfigOptions {
        context: target.context.clone(),
        ..KubeConfigOptions::default()
    };
    match &target.kubeconfig {
        Some(path) => {
            let kubeconfig = Kubeconfig::read_from(path)
                .map_err(|e| format!("kubeconfig {}: {e}", path.display()))?;
            Config::from_custom_kubeconfig(kubeconfig, &options)
                .await
                .map_err(|e| format!("kubeconfig {}: {e}", path.display()))
        }
        None if target.context.is_some() => Config::from_kubeconfig(&options)
            .await
            .map_err(|e| format!("kubeconfig: {e}")),
        None => Config::infer().await.map_err(|e| {
            format!("no cluster configuration (KUBECONFIG, ~/.kube/config or in-cluster): {e}")
        }),
    }
}

async fn read_async(
    target: &Target,
    kinds: &[&Listed],
) -> Result<(Vec<Source>, Vec<Note>), String> {
    let config = config(target).await?;
    let server = config.cluster_url.to_string();
    let client = Client::try_from(config).map_err(|e| format!("{server}: {e}"))?;
    let mut sources = Vec::new();
    let mut notes = Vec::new();
    for kind in kinds.iter().copied() {
        match list(&client, kind, target).await {
            Ok(items) => sources.push(Source {
                name: format!("cluster: {}", kind.plural),
                items,
            }),
            Err(kube::Error::Api(status)) if matches!(status.code, 403 | 404) => {
                let text = match status.code {
                    404 => format!(
                        "{} ({}): not served by this cluster, what needs it is not checked",
                        kind.plural, kind.api_version
                    ),
                    _ => format!(
                        "{} ({}): listing is forbidden for this user, what needs it is not checked",
                        kind.plural, kind.api_version
                    ),
                };
                notes.push(Note {
                    plural: kind.plural,
                    text,
                });
            }
            Err(kube::Error::Api(status)) if status.code == 401 => {
                return Err(format!(
                    "{server}: the API server refused the credentials (401 Unauthorized)"
                ));
            }
            Err(kube::Error::Api(status)) if status.code == 410 => {
                return Err(format!(
                    "{server}: {} changed too much while they were listed (410 Gone); run it again",
                    kind.plural
                ));
            }
            Err(error) => {
                let path = list_path(kind, target, None);
                return Err(format!("{server}: GET {path}: {error}"));
            }
        }
    }
    Ok((sources, notes))
}

/// Every page of a kind's list, each a list whose items carry their kind.
/// Every object of the kind, each as its own JSON text (a page's tree lives only while the
/// page is read).
async fn list(client: &Client, kind: &Listed, target: &Target) -> kube::Result<Vec<Box<RawValue>>> {
    let mut items = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let path = list_path(kind, target, Some(token.as_deref().unwrap_or_default()));
        let request = http::Request::get(&path)
            .body(Vec::new())
            .map_err(kube::Error::HttpError)?;
        let text = client.request_text(request).await?;
        let page: Page = serde_json::from_str(&text).map_err(kube::Error::SerdeError)?;
        token = page
            .metadata
            .and_then(|m| m.continue_token)
            .filter(|t| !t.is_empty());
        for item in page.items.unwrap_or_default() {
            items.push(typed(item, kind).map_err(kube::Error::SerdeError)?);
        }
        if token.is_none() {
            return Ok(items);
        }
    }
}

/// The list path of a kind, in the target's namespace or all (of its node, for a kind listed
/// `on_node`); with `page` (the `continue` token, `""` for the first page), a page of [`PAGE`]
/// objects.
fn list_path(kind: &Listed, target: &Target, page: Option<&str>) -> String {
    let namespace = target.namespace.as_deref();
    let prefix = if kind.api_version == "v1" {
        "/api/v1".to_owned()
    } else {
        format!("/apis/{}", kind.api_version)
    };
    let namespace = kind
        .namespace
        .or(namespace.filter(|_| kind.namespaced && !kind.cluster_wide));
    let mut path = match namespace {
        Some(namespace) => format!("{prefix}/namespaces/{namespace}/{}", kind.plural),
        None => format!("{prefix}/{}", kind.plural),
    };
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    if let Some(selector) = kind.selector {
        query.append_pair("labelSelector", selector);
    }
    if let Some(node) = target.node.as_deref().filter(|_| kind.on_node) {
        query.append_pair("fieldSelector", &format!("spec.nodeName={node}"));
    }
    if let Some(token) = page {
        query.append_pair("limit", &PAGE.to_string());
        if !token.is_empty() {
            query.append_pair("continue", token);
        }
    }
    let query = query.finish();
    if !query.is_empty() {
        path.push('?');
        path.push_str(&query);
    }
    path
}

/// A page of a list: its items as their own text, and the token of the next page.
#[derive(Deserialize)]
struct Page<'a> {
    #[serde(default)]
    metadata: Option<PageMetadata>,
    #[serde(borrow, default)]
    items: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize)]
struct PageMetadata {
    #[serde(rename = "continue", default)]
    continue_token: Option<String>,
}

/// The API server leaves `apiVersion` and `kind` out of a built-in list's items; the previews
/// read them, so every item gets its kind's, written after its own members (the last of two
/// equal keys is the one JSON readers keep), the rest of its text as the server sent it.
fn typed(item: &RawValue, kind: &Listed) -> serde_json::Result<Box<RawValue>> {
    let text = item.get();
    let members = format!(
        r#""apiVersion":"{}","kind":"{}"}}"#,
        kind.api_version, kind.kind
    );
    let typed = match text.strip_suffix('}') {
        Some(open) if open.trim_end() == "{" => format!("{{{members}"),
        Some(open) => format!("{open},{members}"),
        None => return Ok(item.to_owned()),
    };
    RawValue::from_string(typed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_get_their_kind_last() {
        let pods = KINDS.iter().find(|k| k.plural == "pods").expect("pods");
        let cases = [
            (
                r#"{"metadata":{"name":"a"}}"#,
                r#"{"metadata":{"name":"a"},"apiVersion":"v1","kind":"Pod"}"#,
            ),
            ("{ }", r#"{"apiVersion":"v1","kind":"Pod"}"#),
            (
                r#"{"kind":"Other"}"#,
                r#"{"kind":"Other","apiVersion":"v1","kind":"Pod"}"#,
            ),
            ("7", "7"),
        ];
        for (item, want) in cases {
            let raw = RawValue::from_string(item.to_owned()).expect("JSON");
            let got = typed(&raw, pods).map(|t| t.get().to_owned());
            assert_eq!(got.ok().as_deref(), Some(want), "{item}");
            let tree: serde_json::Value = serde_json::from_str(want).unwrap_or_default();
            if tree.is_object() {
                assert_eq!(tree["kind"], "Pod", "{item}");
            }
        }
    }

    #[test]
    fn list_paths() {
        let by_plural = |plural: &str| KINDS.iter().find(|k| k.plural == plural);
        let cases = [
            ("kubevirts", Some("team"), "/apis/kubevirt.io/v1/kubevirts"),
            (
                "virtualmachines",
                None,
                "/apis/kubevirt.io/v1/virtualmachines",
            ),
            (
                "virtualmachines",
                Some("team"),
                "/apis/kubevirt.io/v1/namespaces/team/virtualmachines",
            ),
            (
                "pods",
                None,
                "/api/v1/pods?labelSelector=kubevirt.io%3Dvirt-launcher",
            ),
            ("nodes", Some("team"), "/api/v1/nodes"),
            (
                "volumes",
                None,
                "/apis/longhorn.io/v1beta2/namespaces/longhorn-system/volumes",
            ),
        ];
        let target = |namespace: Option<&str>| Target {
            namespace: namespace.map(str::to_owned),
            node: Some("node-01".to_owned()),
            ..Target::default()
        };
        for (plural, namespace, want) in cases {
            let kind = by_plural(plural).expect("a kind");
            assert_eq!(
                list_path(kind, &target(namespace), None),
                want,
                "{plural} {namespace:?}"
            );
        }
        let pods = by_plural("pods").expect("pods");
        assert_eq!(
            list_path(pods, &target(None), Some("")),
            "/api/v1/pods?labelSelector=kubevirt.io%3Dvirt-launcher&limit=500"
        );
        assert_eq!(
            list_path(pods, &target(Some("team")), Some("eyJ2Ijo=+/x")),
            "/api/v1/namespaces/team/pods?labelSelector=kubevirt.io%3Dvirt-launcher&limit=500&continue=eyJ2Ijo%3D%2B%2Fx"
        );
        let others = &STATUS_KINDS[2];
        assert_eq!(
            list_path(others, &target(None), None),
            "/api/v1/pods?labelSelector=kubevirt.io%21%3Dvirt-launcher&fieldSelector=spec.nodeName%3Dnode-01"
        );
    }
}
