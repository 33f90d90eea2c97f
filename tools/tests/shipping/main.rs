//! The shipping files against the metadata and the built module: annotation, metadata
//! validation, artifacthub-pkg.yml, questions-ui.yml and the examples.

mod annotate;
mod artifacthub;
mod examples;
mod questions;
mod sbom;

type Error = policy_tools::Error;
