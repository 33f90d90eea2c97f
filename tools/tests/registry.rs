//! A real registry: Debian's docker-registry (CNCF distribution) on a free loopback port with a
//! temporary storage directory. The annotated module is pushed, pulled back by tag and by digest,
//! its manifest checked, and the pulled module evaluated with the e2e host.

use std::collections::BTreeMap;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use oci_client::client::{Config, ImageLayer};
use oci_client::manifest::{OciImageManifest, WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE};
use policy_host::{Evaluation, PolicyHost};
use policy_tools::oci::{self, Registry};
use policy_tools::{Error, metadata as m, project, signing};
use serde_json::{Value, json};

/// A running docker-registry; killed when dropped (also when a test panics).
struct LocalRegistry {
    child: Child,
    addr: String,
    _storage: tempfile::TempDir,
}

fn registry_binary() -> Result<PathBuf, Error> {
    if let Some(path) = std::env::var_os("DOCKER_REGISTRY") {
        let path = PathBuf::from(path);
        if !path.is_file() {
            return Err(format!("DOCKER_REGISTRY={}: no such file", path.display()).into());
        }
        return Ok(path);
    }
    let found = std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("docker-registry"))
        .find(|p| p.is_file());
    found.ok_or_else(|| {
        "docker-registry is not installed: the registry tests need it (Debian package \
         docker-registry: `apt-get install -y docker-registry`, which `make test` (setup-registry) and .ci/run do)"
            .into()
    })
}

impl LocalRegistry {
    fn start() -> Result<LocalRegistry, Error> {
        let binary = registry_binary()?;
        let storage = tempfile::tempdir()?;
        // A free port: bind, read it, release it for the registry.
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let addr = format!("127.0.0.1:{port}");
        let config = storage.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\n  accesslog:\n    disabled: true\nstorage:\n  filesystem:\n    rootdirectory: {}\n  delete:\n    enabled: true\nhttp:\n  addr: {addr}\n",
                storage.path().join("data").display()
            ),
        )?;
        let child = Command::new(&binary)
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("{}: {e}", binary.display()))?;
        let mut registry = LocalRegistry {
            child,
            addr,
            _storage: storage,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(&registry.addr).is_err() {
            if let Some(status) = registry.child.try_wait()? {
                return Err(format!("docker-registry exited at start-up: {status}").into());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "docker-registry did not listen on {} in 20 s",
                    registry.addr
                )
                .into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(registry)
    }

    fn reference(&self, repo_and_tag: &str) -> Result<oci_client::Reference, Error> {
        oci::parse_reference(&format!("registry://{}/{repo_and_tag}", self.addr))
    }

    fn client(&self) -> Registry {
        Registry::new(std::slice::from_ref(&self.addr))
    }
}

impl Drop for LocalRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn vm_create(fixture: &str) -> Result<Value, Error> {
    let object: Value =
        serde_yaml::from_str(&project::read_text(&format!("fixtures/{fixture}.yaml"))?)?;
    Ok(json!({
        "uid": "registry-round-trip",
        "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
        "resource": {"group": "kubevirt.io", "version": "v1", "resource": "virtualmachines"},
        "name": object["metadata"]["name"],
        "namespace": object["metadata"]["namespace"],
        "operation": "CREATE",
        "userInfo": {"username": "e2e"},
        "object": object,
    }))
}

