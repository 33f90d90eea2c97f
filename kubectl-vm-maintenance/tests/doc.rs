//! docs/kubectl-vm-maintenance.md shows the plugin's real output: every ```text block right after
//! a ```sh block is the output (stdout, then stderr) of that block's last command, run here with
//! this build of the plugin, and the command exits as its `# exits N` comment says (default 0).
//! A line `...` in a sample stands for lines left out. The doc's relative links name files that
//! exist. (tests/doc-commands runs every command of the docs for its exit code; this test checks
//! the samples.)

mod harness;

use harness::{BIN, workspace};

use std::process::Command;

const DOC: &str = "docs/kubectl-vm-maintenance.md";

/// A fenced block: its language, the line after its opening fence (1-based), its lines.
struct Block {
    language: String,
    line: usize,
    lines: Vec<String>,
    /// Only blank lines between the previous block's closing fence and this one's opening.
    follows_previous: bool,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    let mut blank_since_close = false;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match open.take() {
            Some(mut block) if trimmed.trim_end() == "```" => {
                block.lines.shrink_to_fit();
                blocks.push(block);
                blank_since_close = true;
            }
            Some(mut block) => {
                block.lines.push(line.to_owned());
                open = Some(block);
            }
            None if trimmed.starts_with("```") => {
                open = Some(Block {
                    language: trimmed[3..].trim().to_owned(),
                    line: i + 2,
                    lines: Vec::new(),
                    follows_previous: blank_since_close,
                });
            }
            None => {
                if !trimmed.is_empty() {
                    blank_since_close = false;
                }
            }
        }
    }
    assert!(open.is_none(), "{DOC}: a ``` block is never closed");
    blocks
}

/// The command without its trailing comment, and the exit code that comment expects.
fn command_and_code(line: &str) -> (String, i32, Option<String>) {
    let (command, comment) = match line.find(" #") {
        Some(at) => (&line[..at], line[at + 2..].trim()),
        None => (line, ""),
    };
    let needs = comment.strip_prefix("needs:").map(|w| w.trim().to_owned());
    let code = comment
        .strip_prefix("exits")
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    (command.trim().to_owned(), code, needs)
}

/// Whether `output` shows `sample`: equal, or, when the sample has `...` lines, each run of
/// lines between them found in order (the first at the start unless `...` precedes it, the last
/// at the end unless `...` follows it).
fn shows(output: &str, sample: &[String]) -> bool {
    if !sample.iter().any(|l| l == "...") {
        return output.lines().eq(sample.iter().map(String::as_str));
    }
    let lines: Vec<&str> = output.lines().collect();
    let mut at = 0;
    let mut first = true;
    for chunk in sample.split(|l| l == "...") {
        if chunk.is_empty() {
            first = false;
            continue;
        }
        let found = (at..=lines.len().saturating_sub(chunk.len())).find(|&start| {
            (!first || start == 0)
                && lines[start..start + chunk.len()]
                    .iter()
                    .zip(chunk)
                    .all(|(a, b)| *a == b)
        });
        match found {
            Some(start) => at = start + chunk.len(),
            None => return false,
        }
        first = false;
    }
    sample.last().is_some_and(|l| l == "...") || at == lines.len()
}

#[test]
fn the_samples_are_the_real_output() {
    let root = workspace();
    let text = std::fs::read_to_string(root.join(DOC)).unwrap_or_else(|e| panic!("{DOC}: {e}"));
    let blocks = blocks(&text);
    let home = std::env::temp_dir().join(format!("vm-maintenance-doc-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
    let mut checked = 0;
    for pair in blocks.windows(2) {
        let (commands, sample) = (&pair[0], &pair[1]);
        if sample.language != "text" || commands.language != "sh" || !sample.follows_previous {
            continue;
        }
        let last = commands
            .lines
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .unwrap_or_else(|| panic!("{DOC}:{}: a sample after no command", sample.line));
        let (command, code, needs) = command_and_code(last);
        assert!(
            needs.is_none(),
            "{DOC}:{}: a sample of a command the tests cannot run",
            sample.line
        );
        let args = command
            .strip_prefix("kubectl vm-maintenance ")
            .unwrap_or_else(|| panic!("{DOC}:{}: {command}: not the plugin", commands.line));
        assert!(
            !args.contains(['"', '\'', '|', '>', '$']),
            "{DOC}: {command}: plain arguments only"
        );
        let output = Command::new(BIN)
            .args(args.split_whitespace())
            .current_dir(&root)
            .env_remove("KUBECONFIG")
            .env("HOME", &home)
            .output()
            .unwrap_or_else(|e| panic!("{BIN}: {e}"));
        let shown = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(
            output.status.code(),
            Some(code),
            "{DOC}:{}: {command}\n{shown}",
            commands.line
        );
        assert!(
            shows(&shown, &sample.lines),
            "{DOC}:{}: the sample of `{command}` is not its output:\n{shown}",
            sample.line
        );
        checked += 1;
    }
    // drain, maintenance, upgrade, and an error.
    assert!(checked >= 4, "{checked} samples checked");
    let _ = std::fs::remove_dir_all(&home);
}

#[test]
fn the_links_name_files_that_exist() {
    let root = workspace();
    let text = std::fs::read_to_string(root.join(DOC)).unwrap_or_else(|e| panic!("{DOC}: {e}"));
    let mut links = 0;
    for (i, _) in text.match_indices("](") {
        let target = &text[i + 2..];
        let target = &target[..target.find(')').unwrap_or(0)];
        if target.contains("://") || target.starts_with('#') {
            continue;
        }
        let path = root
            .join("docs")
            .join(target.split('#').next().unwrap_or(target));
        assert!(path.exists(), "{DOC}: link {target}: no such file");
        links += 1;
    }
    assert!(links > 0);
}

#[test]
fn samples_with_left_out_lines() {
    let sample = |lines: &[&str]| lines.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
    let output = "a\nb\nc\nd\ne\n";
    assert!(shows(output, &sample(&["a", "b", "c", "d", "e"])));
    assert!(!shows(output, &sample(&["a", "b"])));
    assert!(shows(output, &sample(&["a", "b", "...", "d", "..."])));
    assert!(shows(output, &sample(&["...", "c", "d", "e"])));
    assert!(!shows(output, &sample(&["b", "..."])));
    assert!(!shows(output, &sample(&["a", "...", "c", "b", "..."])));
    assert!(!shows(output, &sample(&["a", "...", "c"])));
}
