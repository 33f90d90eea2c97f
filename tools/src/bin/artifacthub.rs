//! `kwctl scaffold artifacthub` without kwctl:
//!
//! artifacthub -m policy-metadata.yml -q questions-ui.yml [--cargo-toml Cargo.toml]
//!             [--keep-created-at artifacthub-pkg.yml] [-o artifacthub-pkg.yml]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use policy_tools::{Error, artifacthub, metadata};

#[derive(Parser)]
#[command(about = "Writes artifacthub-pkg.yml from the metadata and questions-ui.yml")]
struct Args {
    #[arg(short, long, default_value = "policy-metadata.yml")]
    metadata_path: PathBuf,
    #[arg(short, long)]
    questions_path: Option<PathBuf>,
    /// The crate manifest whose version the metadata must carry.
    #[arg(long, default_value = "Cargo.toml")]
    cargo_toml: PathBuf,
    /// Reuse `createdAt` of this file when it describes the same version (no churn on rebuilds).
    #[arg(long)]
    keep_created_at: Option<PathBuf>,
    /// Where to write (default: stdout).
    #[arg(short, long)]
    output_path: Option<PathBuf>,
}

fn run(args: &Args) -> Result<(), Error> {
    let file = metadata::MetadataFile::load(&args.metadata_path)?;
    file.validate(Some(&metadata::cargo_version(&args.cargo_toml)?))?;
    let questions = args
        .questions_path
        .as_ref()
        .map(|p| std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display())))
        .transpose()?;
    let mut created_at = artifacthub::now();
    let version = file.annotation(metadata::VERSION).unwrap_or_default();
    if let Some(previous) = &args.keep_created_at
        && let Ok(text) = std::fs::read_to_string(previous)
        && let Ok(old) = artifacthub::parse(&text)
        && old.version.to_string() == version
    {
        created_at = old.created_at;
    }
    let package = artifacthub::package(&file, questions.as_deref(), &created_at)?;
    let text = artifacthub::render(&package)?;
    match &args.output_path {
        Some(path) => std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?,
        None => print!("{text}"),
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("artifacthub: {e}");
            ExitCode::FAILURE
        }
    }
}