#[test]
fn push_pull_by_tag_and_digest_then_evaluate() -> Result<(), Error> {
    let annotated = project::annotated()?;
    let module = annotated.module;
    let registry = LocalRegistry::start()?;
    let client = registry.client();
    let version = project::cargo_version()?;
    let tagged = registry.reference(&format!("policies/vm-maintenance-strategy:v{version}"))?;

    let started = Instant::now();
    let pushed = client.push(&module, &tagged)?;
    let by_tag = client.pull(&tagged)?;
    let by_digest_ref = oci::parse_reference(&format!("registry://{}", pushed.immutable_ref))?;
    let by_digest = client.pull(&by_digest_ref)?;
    let elapsed = started.elapsed();
    eprintln!(
        "registry round trip (push + 2 pulls, {} bytes): {elapsed:?}",
        module.len()
    );

    // The immutable reference, as kwctl prints it.
    let prefix = format!("{}/policies/vm-maintenance-strategy@sha256:", registry.addr);
    assert!(
        pushed.immutable_ref.starts_with(&prefix),
        "{}",
        pushed.immutable_ref
    );
    assert_eq!(pushed.immutable_ref.len(), prefix.len() + 64);
    assert_eq!(pushed.manifest_digest, by_tag.manifest_digest);
    assert_eq!(pushed.manifest_digest, by_digest.manifest_digest);

    // Bytes.
    assert!(by_tag.module == module, "pulled by tag: other bytes");
    assert!(by_digest.module == module, "pulled by digest: other bytes");

    // The manifest, raw as stored: OCI image manifest, wasm config `{}`, one wasm layer.
    let (raw, digest) = client.manifest_raw(&tagged)?;
    assert_eq!(digest, pushed.manifest_digest);
    assert_eq!(
        oci::sha256_digest(&raw),
        pushed.manifest_digest,
        "digest of the stored bytes"
    );
    let manifest: Value = serde_json::from_slice(&raw)?;
    assert_eq!(manifest["schemaVersion"], 2);
    // Like kwctl's (oci-client's `OciImageManifest::build`), the manifest names no mediaType: it
    // is pushed and served as `application/vnd.oci.image.manifest.v1+json`, the only type asked.
    assert!(manifest.get("mediaType").is_none(), "{manifest}");
    assert_eq!(manifest["config"]["mediaType"], WASM_CONFIG_MEDIA_TYPE);
    assert_eq!(manifest["config"]["size"], 2);
    assert_eq!(manifest["config"]["digest"], oci::sha256_digest(b"{}"));
    let config_digest = manifest["config"]["digest"]
        .as_str()
        .ok_or("config digest")?;
    assert_eq!(client.blob(&tagged, config_digest)?, b"{}");
    let layers = manifest["layers"].as_array().ok_or("layers")?;
    assert_eq!(layers.len(), 1);
    assert_eq!(layers[0]["mediaType"], WASM_LAYER_MEDIA_TYPE);
    assert_eq!(layers[0]["size"], module.len());
    assert_eq!(layers[0]["digest"], oci::sha256_digest(&module));
    assert!(
        layers[0].get("annotations").is_none(),
        "the layer carries no annotations"
    );

    // Annotations: the single-line metadata annotations, plus the OCI source.
    let annotations: std::collections::BTreeMap<String, String> =
        serde_json::from_value(manifest["annotations"].clone())?;
    let file = project::metadata_file()?;
    let mut want = file.annotations.clone();
    want.insert(
        oci::ORG_OPENCONTAINERS_IMAGE_SOURCE.to_owned(),
        file.annotation(m::SOURCE).ok_or("source")?.to_owned(),
    );
    assert_eq!(annotations, want);
    assert!(
        !annotations.contains_key(m::USAGE),
        "multi-line usage is left out"
    );
    assert_eq!(by_tag.manifest.annotations, Some(want));

    // The pulled module is a working policy with its metadata.
    let metadata =
        policy_tools::annotate::read_metadata(&by_digest.module)?.ok_or("no metadata")?;
    assert_eq!(metadata.protocol_version, "v1");
    let host = PolicyHost::from_bytes(&by_digest.module)?;
    // The cluster default is given, so no rule needs to read the KubeVirt CR.
    let settings = json!({"evictionStrategy": {"clusterDefault": "LiveMigrateIfPossible"}});
    let answer = match host.evaluate(&vm_create("legacy-01-unlabelled")?, &settings)? {
        Evaluation::Answered(answer) => answer,
        Evaluation::SettingsRefused(m) => return Err(m.into()),
    };
    assert!(answer.response.allowed);
    assert_eq!(answer.response.patch_type.as_deref(), Some("JSONPatch"));
    assert_eq!(
        answer.object["metadata"]["labels"]["harvesterhci.io/maintain-mode-strategy"],
        "Migrate"
    );
    Ok(())
}

