//! OCI push and pull of the annotated module with `oci-client`, in kwctl's artifact format:
//! config `application/vnd.wasm.config.v1+json` holding `{}`, one layer
//! `application/vnd.wasm.content.layer.v1+wasm`, manifest annotations from the metadata.

use std::collections::BTreeMap;

use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::errors::OciDistributionError;
use oci_client::manifest::{OciImageManifest, WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};

use crate::Error;
use crate::metadata::{Metadata, SOURCE};

pub use oci_client::annotations::ORG_OPENCONTAINERS_IMAGE_SOURCE;

/// Where to push or pull, and which registries speak plain HTTP.
pub struct Registry {
    client: Client,
    insecure: Vec<String>,
}

/// What `push` answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Pushed {
    /// `registry/repository@sha256:...`
    pub immutable_ref: String,
    pub manifest_digest: String,
}

/// What `pull` answers.
#[derive(Debug, Clone)]
pub struct Pulled {
    pub module: Vec<u8>,
    pub manifest: OciImageManifest,
    pub manifest_digest: String,
}

/// `registry://host/repo:tag`, `host/repo@sha256:...`: the `registry://` scheme is optional.
pub fn parse_reference(text: &str) -> Result<Reference, Error> {
    let bare = text.strip_prefix("registry://").unwrap_or(text);
    if bare.contains("://") {
        return Err(format!("{text}: only registry:// references are supported").into());
    }
    bare.parse::<Reference>()
        .map_err(|e| format!("{text}: not an OCI reference: {e}").into())
}

/// The manifest annotations kwctl writes: the metadata annotations whose value is one line
/// (trimmed), plus `org.opencontainers.image.source` from `io.kubewarden.policy.source`.
pub fn manifest_annotations(metadata: &Metadata) -> BTreeMap<String, String> {
    let mut annotations: BTreeMap<String, String> = metadata
        .annotations
        .iter()
        .flatten()
        .filter(|(_, value)| value.lines().count() <= 1)
        .map(|(key, value)| (key.clone(), value.trim().to_owned()))
        .collect();
    if let Some(source) = annotations.get(SOURCE).cloned() {
        annotations
            .entry(ORG_OPENCONTAINERS_IMAGE_SOURCE.to_owned())
            .or_insert(source);
    }
    annotations
}

fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

/// Credentials from the Docker configuration (`docker login`), else anonymous, as kwctl does.
fn auth(registry: &str) -> RegistryAuth {
    match docker_credential::get_credential(registry) {
        Ok(docker_credential::DockerCredential::UsernamePassword(user, password)) => {
            RegistryAuth::Basic(user, password)
        }
        _ => RegistryAuth::Anonymous,
    }
}

