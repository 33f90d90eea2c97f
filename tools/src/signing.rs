//! Key-based signatures in cosign's format, which kwctl and policy-server verify (sigstore-rs):
//! the signature of `REPO@sha256:HEX` is an OCI manifest at tag `sha256-HEX.sig` whose layer
//! (`application/vnd.dev.cosign.simplesigning.v1+json`) is the SimpleSigning payload naming the
//! manifest digest, with the ECDSA P-256 / SHA-256 signature of that payload (DER, base64) in
//! the layer annotation `dev.cosignproject.cosign/signature`. No Fulcio, no Rekor.
//!
//! Keys: cosign's own files (`cosign generate-key-pair`: an `ENCRYPTED SIGSTORE PRIVATE KEY`,
//! scrypt + NaCl secretbox, password in `COSIGN_PASSWORD`) or a PKCS#8 `PRIVATE KEY`; public keys
//! as `PUBLIC KEY` (PKIX). [`generate`] writes a pair in cosign's format.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use crypto_secretbox::XSalsa20Poly1305;
use crypto_secretbox::aead::{Aead, KeyInit};
use oci_client::Reference;
use oci_client::client::{Config, ImageLayer};
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciImageManifest};
use p256::ecdsa::signature::{Signer, Verifier};
use p256::ecdsa::{DerSignature, SigningKey, VerifyingKey};
use p256::pkcs8::{
    DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey, LineEnding,
};
use rand_core::{OsRng, RngCore};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Error;
use crate::oci::{Registry, sha256_digest};

pub const SIMPLE_SIGNING_MEDIA_TYPE: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
const CONFIG_MEDIA_TYPE: &str = "application/vnd.oci.image.config.v1+json";
const PAYLOAD_TYPE: &str = "cosign container image signature";
const ENCRYPTED_LABELS: [&str; 2] = [
    "ENCRYPTED SIGSTORE PRIVATE KEY",
    "ENCRYPTED COSIGN PRIVATE KEY",
];
/// go-tuf's scrypt parameters, the only ones cosign writes (and sigstore-rs reads).
const SCRYPT_LOG_N: u8 = 15;
const SCRYPT_R: u32 = 8;
const SCRYPT_P: u32 = 1;

/// cosign's encrypted key file, as JSON inside the PEM block.
#[derive(Serialize, Deserialize)]
struct Encrypted {
    kdf: Kdf,
    cipher: Cipher,
    ciphertext: String,
}

#[derive(Serialize, Deserialize)]
struct Kdf {
    name: String,
    params: ScryptParams,
    salt: String,
}

#[derive(Serialize, Deserialize)]
struct ScryptParams {
    #[serde(rename = "N")]
    n: u32,
    r: u32,
    p: u32,
}

#[derive(Serialize, Deserialize)]
struct Cipher {
    name: String,
    nonce: String,
}

fn box_key(password: &[u8], salt: &[u8]) -> Result<[u8; 32], Error> {
    let params = scrypt::Params::new(SCRYPT_LOG_N, SCRYPT_R, SCRYPT_P, 32)
        .map_err(|e| format!("scrypt: {e}"))?;
    let mut key = [0u8; 32];
    scrypt::scrypt(password, salt, &params, &mut key).map_err(|e| format!("scrypt: {e}"))?;
    Ok(key)
}

/// A PEM block's label and base64 body.
fn pem_block(text: &str) -> Option<(&str, String)> {
    let start = text.find("-----BEGIN ")?;
    let rest = &text[start + 11..];
    let label_end = rest.find("-----")?;
    let label = &rest[..label_end];
    let body_start = label_end + 5;
    let end = rest.find(&format!("-----END {label}-----"))?;
    let body: String = rest[body_start..end].split_whitespace().collect();
    Some((label, body))
}

