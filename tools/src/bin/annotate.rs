//! `kwctl annotate` without kwctl:
//!
//! annotate -m policy-metadata.yml -u README.md [--cargo-toml Cargo.toml] -o annotated-policy.wasm policy.wasm

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use policy_tools::{Error, annotate, metadata};

#[derive(Parser)]
#[command(about = "Embeds the policy metadata in a waPC module, like `kwctl annotate`")]
struct Args {
    /// The metadata file.
    #[arg(short, long, default_value = "policy-metadata.yml")]
    metadata_path: PathBuf,
    /// A file whose text becomes `io.kubewarden.policy.usage` (the README).
    #[arg(short, long)]
    usage_path: Option<PathBuf>,
    /// The crate manifest whose version `io.kubewarden.policy.version` must equal.
    #[arg(long, default_value = "Cargo.toml")]
    cargo_toml: PathBuf,
    /// Where to write the annotated module.
    #[arg(short, long)]
    output_path: PathBuf,
    /// The unannotated module.
    wasm_path: PathBuf,
}

fn run(args: &Args) -> Result<(), Error> {
    let read = |p: &PathBuf| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
    let module = read(&args.wasm_path)?;
    let file = metadata::MetadataFile::load(&args.metadata_path)?;
    let usage = args
        .usage_path
        .as_ref()
        .map(|p| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display())))
        .transpose()?;
    let version = metadata::cargo_version(&args.cargo_toml)?;
    let annotated = annotate::annotate(&module, &file, usage.as_deref(), Some(&version))
        .map_err(|e| format!("{}: {e}", args.wasm_path.display()))?;
    for warning in &annotated.warnings {
        eprintln!("warning: {warning}");
    }
    std::fs::write(&args.output_path, &annotated.module)
        .map_err(|e| format!("{}: {e}", args.output_path.display()))?;
    eprintln!(
        "{}: {} bytes, protocol {}",
        args.output_path.display(),
        annotated.module.len(),
        annotated.metadata.protocol_version
    );
    Ok(())
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("annotate: {e}");
            ExitCode::FAILURE
        }
    }
}