impl Registry {
    /// `insecure`: `host[:port]` of registries reached over plain HTTP; all others use HTTPS
    /// with the system's roots.
    pub fn new(insecure: &[String]) -> Registry {
        // rustls needs a process-wide crypto provider; a second install is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = Client::new(ClientConfig {
            protocol: ClientProtocol::HttpsExcept(insecure.to_vec()),
            ..ClientConfig::default()
        });
        Registry {
            client,
            insecure: insecure.to_vec(),
        }
    }

    fn describe(&self, reference: &Reference, error: OciDistributionError) -> Error {
        let registry = reference.resolve_registry();
        let hint = if self.insecure.iter().any(|i| i == registry) {
            ""
        } else if registry.starts_with("127.") || registry.starts_with("localhost") {
            " (a plain-HTTP registry must be named: INSECURE=HOST:PORT)"
        } else {
            ""
        };
        format!("{reference}: {error}{hint}").into()
    }

    /// Pushes an annotated module. Refuses a module without metadata, as kwctl does.
    pub fn push(&self, module: &[u8], reference: &Reference) -> Result<Pushed, Error> {
        let metadata = crate::annotate::read_metadata(module)?.ok_or(
            "the module is not annotated: push annotated-policy.wasm (make annotated-policy.wasm)",
        )?;
        let layers = vec![ImageLayer::new(
            module.to_vec(),
            WASM_LAYER_MEDIA_TYPE.to_owned(),
            None,
        )];
        let config = Config {
            data: b"{}".to_vec().into(),
            media_type: WASM_CONFIG_MEDIA_TYPE.to_owned(),
            annotations: None,
        };
        let manifest =
            OciImageManifest::build(&layers, &config, Some(manifest_annotations(&metadata)));
        self.push_artifact(reference, &layers, config, manifest)
    }

    /// Pushes any artifact (the tests use it for one that is not a policy).
    pub fn push_artifact(
        &self,
        reference: &Reference,
        layers: &[ImageLayer],
        config: Config,
        manifest: OciImageManifest,
    ) -> Result<Pushed, Error> {
        let response = runtime()?
            .block_on(self.client.push(
                reference,
                layers,
                config,
                &auth(reference.resolve_registry()),
                Some(manifest),
            ))
            .map_err(|e| self.describe(reference, e))?;
        let digest = response
            .manifest_url
            .rsplit_once('/')
            .map(|(_, digest)| digest.to_owned())
            .filter(|d| is_sha256_digest(d))
            .ok_or_else(|| {
                format!(
                    "the registry answered an unexpected manifest URL: {}",
                    response.manifest_url
                )
            })?;
        Ok(Pushed {
            immutable_ref: format!(
                "{}/{}@{digest}",
                reference.registry(),
                reference.repository()
            ),
            manifest_digest: digest,
        })
    }

    /// Pulls the module of a policy artifact; anything but one wasm layer is refused.
    pub fn pull(&self, reference: &Reference) -> Result<Pulled, Error> {
        let image = runtime()?
            .block_on(self.client.pull(
                reference,
                &auth(reference.resolve_registry()),
                vec![WASM_LAYER_MEDIA_TYPE],
            ))
            .map_err(|e| match e {
                OciDistributionError::IncompatibleLayerMediaTypeError(found) => format!(
                    "{reference} is not a Kubewarden policy: layer media type {found}, expected {WASM_LAYER_MEDIA_TYPE}"
                )
                .into(),
                e => self.describe(reference, e),
            })?;
        let manifest = image
            .manifest
            .ok_or_else(|| format!("{reference}: the registry sent no image manifest"))?;
        let [layer] = <[ImageLayer; 1]>::try_from(image.layers).map_err(|layers| {
            format!(
                "{reference} is not a Kubewarden policy: {} layers, expected one wasm layer",
                layers.len()
            )
        })?;
        Ok(Pulled {
            module: layer.data.to_vec(),
            manifest,
            manifest_digest: image.digest.unwrap_or_default(),
        })
    }

    /// The manifest exactly as the registry stores it, and its digest.
    pub fn manifest_raw(&self, reference: &Reference) -> Result<(Vec<u8>, String), Error> {
        let (bytes, digest) = runtime()?
            .block_on(self.client.pull_manifest_raw(
                reference,
                &auth(reference.resolve_registry()),
                &[oci_client::manifest::OCI_IMAGE_MEDIA_TYPE],
            ))
            .map_err(|e| self.describe(reference, e))?;
        Ok((bytes.to_vec(), digest))
    }

    /// A blob of the repository (the config, in the tests).
    pub fn blob(&self, reference: &Reference, digest: &str) -> Result<Vec<u8>, Error> {
        let mut out = Vec::new();
        runtime()?
            .block_on(self.client.pull_blob(reference, digest, &mut out))
            .map_err(|e| self.describe(reference, e))?;
        Ok(out)
    }
}

fn is_sha256_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
    })
}

/// `sha256:<hex>` of some bytes, as registries name blobs.
pub fn sha256_digest(bytes: &[u8]) -> String {
    ImageLayer::new(bytes.to_vec(), String::new(), None).sha256_digest()
}
