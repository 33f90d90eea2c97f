//! OCI push and pull of the policy, like `kwctl push` / `kwctl pull`:
//!
//! oci push [--insecure HOST:PORT]... [-o json] annotated-policy.wasm registry://HOST/REPO:TAG
//! oci pull [--insecure HOST:PORT]... -o FILE registry://HOST/REPO:TAG|@sha256:...

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use policy_tools::{Error, oci};

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
