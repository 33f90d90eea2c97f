//! Reading criterion's medians back and writing the table (stdout and `BENCHMARKS.md`).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// criterion's median point estimate for `group/function`, in nanoseconds.
pub fn median_ns(criterion_dir: &Path, group: &str, function: &str) -> Option<f64> {
    let path = criterion_dir
        .join(group)
        .join(function)
        .join("new")
        .join("estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let estimates: Value = serde_json::from_str(&text).ok()?;
    estimates["median"]["point_estimate"].as_f64()
}

/// The best (smallest) of the rounds' medians, and the spread (max - min) / min.
pub fn best_and_spread(values: &[f64]) -> Option<(f64, f64)> {
    let min = values.iter().copied().reduce(f64::min)?;
    let max = values.iter().copied().reduce(f64::max)?;
    Some((min, if min > 0.0 { (max - min) / min } else { 0.0 }))
}

/// `12.3 µs`, `4.56 ms`.
pub fn time(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// `1,234,567`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Replaces the section that starts with `heading` (up to the next `## ` heading) in `file`, or
/// appends it; other sections are kept as they are.
pub fn replace_section(file: &Path, heading: &str, body: &str) -> std::io::Result<()> {
    let old = std::fs::read_to_string(file).unwrap_or_default();
    let section = format!("{heading}\n{}\n", body.trim_end());
    let mut out = String::new();
    let mut lines = old.lines().peekable();
    let mut done = false;
    while let Some(line) = lines.next() {
        if line == heading {
            out.push_str(&section);
            while lines.peek().is_some_and(|l| !l.starts_with("## ")) {
                lines.next();
            }
            if lines.peek().is_some() {
                out.push('\n');
            }
            done = true;
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    if !done {
        if out.is_empty() {
            out.push_str("# Benchmarks\n\n");
        } else if !out.ends_with("\n\n") {
            out.push('\n');
        }
        out.push_str(&section);
    }
    std::fs::write(file, out)
}

/// The machine: cores, CPU model, rustc.
pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let rustc = std::process::Command::new("rustc")
        .arg("-V")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    format!("{cores} cores ({cpu}), {rustc}")
}

/// `$POLICY_BENCH_OUT` or `BENCHMARKS.md` at the workspace root.
pub fn benchmarks_file() -> PathBuf {
    std::env::var_os("POLICY_BENCH_OUT")
        .map(Into::into)
        .unwrap_or_else(|| policy_host::workspace_dir().join("BENCHMARKS.md"))
}
