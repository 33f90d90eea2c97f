//! The shape of the workspace's source: no non-test source file over 600 lines, no function over
//! 80 lines. Test code is exempt: `tests/` and `benches/` folders, files named `tests.rs`, and a
//! file's trailing `#[cfg(test)]` module. The text is rustfmt's, so a function ends at the first
//! line that is its own indentation followed by `}`.
//!
//! `KNOWN` lists what still exceeds a limit and is being split. The test fails on anything new
//! over a limit and on a `KNOWN` entry that no longer exceeds it, so the list only shrinks.

use std::path::{Path, PathBuf};

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 80;

/// `(file, function)`; an empty function names the file itself.
const KNOWN: &[(&str, &str)] = &[];

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | "tests" | "benches") && !name.starts_with('.') {
                sources(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(path);
        }
    }
}

/// The name of the function a line opens, if it opens one with a body.
fn opened_fn(line: &str) -> Option<&str> {
    let start = line.find("fn ")?;
    let before = line[..start].trim();
    let qualifiers = before.split_whitespace().all(|w| {
        w.starts_with("pub") || matches!(w, "const" | "async" | "unsafe" | "extern" | "\"C\"")
    });
    if !qualifiers || line.trim_end().ends_with(';') {
        return None;
    }
    let rest = &line[start + 3..];
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some(&rest[..end])
}

/// Everything over a limit: `(file, function, lines)`.
fn offenders(root: &Path) -> Vec<(String, String, usize)> {
    let mut files = Vec::new();
    sources(root, &mut files);
    let mut found = Vec::new();
    for path in files {
        let relative = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let end = lines
            .iter()
            .position(|l| *l == "#[cfg(test)]")
            .unwrap_or(lines.len());
        let lines = &lines[..end];
        if lines.len() > MAX_FILE_LINES {
            found.push((relative.clone(), String::new(), lines.len()));
        }
        for (i, line) in lines.iter().enumerate() {
            let Some(name) = opened_fn(line) else {
                continue;
            };
            let indent = &line[..line.len() - line.trim_start().len()];
            let close = format!("{indent}}}");
            let length = lines[i..]
                .iter()
                .position(|l| *l == close || l.trim_end().ends_with('}') && *l == *line)
                .map_or(lines.len() - i, |n| n + 1);
            if length > MAX_FN_LINES {
                found.push((relative.clone(), name.to_owned(), length));
            }
        }
    }
    found.sort();
    found
}

#[test]
fn files_and_functions_stay_small() {
    let found = offenders(Path::new(env!("CARGO_MANIFEST_DIR")));
    let new: Vec<_> = found
        .iter()
        .filter(|(f, n, _)| !KNOWN.contains(&(f.as_str(), n.as_str())))
        .collect();
    assert!(
        new.is_empty(),
        "over {MAX_FILE_LINES} lines per file or {MAX_FN_LINES} per function: {new:?}"
    );
    let fixed: Vec<_> = KNOWN
        .iter()
        .filter(|(f, n)| !found.iter().any(|(g, m, _)| g == f && m == n))
        .collect();
    assert!(
        fixed.is_empty(),
        "no longer over a limit, drop from KNOWN: {fixed:?}"
    );
}

#[test]
fn the_measure_sees_a_long_function() {
    let dir = std::env::temp_dir().join(format!("source-shape-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let body = "    let x = 1;\n".repeat(MAX_FN_LINES);
    let text = format!(
        "pub(crate) fn long() {{\n{body}}}\n\nfn short() {{}}\n\n#[cfg(test)]\nfn long_test() {{\n{body}}}\n"
    );
    std::fs::write(dir.join("src/a.rs"), text).unwrap();
    let found = offenders(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        found,
        vec![("src/a.rs".to_owned(), "long".to_owned(), MAX_FN_LINES + 2)]
    );
}
