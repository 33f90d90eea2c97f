//! What every command's output shares: the table as `kubectl get` prints it, the explanations
//! wrapped below it, `-o json` / `-o yaml` (`columns.rs`); how what lags behind a running VM is
//! shown (`stale.rs`); and the answer written to stdout.

pub mod columns;
pub mod stale;

use std::io::Write;

pub use columns::{Columns, Layout, Output};

/// The answer on stdout. A closed pipe (`| head`) is not an error of the input.
pub fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}
