//! `artifacthub-pkg.yml` from the metadata, `questions-ui.yml` and the version, in the shape and
//! order `kwctl scaffold artifacthub` writes.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Error;
pub use crate::authors::{Maintainer, maintainers};
use crate::metadata::{self as m, MetadataFile};

/// kwctl's header, so the committed file reads the same as a scaffolded one.
pub const HEADER: &str = "# Kubewarden Artifacthub Package config
#
# Use this config to submit the policy to https://artifacthub.io.
#
# This config can be saved to its default location with:
#   kwctl scaffold artifacthub > artifacthub-pkg.yml ";

/// The Artifact Hub package; fields in kwctl's order. URLs are kept as the text `url::Url`
/// normalizes them to, as kwctl writes them.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    pub version: semver::Version,
    pub name: String,
    pub display_name: String,
    pub created_at: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    #[serde(rename = "homeURL", default, skip_serializing_if = "Option::is_none")]
    pub home_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containers_images: Option<Vec<ContainerImage>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keywords: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<Link>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintainers: Option<Vec<Maintainer>>,
    pub provider: Provider,
    pub recommendations: Vec<Recommendation>,
    pub annotations: BTreeMap<String, String>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ContainerImage {
    pub name: String,
    pub image: String,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Link {
    pub name: String,
    pub url: String,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Provider {
    pub name: String,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Recommendation {
    pub url: String,
}

pub const CONTROLLER_CHART: &str =
    "https://artifacthub.io/packages/helm/kubewarden/kubewarden-controller";

fn required<'a>(metadata: &'a MetadataFile, key: &str) -> Result<&'a str, Error> {
    metadata
        .annotation(key)
        .ok_or_else(|| format!("metadata: annotations.{key} is required for Artifact Hub").into())
}

/// The kwctl install instructions for a tagged reference.
fn install(oci_ref: &str) -> String {
    format!(
        "The policy can be obtained using [kwctl](https://docs.kubewarden.io/howtos/install-kwctl):\n```console\nkwctl pull {oci_ref}\n```\nThen, generate the policy manifest and tune it to your liking. For example:\n```console\nkwctl scaffold manifest -t ClusterAdmissionPolicy registry://{oci_ref}\n```\n"
    )
}

/// Builds the package. `created_at` is an RFC 3339 time.
pub fn package(
    metadata: &MetadataFile,
    questions: Option<&str>,
    created_at: &str,
) -> Result<Package, Error> {
    let version_text = required(metadata, m::VERSION)?;
    let version = semver::Version::parse(version_text)
        .map_err(|e| format!("annotations.{}: {e}", m::VERSION))?;
    if let Some(questions) = questions {
        check_questions(questions)?;
    }
    let oci_url = required(metadata, m::OCI_URL)?;
    m::check_oci_url(oci_url).map_err(|e| format!("annotations.{}: {e}", m::OCI_URL))?;
    let oci_ref = crate::oci::parse_reference(&format!("{oci_url}:v{version}"))?.to_string();
    let home_url = metadata
        .annotation(m::URL)
        .map(url::Url::parse)
        .transpose()
        .map_err(|e| format!("annotations.{}: {e}", m::URL))?
        .map(String::from);
    let keywords = keywords(metadata)?;
    let links = metadata
        .annotation(m::SOURCE)
        .map(|source| links(metadata, source, &version))
        .transpose()?;
    let maintainers = metadata
        .annotation(m::AUTHOR)
        .map(maintainers)
        .transpose()
        .map_err(|e| format!("annotations.{}: {e}", m::AUTHOR))?;
    let annotations = kubewarden_annotations(metadata, questions)?;
    Ok(Package {
        version,
        name: required(metadata, m::TITLE)?.to_owned(),
        display_name: required(metadata, m::ARTIFACTHUB_DISPLAY_NAME)?.to_owned(),
        created_at: created_at.to_owned(),
        description: required(metadata, m::DESCRIPTION)?.to_owned(),
        license: metadata.annotation(m::LICENSE).map(str::to_owned),
        home_url,
        containers_images: Some(vec![ContainerImage {
            name: "policy".to_owned(),
            image: oci_ref.clone(),
        }]),
        keywords,
        links,
        install: Some(install(&oci_ref)),
        maintainers,
        provider: Provider {
            name: "kubewarden".to_owned(),
        },
        recommendations: vec![Recommendation {
            url: CONTROLLER_CHART.to_owned(),
        }],
        annotations,
    })
}

/// Artifact Hub stores the questions verbatim; a form the UI cannot read is caught here.
fn check_questions(questions: &str) -> Result<(), Error> {
    let form: serde_yaml::Value =
        serde_yaml::from_str(questions).map_err(|e| format!("questions-ui.yml: not YAML: {e}"))?;
    if !form
        .get("questions")
        .is_some_and(serde_yaml::Value::is_sequence)
    {
        return Err("questions-ui.yml: a `questions:` list is required".into());
    }
    Ok(())
}

/// The comma-separated keywords annotation, each trimmed; an empty one is an error.
fn keywords(metadata: &MetadataFile) -> Result<Option<Vec<String>>, Error> {
    let keywords = metadata.annotation(m::ARTIFACTHUB_KEYWORDS).map(|k| {
        k.split(',')
            .map(|w| w.trim_matches(' ').to_owned())
            .collect::<Vec<_>>()
    });
    if keywords.iter().flatten().any(String::is_empty) {
        return Err(format!("annotations.{}: empty keyword", m::ARTIFACTHUB_KEYWORDS).into());
    }
    Ok(keywords)
}

/// The source link, preceded on GitHub by the release's `policy.wasm`.
fn links(
    metadata: &MetadataFile,
    source: &str,
    version: &semver::Version,
) -> Result<Vec<Link>, Error> {
    let source = url::Url::parse(source).map_err(|e| format!("annotations.{}: {e}", m::SOURCE))?;
    let mut links = Vec::new();
    if source.host_str() == Some("github.com") {
        let tag = metadata.annotation(m::GITHUB_RELEASE_TAG).map_or_else(
            || format!("v{version}"),
            |t| url::form_urlencoded::byte_serialize(t.as_bytes()).collect(),
        );
        let wasm = format!("{}/releases/download/{tag}/policy.wasm", source.as_str());
        links.push(Link {
            name: "policy".to_owned(),
            url: url::Url::parse(&wasm)
                .map_err(|e| format!("{wasm}: {e}"))?
                .into(),
        });
    }
    links.push(Link {
        name: "source".to_owned(),
        url: source.into(),
    });
    Ok(links)
}

/// The `kubewarden/*` annotations Artifact Hub shows: mutation, context-aware resources, rules,
/// and the UI and resources annotations that are set.
fn kubewarden_annotations(
    metadata: &MetadataFile,
    questions: Option<&str>,
) -> Result<BTreeMap<String, String>, Error> {
    let mut annotations = BTreeMap::new();
    annotations.insert(
        "kubewarden/mutation".to_owned(),
        metadata.mutating.to_string(),
    );
    let resources: std::collections::BTreeSet<_> =
        metadata.context_aware_resources.iter().cloned().collect();
    if !resources.is_empty() {
        annotations.insert(
            "kubewarden/contextAwareResources".to_owned(),
            serde_yaml::to_string(&resources)?,
        );
    }
    annotations.insert(
        "kubewarden/rules".to_owned(),
        serde_yaml::to_string(&metadata.rules)?,
    );
    if let Some(questions) = questions {
        annotations.insert("kubewarden/questions-ui".to_owned(), questions.to_owned());
    }
    if let Some(hidden) = metadata.annotation(m::HIDDEN_UI) {
        annotations.insert("kubewarden/hidden-ui".to_owned(), hidden.to_owned());
    }
    if let Some(resources) = metadata.annotation(m::ARTIFACTHUB_RESOURCES) {
        annotations.insert("kubewarden/resources".to_owned(), resources.to_owned());
    }
    Ok(annotations)
}

/// The file's text: kwctl's header, then the package as YAML.
pub fn render(package: &Package) -> Result<String, Error> {
    Ok(format!("{HEADER}\n{}", serde_yaml::to_string(package)?))
}

/// Reads a committed file back.
pub fn parse(text: &str) -> Result<Package, Error> {
    Ok(serde_yaml::from_str(text).map_err(|e| format!("artifacthub-pkg.yml: {e}"))?)
}

/// Now, in RFC 3339 (UTC, seconds).
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
