//! OCI push and pull of the policy, like `kwctl push` / `kwctl pull`:
//!
//! oci push [--insecure HOST:PORT]... [-o json] annotated-policy.wasm registry://HOST/REPO:TAG
//! oci pull [--insecure HOST:PORT]... -o FILE registry://HOST/REPO:TAG|@sha256:...
//! oci keygen cosign.key cosign.pub                  (password: $COSIGN_PASSWORD)
//! oci sign --key cosign.key [-a KEY=VALUE]... registry://HOST/REPO@sha256:...
//! oci verify --key cosign.pub [-a KEY=VALUE]... registry://HOST/REPO@sha256:...

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use policy_tools::{Error, oci, signing};

#[derive(Parser)]
#[command(about = "Pushes and pulls Kubewarden policies (kwctl's artifact format)")]
struct Args {
    /// A registry (`host` or `host:port`) reached over plain HTTP; repeatable.
    #[arg(long, global = true)]
    insecure: Vec<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Output {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Pushes an annotated module and prints the immutable reference (repo@sha256:...).
    Push {
        #[arg(short, long, value_enum, default_value = "text")]
        output: Output,
        wasm_path: PathBuf,
        reference: String,
    },
    /// Pulls a policy and writes its module.
    Pull {
        #[arg(short, long)]
        output_path: PathBuf,
        reference: String,
    },
    /// Writes a new key pair: cosign's encrypted private key ($COSIGN_PASSWORD) and the public key.
    Keygen { private: PathBuf, public: PathBuf },
    /// Signs a pushed policy (by digest) in cosign's format and pushes the signature.
    Sign {
        #[arg(short, long)]
        key: PathBuf,
        /// An annotation of the signature's payload; repeatable.
        #[arg(short, long = "annotation", value_name = "KEY=VALUE")]
        annotations: Vec<String>,
        reference: String,
    },
    /// Checks a policy's signature (by digest): key, payload digest and identity, annotations.
    Verify {
        #[arg(short, long)]
        key: PathBuf,
        /// An annotation the payload must hold; repeatable.
        #[arg(short, long = "annotation", value_name = "KEY=VALUE")]
        annotations: Vec<String>,
        reference: String,
    },
}

fn annotations(given: &[String]) -> Result<BTreeMap<String, String>, Error> {
    given
        .iter()
        .map(|a| match a.split_once('=') {
            Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
            _ => Err(format!("annotation {a:?}: expected KEY=VALUE").into()),
        })
        .collect()
}

fn read(path: &Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()).into())
}

fn password() -> Vec<u8> {
    std::env::var("COSIGN_PASSWORD")
        .unwrap_or_default()
        .into_bytes()
}

fn run(args: Args) -> Result<(), Error> {
    let registry = oci::Registry::new(&args.insecure);
    match args.command {
        Command::Push {
            output,
            wasm_path,
            reference,
        } => {
            let module =
                std::fs::read(&wasm_path).map_err(|e| format!("{}: {e}", wasm_path.display()))?;
            let pushed = registry.push(&module, &oci::parse_reference(&reference)?)?;
            match output {
                Output::Text => println!("{}", pushed.immutable_ref),
                Output::Json => println!(
                    "{}",
                    serde_json::json!({"immutable_ref": pushed.immutable_ref})
                ),
            }
        }
        Command::Pull {
            output_path,
            reference,
        } => {
            let pulled = registry.pull(&oci::parse_reference(&reference)?)?;
            std::fs::write(&output_path, &pulled.module)
                .map_err(|e| format!("{}: {e}", output_path.display()))?;
            eprintln!(
                "{}: {} bytes from {reference} ({})",
                output_path.display(),
                pulled.module.len(),
                pulled.manifest_digest
            );
        }
        Command::Keygen { private, public } => {
            let (private_pem, public_pem) = signing::generate(&password())?;
            std::fs::write(&private, private_pem)
                .map_err(|e| format!("{}: {e}", private.display()))?;
            std::fs::write(&public, public_pem)
                .map_err(|e| format!("{}: {e}", public.display()))?;
            eprintln!("{}, {}: written", private.display(), public.display());
        }
        Command::Sign {
            key,
            annotations: given,
            reference,
        } => {
            let signing_key = signing::signing_key(&read(&key)?, &password())
                .map_err(|e| format!("{}: {e}", key.display()))?;
            let signature = signing::sign(
                &registry,
                &oci::parse_reference(&reference)?,
                &signing_key,
                &annotations(&given)?,
            )?;
            println!("{signature}");
        }
        Command::Verify {
            key,
            annotations: given,
            reference,
        } => {
            let verifying_key = signing::verifying_key(&read(&key)?)
                .map_err(|e| format!("{}: {e}", key.display()))?;
            signing::verify(
                &registry,
                &oci::parse_reference(&reference)?,
                &verifying_key,
                &annotations(&given)?,
            )?;
            println!("{reference}: signed by {}", key.display());
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("oci: {e}");
            ExitCode::FAILURE
        }
    }
}
