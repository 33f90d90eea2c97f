//! The plugin run on a large input, with its peak memory as GNU time reads it.
//!
//! Not the child's own `wait4` or `getrusage(RUSAGE_CHILDREN)`: Linux keeps the largest resident
//! set a process had before `exec`, and a child forked from this test, which has just built the
//! input, starts with the test's. GNU time forks the plugin from its own small process.

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const TIME: &str = "/usr/bin/time";

/// What a run gave: its exit code, its wall time and its peak resident set in MiB (`None`
/// without GNU time).
pub struct Run {
    pub code: Option<i32>,
    pub elapsed: Duration,
    pub peak_mib: Option<f64>,
}

impl Run {
    /// `peak RSS N MiB`, or why it was not measured.
    pub fn peak(&self) -> String {
        match self.peak_mib {
            Some(mib) => format!("peak RSS {mib:.0} MiB"),
            None => format!("peak RSS not measured ({TIME} is not installed)"),
        }
    }
}

/// Runs `bin args`, its standard output to `stdout`, its standard error dropped.
pub fn run(bin: &str, args: &[&str], stdout: File, scratch: &Path) -> Run {
    let report = scratch.join("time.txt");
    let measured = Path::new(TIME).exists();
    let mut command = if measured {
        let mut command = Command::new(TIME);
        command.args(["-f", "%M", "-o"]).arg(&report).arg(bin);
        command
    } else {
        Command::new(bin)
    };
    let start = Instant::now();
    let status = command
        .args(args)
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{bin}: {e}"));
    let elapsed = start.elapsed();
    let peak_mib = measured.then(|| {
        let text = std::fs::read_to_string(&report).unwrap_or_default();
        let kib: f64 = text
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or_else(|| panic!("{TIME} wrote {text:?}"));
        kib / 1024.0
    });
    Run {
        code: status.code(),
        elapsed,
        peak_mib,
    }
}
