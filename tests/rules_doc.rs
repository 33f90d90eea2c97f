//! docs/rules.md, "Where each rule is implemented": every file it names exists, and every function
//! it names is defined in one of its row's files, so the table cannot drift from the code.

use std::path::Path;

/// The backticked words of a table cell.
fn quoted(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

#[test]
fn the_rule_table_names_files_and_functions_that_exist() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/rules.md")).expect("docs/rules.md");
    let section = doc
        .split("## Where each rule is implemented")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("the section");
    let rows: Vec<&str> = section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| rules"))
        .collect();
    assert!(rows.len() >= 20, "{rows:?}");
    let mut functions = 0;
    for row in rows {
        let cells: Vec<&str> = row.split(" | ").collect();
        assert_eq!(cells.len(), 3, "{row}");
        let files = quoted(cells[1]);
        let folder = files.iter().all(|f| f.ends_with('/'));
        let texts: Vec<String> = files
            .iter()
            .filter(|f| !f.ends_with('/'))
            .map(|f| std::fs::read_to_string(root.join(f)).unwrap_or_else(|e| panic!("{f}: {e}")))
            .collect();
        assert!(folder || !texts.is_empty(), "{row}");
        for name in quoted(cells[2]) {
            let name = name.rsplit("::").next().unwrap_or(name);
            if folder || name.starts_with(|c: char| c.is_uppercase()) {
                continue;
            }
            functions += 1;
            assert!(
                texts
                    .iter()
                    .any(|t| t.contains(&format!("fn {name}("))
                        || t.contains(&format!("fn {name}<"))),
                "{name} is not defined in {files:?}"
            );
        }
    }
    assert!(functions >= 25, "{functions} functions checked");
}
