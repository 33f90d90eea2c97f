//! The modules of `src/`, every folder, form one direction of flow: no module imports another that (directly or
//! through others) imports it back, and `object::splice` and `object::view` import nothing of the
//! crate. The same holds in
//! every crate of the workspace.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The source files under `src/`, every folder, as `(module path, text before the test module)`:
/// `src/maintenance/index.rs` is `maintenance::index`, a `mod.rs` names its folder.
fn modules(dir: &Path, prefix: &str, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("a readable source folder") {
        let path = entry.expect("a directory entry").path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let name = if prefix.is_empty() {
            stem.clone()
        } else {
            format!("{prefix}::{stem}")
        };
        if path.is_dir() {
            modules(&path, &name, out);
        } else if path.extension().is_some_and(|e| e == "rs") && stem != "tests" {
            let name = if stem == "mod" {
                prefix.to_owned()
            } else {
                name
            };
            let text = std::fs::read_to_string(&path).expect("a source file");
            let code = text
                .split("\n#[cfg(test)]\n")
                .next()
                .unwrap_or("")
                .to_owned();
            out.push((name, code));
        }
    }
}

/// The paths a source text names after `crate::` (and `super::`, made absolute), with one level
/// of `{...}` groups expanded: `use crate::a::{B, c::D};` names `a::B` and `a::c::D`.
fn named_paths(module: &str, code: &str) -> Vec<String> {
    let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
    let mut paths = Vec::new();
    for (root, base) in [
        ("crate::", String::new()),
        ("super::", format!("{parent}::")),
    ] {
        for (i, _) in code.match_indices(root) {
            if root == "crate::" && code[..i].ends_with("$") {
                continue;
            }
            let rest = &code[i + root.len()..];
            let head: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let head = format!("{base}{}", head.trim_end_matches(':'));
            let after = &rest[rest.len().min(head.len() - base.len())..];
            let after = after.trim_start_matches(':');
            if let Some(group) = after.strip_prefix('{') {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                for part in group.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let sep = if head.is_empty() { "" } else { "::" };
                    paths.push(format!("{head}{sep}{part}"));
                }
            } else {
                paths.push(head);
            }
        }
    }
    paths
}

/// `module -> modules it names through `crate::` or `super::``, read from the source text: a
/// path names the longest module it starts with.
fn imports_of(krate: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(krate)
        .join("src");
    modules(&src, "", &mut files);
    let names: BTreeSet<String> = files.iter().map(|(name, _)| name.clone()).collect();
    let mut graph = BTreeMap::new();
    for (module, code) in &files {
        let mut uses = BTreeSet::new();
        for path in named_paths(module, code) {
            let segments: Vec<&str> = path.split("::").collect();
            let found = (1..=segments.len())
                .rev()
                .map(|n| segments[..n].join("::"))
                .find(|candidate| names.contains(candidate));
            if let Some(found) = found {
                uses.insert(found);
            }
        }
        uses.remove(module);
        graph.insert(module.clone(), uses);
    }
    graph
}

/// The policy crate's graph.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    imports_of(".")
}

/// The workspace's crates (Cargo.toml `members`); Cargo itself refuses a circle between crates.
const CRATES: [&str; 7] = [
    ".",
    "cluster-model",
    "policy-host",
    "e2e-tests",
    "tools",
    "bench",
    "kubectl-vm-maintenance",
];

fn reaches(graph: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_owned()];
    while let Some(module) = stack.pop() {
        for next in graph.get(&module).into_iter().flatten() {
            if next == to {
                return true;
            }
            if seen.insert(next.clone()) {
                stack.push(next.clone());
            }
        }
    }
    false
}

#[test]
fn no_module_reaches_back_to_itself() {
    let graph = imports();
    assert!(graph.len() >= 10, "read src/: {graph:?}");
    assert!(
        graph["policy"].contains("rules::labels"),
        "the reader sees imports: {graph:?}"
    );
    let cycles: Vec<&String> = graph.keys().filter(|m| reaches(&graph, m, m)).collect();
    assert!(
        cycles.is_empty(),
        "import cycles through {cycles:?}: {graph:?}"
    );
}

#[test]
fn splice_and_the_view_are_leaves() {
    let graph = imports();
    assert_eq!(graph["object::splice"], BTreeSet::new());
    let view: Vec<_> = graph
        .iter()
        .filter(|(module, _)| module.starts_with("object::view"))
        .flat_map(|(_, uses)| uses.iter().filter(|u| !u.starts_with("object::view")))
        .collect();
    assert!(graph.contains_key("object::view::later"), "{graph:?}");
    assert_eq!(view, Vec::<&String>::new());
}

#[test]
fn no_crate_of_the_workspace_has_an_import_circle() {
    let members = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .expect("the workspace manifest");
    for krate in CRATES {
        let graph = imports_of(krate);
        assert!(graph.len() > 1, "read {krate}/src: {graph:?}");
        if krate == "cluster-model" {
            assert!(
                graph["maintenance::actions"].contains("maintenance::index"),
                "the reader sees the folders of src/ and their imports: {graph:?}"
            );
        }
        assert!(
            krate == "." || members.contains(&format!("\"{krate}\"")),
            "{krate} is a member"
        );
        let cycles: Vec<&String> = graph.keys().filter(|m| reaches(&graph, m, m)).collect();
        assert!(
            cycles.is_empty(),
            "{krate}: import cycles through {cycles:?}: {graph:?}"
        );
    }
}