#[test]
fn pull_refuses_an_artifact_that_is_not_a_policy() -> Result<(), Error> {
    let registry = LocalRegistry::start()?;
    let client = registry.client();
    let reference = registry.reference("other/tarball:v1")?;
    let tarball = "application/vnd.oci.image.layer.v1.tar+gzip";
    push_layer(&client, &reference, b"not wasm", tarball)?;
    let error = client
        .pull(&reference)
        .err()
        .ok_or("a tarball was pulled as a policy")?
        .to_string();
    assert!(
        error.contains("is not a Kubewarden policy: layer media type application/vnd.oci.image.layer.v1.tar+gzip"),
        "{error}"
    );
    Ok(())
}

#[test]
fn push_refuses_an_unannotated_module() -> Result<(), Error> {
    let registry = LocalRegistry::start()?;
    let error = registry
        .client()
        .push(&project::module()?, &registry.reference("policies/raw:v1")?)
        .err()
        .ok_or("an unannotated module was pushed")?
        .to_string();
    assert!(error.contains("the module is not annotated"), "{error}");
    Ok(())
}

/// Plain HTTP only for the registries named as insecure: without the name, HTTPS is tried and fails.
#[test]
fn plain_http_only_when_named_insecure() -> Result<(), Error> {
    let registry = LocalRegistry::start()?;
    let annotated = project::annotated()?;
    let error = Registry::new(&[])
        .push(&annotated.module, &registry.reference("policies/x:v1")?)
        .err()
        .ok_or("pushed over HTTPS to a plain-HTTP registry")?
        .to_string();
    assert!(error.contains("INSECURE=HOST:PORT"), "{error}");
    Ok(())
}

/// One layer of `media_type` pushed as an artifact (with the wasm config) at `reference`.
fn push_layer(
    client: &Registry,
    reference: &oci_client::Reference,
    bytes: &[u8],
    media_type: &str,
) -> Result<oci::Pushed, Error> {
    let layers = vec![ImageLayer::new(bytes.to_vec(), media_type.to_owned(), None)];
    let config = Config {
        data: b"{}".to_vec().into(),
        media_type: WASM_CONFIG_MEDIA_TYPE.to_owned(),
        annotations: None,
    };
    let manifest = OciImageManifest::build(&layers, &config, None);
    client.push_artifact(reference, &layers, config, manifest)
}

/// A pushed policy and its immutable reference (`registry/repo@sha256:...`).
fn pushed_policy(
    registry: &LocalRegistry,
    repo_and_tag: &str,
) -> Result<oci_client::Reference, Error> {
    let annotated = project::annotated()?;
    let pushed = registry
        .client()
        .push(&annotated.module, &registry.reference(repo_and_tag)?)?;
    oci::parse_reference(&format!("registry://{}", pushed.immutable_ref))
}

