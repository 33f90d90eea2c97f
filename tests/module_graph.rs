//! The modules of `src/` form one direction of flow: no module imports another that (directly or
//! through others) imports it back, and `json` imports nothing of the crate.

use std::collections::{BTreeMap, BTreeSet};

/// `module -> modules it names through `crate::``, read from the source text.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let module = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).expect("a source file");
        let mut uses = BTreeSet::new();
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '{')
                .collect();
            if name.starts_with('{') {
                // `use crate::{a, b::c};`
                let end = rest.find('}').unwrap_or(rest.len());
                for part in rest[1..end].split(',') {
                    let part = part.trim().split("::").next().unwrap_or("").to_owned();
                    if !part.is_empty() {
                        uses.insert(part);
                    }
                }
            } else if !name.is_empty() {
                uses.insert(name);
            }
        }
        uses.remove(&module);
        graph.insert(module, uses);
    }
    graph
}

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
        graph["policy"].contains("labels"),
        "the reader sees imports: {graph:?}"
    );
    let cycles: Vec<&String> = graph.keys().filter(|m| reaches(&graph, m, m)).collect();
    assert!(
        cycles.is_empty(),
        "import cycles through {cycles:?}: {graph:?}"
    );
}

#[test]
fn json_is_a_leaf() {
    let graph = imports();
    assert_eq!(graph["json"], BTreeSet::new());
}
