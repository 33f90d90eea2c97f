use policy_tools::{artifacthub, metadata as m, project};

use crate::Error;

/// The committed artifacthub-pkg.yml is what the generator writes from the metadata, the
/// questions and the version today, `createdAt` aside.
#[test]
fn committed_file_is_fresh() -> Result<(), Error> {
    let committed = project::read_text("artifacthub-pkg.yml")?;
    let old = artifacthub::parse(&committed)?;
    let file = project::metadata_file()?;
    file.validate(Some(&project::cargo_version()?))?;
    let questions = project::read_text("questions-ui.yml")?;
    let fresh = artifacthub::render(&artifacthub::package(
        &file,
        Some(&questions),
        &old.created_at,
    )?)?;
    if fresh != committed {
        let diff: Vec<String> = fresh
            .lines()
            .zip(committed.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .take(5)
            .map(|(i, (a, b))| format!("line {}: generated {a:?}, committed {b:?}", i + 1))
            .collect();
        panic!(
            "artifacthub-pkg.yml is stale: run `make artifacthub-pkg.yml` and commit it\n{}",
            diff.join("\n")
        );
    }
    Ok(())
}

/// The fields a reader (Artifact Hub, the Rancher UI) uses, spelled out.
#[test]
fn package_fields() -> Result<(), Error> {
    let pkg = artifacthub::parse(&project::read_text("artifacthub-pkg.yml")?)?;
    let file = project::metadata_file()?;
    let version = project::cargo_version()?;
    assert_eq!(pkg.version.to_string(), version);
    assert_eq!(Some(pkg.name.as_str()), file.annotation(m::TITLE));
    let oci = file.annotation(m::OCI_URL).ok_or("ociUrl")?;
    let images = pkg.containers_images.as_deref().unwrap_or_default();
    assert_eq!(images.len(), 1);
    assert_eq!(images[0].name, "policy");
    assert_eq!(images[0].image, format!("{oci}:v{version}"));
    assert!(
        chrono::DateTime::parse_from_rfc3339(&pkg.created_at).is_ok(),
        "{}",
        pkg.created_at
    );
    let install = pkg.install.as_deref().unwrap_or_default();
    assert!(
        install.contains(&format!("kwctl pull {oci}:v{version}\n")),
        "{install}"
    );
    assert!(install.contains(&format!(
        "kwctl scaffold manifest -t ClusterAdmissionPolicy registry://{oci}:v{version}\n"
    )));
    let links: Vec<(&str, &str)> = pkg
        .links
        .iter()
        .flatten()
        .map(|l| (l.name.as_str(), l.url.as_str()))
        .collect();
    let source = file.annotation(m::SOURCE).ok_or("source")?;
    let release = format!("{source}/releases/download/v{version}/policy.wasm");
    assert_eq!(links, [("policy", release.as_str()), ("source", source)]);
    let maintainers = pkg.maintainers.as_deref().unwrap_or_default();
    assert_eq!(maintainers.len(), 1);
    assert_eq!(maintainers[0].name, "vm-maintenance-strategy developers");
    assert_eq!(maintainers[0].email, "vm-maintenance-strategy@example.org");
    assert_eq!(pkg.provider.name, "kubewarden");
    assert_eq!(pkg.recommendations[0].url, artifacthub::CONTROLLER_CHART);
    let a = &pkg.annotations;
    assert_eq!(a["kubewarden/mutation"], file.mutating.to_string());
    assert_eq!(
        Some(a["kubewarden/resources"].as_str()),
        file.annotation(m::ARTIFACTHUB_RESOURCES)
    );
    assert_eq!(
        a["kubewarden/questions-ui"],
        project::read_text("questions-ui.yml")?
    );
    let rules: Vec<m::Rule> = serde_yaml::from_str(&a["kubewarden/rules"])?;
    assert_eq!(rules, file.rules);
    let resources: Vec<m::ContextAwareResource> =
        serde_yaml::from_str(&a["kubewarden/contextAwareResources"])?;
    assert_eq!(resources, file.context_aware_resources);
    assert!(project::read_text("artifacthub-pkg.yml")?.starts_with(artifacthub::HEADER));
    Ok(())
}

/// RFC 5322 lists, as kwctl reads them for maintainers.
#[test]
fn maintainers_from_author_lists() {
    let ok = |s: &str| {
        artifacthub::maintainers(s)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
            .into_iter()
            .map(|m| (m.name, m.email))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ok("Tux Tuxedo <tux@example.com>, Pidgin <pidgin@example.com>"),
        [
            ("Tux Tuxedo".to_owned(), "tux@example.com".to_owned()),
            ("Pidgin".to_owned(), "pidgin@example.com".to_owned())
        ]
    );
    assert_eq!(
        ok("\"Doe, Jane\" <jane@example.org>"),
        [("Doe, Jane".to_owned(), "jane@example.org".to_owned())]
    );
    for bad in [
        "",
        "Bar <#$%#$%>",
        "Foo missing@chevrons, Bar <bar@example.com>",
    ] {
        assert!(artifacthub::maintainers(bad).is_err(), "{bad:?} accepted");
    }
}

/// Without ociUrl there is no package, as with kwctl.
#[test]
fn oci_url_is_required() -> Result<(), Error> {
    let mut file = project::metadata_file()?;
    file.annotations.remove(m::OCI_URL);
    let error = artifacthub::package(&file, None, "2026-01-01T00:00:00Z")
        .err()
        .ok_or("a package without ociUrl")?;
    assert!(
        error
            .to_string()
            .contains("io.kubewarden.policy.ociUrl is required"),
        "{error}"
    );
    Ok(())
}