/// Sign, then verify: the key, the annotations, a wrong key, a payload naming another digest
/// under this digest's tag, and an unsigned artifact, each refused with its own words.
#[test]
fn sign_then_verify() -> Result<(), Error> {
    let registry = LocalRegistry::start()?;
    let client = registry.client();
    let signed = pushed_policy(&registry, "policies/signed:v1")?;
    let (private, public) = signing::generate(b"secret")?;
    let key = signing::signing_key(&private, b"secret")?;
    let public = signing::verifying_key(&public)?;
    let annotations: BTreeMap<String, String> = [("env".to_owned(), "prod".to_owned())].into();
    let signature = signing::sign(&client, &signed, &key, &annotations)?;
    let digest = signed.digest().unwrap_or_default().to_owned();
    assert!(
        signature.ends_with(&format!(":{}.sig", digest.replace(':', "-"))),
        "{signature}"
    );

    signing::verify(&client, &signed, &public, &BTreeMap::new())?;
    signing::verify(&client, &signed, &public, &annotations)?;
    let refused =
        |result: Result<(), Error>| result.err().map(|e| e.to_string()).unwrap_or_default();
    let dev: BTreeMap<String, String> = [("env".to_owned(), "dev".to_owned())].into();
    let error = refused(signing::verify(&client, &signed, &public, &dev));
    assert_eq!(
        error,
        format!("{signed}: no valid signature (annotation env=dev missing)")
    );

    let (_, other) = signing::generate(b"other")?;
    let error = refused(signing::verify(
        &client,
        &signed,
        &signing::verifying_key(&other)?,
        &BTreeMap::new(),
    ));
    assert_eq!(
        error,
        format!("{signed}: no valid signature (the signature does not verify with this key)")
    );

    let wrong_password = signing::signing_key(&private, b"guess")
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        wrong_password.as_deref(),
        Some("the key file does not open with this password (COSIGN_PASSWORD)")
    );

    // Another artifact: unsigned, then given a signature whose payload names the first digest.
    let other_tag = registry.reference("policies/other:v1")?;
    let pushed = push_layer(&client, &other_tag, b"other", WASM_LAYER_MEDIA_TYPE)?;
    let other = oci::parse_reference(&format!("registry://{}", pushed.immutable_ref))?;
    let error = refused(signing::verify(&client, &other, &public, &BTreeMap::new()));
    let tag = signing::signature_reference(&other, &pushed.manifest_digest);
    assert!(
        error.starts_with(&format!("{other}: not signed (no {tag}): ")),
        "{error}"
    );
    let moved = signing::payload(&other, &digest, &BTreeMap::new());
    signing::push_signature(&client, &tag, moved, &key)?;
    let error = refused(signing::verify(&client, &other, &public, &BTreeMap::new()));
    assert_eq!(
        error,
        format!(
            "{other}: no valid signature (the payload names {digest}, not {})",
            pushed.manifest_digest
        )
    );
    kwctl_verifies(&registry, &signed, &signing::verifying_key_pem(&public)?)
}

/// Where kwctl is on PATH and `SIGSTORE_TRUST_CONFIG` names a Sigstore trust configuration (kwctl
/// needs one offline even for a key, docs/releasing.md), `kwctl verify -k` accepts the signature;
/// elsewhere this says it skipped.
fn kwctl_verifies(
    registry: &LocalRegistry,
    signed: &oci_client::Reference,
    public: &str,
) -> Result<(), Error> {
    let trust = std::env::var_os("SIGSTORE_TRUST_CONFIG").map(std::path::PathBuf::from);
    let kwctl = Command::new("kwctl").arg("--version").output();
    let Some(trust) = trust.filter(|t| kwctl.is_ok() && t.is_file()) else {
        eprintln!(
            "kwctl verify: skipped (needs kwctl on PATH and SIGSTORE_TRUST_CONFIG, a Sigstore trust configuration file)"
        );
        return Ok(());
    };
    let dir = tempfile::tempdir()?;
    let key = dir.path().join("cosign.pub");
    std::fs::write(&key, public)?;
    let sources = dir.path().join("sources.yaml");
    std::fs::write(
        &sources,
        format!("insecure_sources:\n  - \"{}\"\n", registry.addr),
    )?;
    // kwctl verify on the local registry, offline, with `how` (a key or a verification config).
    let verify = |how: &[&std::ffi::OsStr]| -> Result<(bool, String), Error> {
        let output = Command::new("kwctl")
            .arg("verify")
            .arg("--sources-path")
            .arg(&sources)
            .arg("--sigstore-trust-config")
            .arg(&trust)
            .args(how)
            .arg(format!("registry://{signed}"))
            .output()?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        Ok((output.status.success(), text))
    };
    let (accepted, text) = verify(&[
        "-k".as_ref(),
        key.as_os_str(),
        "-a".as_ref(),
        "env=prod".as_ref(),
    ])?;
    assert!(accepted, "kwctl verify refused the signature:\n{text}");
    eprintln!("kwctl verify: accepted ({})", text.trim());
    // examples/verification-config.yml with this key: the format policy-server reads.
    let example = project::read_text("examples/verification-config.yml")?;
    let body: Vec<&str> = public.lines().filter(|l| !l.starts_with("-----")).collect();
    let config = dir.path().join("verification-config.yml");
    let filled = example.replace(
        "REPLACE-WITH-THE-CONTENT-OF-cosign.pub",
        &body.join("\n      "),
    );
    std::fs::write(&config, filled)?;
    let (accepted, text) = verify(&["--verification-config-path".as_ref(), config.as_os_str()])?;
    assert!(
        accepted,
        "kwctl verify refused examples/verification-config.yml:\n{text}"
    );
    policy_server_verifies(registry, signed, &config, &trust)
}