/// The signing key of a key file: cosign's encrypted format (with `password`) or PKCS#8.
pub fn signing_key(text: &str, password: &[u8]) -> Result<SigningKey, Error> {
    let (label, body) = pem_block(text).ok_or("not a PEM key file")?;
    if ENCRYPTED_LABELS.contains(&label) {
        let json = BASE64.decode(body).map_err(|e| format!("{label}: {e}"))?;
        let encrypted: Encrypted =
            serde_json::from_slice(&json).map_err(|e| format!("{label}: {e}"))?;
        let params = &encrypted.kdf.params;
        if encrypted.kdf.name != "scrypt" || encrypted.cipher.name != "nacl/secretbox" {
            return Err(format!("{label}: unknown kdf or cipher").into());
        }
        if (params.n, params.r, params.p) != (1 << SCRYPT_LOG_N, SCRYPT_R, SCRYPT_P) {
            return Err(format!("{label}: unexpected scrypt parameters").into());
        }
        let decode = |text: &str| BASE64.decode(text).map_err(|e| format!("{label}: {e}"));
        let key = box_key(password, &decode(&encrypted.kdf.salt)?)?;
        let nonce = decode(&encrypted.cipher.nonce)?;
        if nonce.len() != 24 {
            return Err(format!("{label}: a nonce of {} bytes", nonce.len()).into());
        }
        let der = XSalsa20Poly1305::new(&key.into())
            .decrypt(
                nonce.as_slice().into(),
                decode(&encrypted.ciphertext)?.as_slice(),
            )
            .map_err(|_| "the key file does not open with this password (COSIGN_PASSWORD)")?;
        return SigningKey::from_pkcs8_der(&der).map_err(|e| format!("{label}: {e}").into());
    }
    SigningKey::from_pkcs8_pem(text).map_err(|e| format!("{label}: {e}").into())
}

/// The public key as a `PUBLIC KEY` PEM (what kwctl's `-k` reads).
pub fn verifying_key_pem(key: &VerifyingKey) -> Result<String, Error> {
    key.to_public_key_pem(LineEnding::LF)
        .map_err(|e| e.to_string().into())
}

pub fn verifying_key(text: &str) -> Result<VerifyingKey, Error> {
    VerifyingKey::from_public_key_pem(text)
        .map_err(|e| format!("not a P-256 public key: {e}").into())
}

/// A new key pair: cosign's encrypted private key file (with `password`) and the public key.
pub fn generate(password: &[u8]) -> Result<(String, String), Error> {
    let key = SigningKey::random(&mut OsRng);
    let der = key.to_pkcs8_der().map_err(|e| e.to_string())?;
    let mut salt = [0u8; 32];
    let mut nonce = [0u8; 24];
    OsRng.fill_bytes(&mut salt);
    OsRng.fill_bytes(&mut nonce);
    let sealed = XSalsa20Poly1305::new(&box_key(password, &salt)?.into())
        .encrypt(&nonce.into(), der.as_bytes())
        .map_err(|e| e.to_string())?;
    let encrypted = Encrypted {
        kdf: Kdf {
            name: "scrypt".to_owned(),
            params: ScryptParams {
                n: 1 << SCRYPT_LOG_N,
                r: SCRYPT_R,
                p: SCRYPT_P,
            },
            salt: BASE64.encode(salt),
        },
        cipher: Cipher {
            name: "nacl/secretbox".to_owned(),
            nonce: BASE64.encode(nonce),
        },
        ciphertext: BASE64.encode(sealed),
    };
    let body = BASE64.encode(serde_json::to_vec(&encrypted)?);
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(64)
        .filter_map(|c| std::str::from_utf8(c).ok())
        .collect();
    let private = format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        lines.join("\n"),
        label = ENCRYPTED_LABELS[0]
    );
    let public = key
        .verifying_key()
        .to_public_key_pem(LineEnding::LF)
        .map_err(|e| e.to_string())?;
    Ok((private, public))
}

/// The repository and digest a signature is for (`registry/repo@sha256:...`).
fn digest_of(reference: &Reference) -> Result<&str, Error> {
    reference.digest().ok_or_else(|| {
        format!("{reference}: sign and verify a digest (REPO@sha256:...), not a tag").into()
    })
}

/// Where cosign keeps the signatures of `digest`: tag `sha256-HEX.sig` of the same repository.
pub fn signature_reference(reference: &Reference, digest: &str) -> Reference {
    let tag = format!("{}.sig", digest.replace(':', "-"));
    Reference::with_tag(
        reference.registry().to_owned(),
        reference.repository().to_owned(),
        tag,
    )
}

/// The SimpleSigning payload naming `digest` of `reference`'s repository.
pub fn payload(
    reference: &Reference,
    digest: &str,
    annotations: &BTreeMap<String, String>,
) -> Vec<u8> {
    let optional = if annotations.is_empty() {
        Value::Null
    } else {
        json!(annotations)
    };
    let payload = json!({
        "critical": {
            "identity": {"docker-reference": format!("{}/{}", reference.registry(), reference.repository())},
            "image": {"docker-manifest-digest": digest},
            "type": PAYLOAD_TYPE,
        },
        "optional": optional,
    });
    payload.to_string().into_bytes()
}

/// Signs `reference` (a digest) and pushes the signature; returns the signature's reference.
pub fn sign(
    registry: &Registry,
    reference: &Reference,
    key: &SigningKey,
    annotations: &BTreeMap<String, String>,
) -> Result<String, Error> {
    let digest = digest_of(reference)?;
    let target = signature_reference(reference, digest);
    push_signature(
        registry,
        &target,
        payload(reference, digest, annotations),
        key,
    )?;
    Ok(target.to_string())
}

/// Signs `payload` with `key` and pushes it as the signature manifest at `target`.
pub fn push_signature(
    registry: &Registry,
    target: &Reference,
    payload: Vec<u8>,
    key: &SigningKey,
) -> Result<(), Error> {
    let signature: DerSignature = key.sign(&payload);
    let mut layer_annotations = BTreeMap::new();
    layer_annotations.insert(
        SIGNATURE_ANNOTATION.to_owned(),
        BASE64.encode(signature.as_bytes()),
    );
    let config = json!({
        "architecture": "", "created": "0001-01-01T00:00:00Z",
        "history": [{"created": "0001-01-01T00:00:00Z"}], "os": "",
        "rootfs": {"type": "layers", "diff_ids": [sha256_digest(&payload)]}, "config": {},
    });
    let layers = vec![ImageLayer::new(
        payload,
        SIMPLE_SIGNING_MEDIA_TYPE.to_owned(),
        Some(layer_annotations),
    )];
    let config = Config {
        data: config.to_string().into_bytes().into(),
        media_type: CONFIG_MEDIA_TYPE.to_owned(),
        annotations: None,
    };
    let mut manifest = OciImageManifest::build(&layers, &config, None);
    manifest.media_type = Some(OCI_IMAGE_MEDIA_TYPE.to_owned());
    registry.push_artifact(target, &layers, config, manifest)?;
    Ok(())
}

/// Checks that `reference` (a digest) carries a signature by `key` whose payload names exactly
/// that digest and repository and holds every annotation of `required`.
pub fn verify(
    registry: &Registry,
    reference: &Reference,
    key: &VerifyingKey,
    required: &BTreeMap<String, String>,
) -> Result<(), Error> {
    let digest = digest_of(reference)?;
    let target = signature_reference(reference, digest);
    let (raw, _) = registry
        .manifest_raw(&target)
        .map_err(|e| format!("{reference}: not signed (no {target}): {e}"))?;
    let manifest: Value = serde_json::from_slice(&raw)?;
    let layers = manifest["layers"].as_array().cloned().unwrap_or_default();
    let mut problems = Vec::new();
    for layer in layers
        .iter()
        .filter(|l| l["mediaType"] == SIMPLE_SIGNING_MEDIA_TYPE)
    {
        match check_layer(registry, &target, layer, reference, digest, key, required) {
            Ok(()) => return Ok(()),
            Err(problem) => problems.push(problem.to_string()),
        }
    }
    if problems.is_empty() {
        problems.push("no simplesigning layer".to_owned());
    }
    Err(format!("{reference}: no valid signature ({})", problems.join("; ")).into())
}

fn check_layer(
    registry: &Registry,
    target: &Reference,
    layer: &Value,
    reference: &Reference,
    digest: &str,
    key: &VerifyingKey,
    required: &BTreeMap<String, String>,
) -> Result<(), Error> {
    let blob_digest = layer["digest"].as_str().unwrap_or_default();
    let payload = registry.blob(target, blob_digest)?;
    if sha256_digest(&payload) != blob_digest {
        return Err("the payload does not match its digest".into());
    }
    let encoded = layer["annotations"][SIGNATURE_ANNOTATION]
        .as_str()
        .ok_or("no signature annotation")?;
    let der = BASE64
        .decode(encoded)
        .map_err(|e| format!("signature: {e}"))?;
    let signature =
        DerSignature::try_from(der.as_slice()).map_err(|e| format!("signature: {e}"))?;
    key.verify(&payload, &signature)
        .map_err(|_| "the signature does not verify with this key")?;
    let payload: Value = serde_json::from_slice(&payload)?;
    let critical = &payload["critical"];
    let named = critical["image"]["docker-manifest-digest"]
        .as_str()
        .unwrap_or_default();
    if named != digest {
        return Err(format!("the payload names {named}, not {digest}").into());
    }
    let identity = format!("{}/{}", reference.registry(), reference.repository());
    if critical["identity"]["docker-reference"] != identity.as_str() {
        return Err(format!(
            "the payload names {}, not {identity}",
            critical["identity"]["docker-reference"]
        )
        .into());
    }
    for (name, value) in required {
        if payload["optional"][name] != value.as_str() {
            return Err(format!("annotation {name}={value} missing").into());
        }
    }
    Ok(())
}