/// Where policy-server is on PATH: it downloads the signed policy with the verification config
/// (`verified-signatures`), and refuses to start when the config names another key.
fn policy_server_verifies(
    registry: &LocalRegistry,
    signed: &oci_client::Reference,
    config: &std::path::Path,
    trust: &std::path::Path,
) -> Result<(), Error> {
    if Command::new("policy-server")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("policy-server --verification-path: skipped (policy-server is not on PATH)");
        return Ok(());
    }
    let dir = tempfile::tempdir()?;
    let sources = dir.path().join("sources.yaml");
    std::fs::write(
        &sources,
        format!("insecure_sources:\n  - \"{}\"\n", registry.addr),
    )?;
    let policies = dir.path().join("policies.yml");
    std::fs::write(
        &policies,
        format!("vm:\n  module: registry://{signed}\n  allowedToMutate: true\n"),
    )?;
    // The same config naming another key.
    let (_, other) = signing::generate(b"other")?;
    let other_body: Vec<&str> = other.lines().filter(|l| !l.starts_with("-----")).collect();
    let text = std::fs::read_to_string(config)?;
    let begin = "-----BEGIN PUBLIC KEY-----\n";
    let start = text.find(begin).map_or(0, |at| at + begin.len());
    let end = text.find("      -----END PUBLIC KEY-----").unwrap_or(start);
    let other_config = dir.path().join("other.yml");
    let body = other_body.join("\n      ");
    std::fs::write(
        &other_config,
        format!("{}      {body}\n{}", &text[..start], &text[end..]),
    )?;
    let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let run = |verification: &std::path::Path, log: &str| -> Result<(Option<i32>, String), Error> {
        let log = dir.path().join(log);
        let mut child = Command::new("policy-server")
            .arg("--policies")
            .arg(&policies)
            .arg("--sources-path")
            .arg(&sources)
            .arg("--verification-path")
            .arg(verification)
            .arg("--sigstore-trust-config")
            .arg(trust)
            .arg("--policies-download-dir")
            .arg(dir.path())
            .arg("--sigstore-cache-dir")
            .arg(dir.path().join("sigstore"))
            .arg("--ignore-kubernetes-connection-failure")
            .arg("--addr")
            .arg("127.0.0.1")
            .arg("--port")
            .arg(port.to_string())
            .stdout(std::fs::File::create(&log)?)
            .stderr(Stdio::null())
            .spawn()?;
        let deadline = Instant::now() + Duration::from_secs(60);
        let code = loop {
            if let Some(status) = child.try_wait()? {
                break status.code();
            }
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            if text.contains("verified-signatures") || Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        Ok((code, std::fs::read_to_string(&log).unwrap_or_default()))
    };
    let (_, log) = run(config, "signed.log")?;
    assert!(
        log.contains("status=\"verified-signatures\""),
        "policy-server did not verify the signature:\n{log}"
    );
    let (code, log) = run(&other_config, "other.log")?;
    assert_eq!(
        code,
        Some(1),
        "policy-server started with another key's config:\n{log}"
    );
    assert!(log.contains("missing signatures"), "{log}");
    eprintln!("policy-server --verification-path: verified, and refused with another key");
    Ok(())
}
