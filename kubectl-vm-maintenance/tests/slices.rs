//! A preview reads the input 500 VMs at a time (`store::Store::slice`); what it says of a VM must
//! not depend on which slice the VM fell into. The maintenance sample's namespaced objects are
//! copied into 49 more namespaces (600 VMs: two slices), and every VM of a copy must get exactly
//! the answer its original gets alone.

mod harness;

use harness::{BIN, workspace};

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

const COPIES: usize = 49;

/// The command's JSON answer on `dump` (exit 0, 2 and 3 are outcomes).
fn answer(args: &[&str], dump: &Path) -> Value {
    let output = Command::new(BIN)
        .args(args)
        .arg("-f")
        .arg(dump)
        .args(["-o", "json"])
        .current_dir(workspace())
        .output()
        .unwrap_or_else(|e| panic!("{BIN}: {e}"));
    assert!(
        matches!(output.status.code(), Some(0 | 2 | 3)),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// The sample with every namespaced object but the KubeVirt CR and Longhorn's (one cluster
/// has one of each) copied into `NAMESPACE-copyN`, N = 1..=COPIES.
fn copied(sample: &Value) -> Value {
    let items = sample["items"].as_array().cloned().unwrap_or_default();
    let mut all = items.clone();
    for n in 1..=COPIES {
        for item in &items {
            let namespace = item["metadata"]["namespace"].as_str().unwrap_or_default();
            if namespace.is_empty() || item["kind"] == "KubeVirt" || namespace == "longhorn-system"
            {
                continue;
            }
            let mut copy = item.clone();
            copy["metadata"]["namespace"] = json!(format!("{namespace}-copy{n}"));
            all.push(copy);
        }
    }
    json!({"apiVersion": "v1", "kind": "List", "items": all})
}

/// Each of the answer's rows as text, with every `-copyN` taken out of it, sorted.
fn rows(answer: &Value) -> Vec<String> {
    let mut rows: Vec<String> = answer
        .as_array()
        .into_iter()
        .flatten()
        .map(|row| {
            let text = row.to_string();
            let mut plain = String::new();
            let mut rest = text.as_str();
            while let Some(at) = rest.find("-copy") {
                plain.push_str(&rest[..at]);
                rest = rest[at + 5..].trim_start_matches(|c: char| c.is_ascii_digit());
            }
            plain.push_str(rest);
            plain
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn every_vm_gets_the_same_answer_whatever_its_slice() {
    let path = workspace().join("examples/cluster-maintenance-dump.json");
    let sample: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let dir = std::env::temp_dir().join(format!("vm-maintenance-slices-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    let big = dir.join("copied.json");
    std::fs::write(&big, copied(&sample).to_string()).unwrap_or_else(|e| panic!("{e}"));
    // The answers' lists of VMs, VMIs, objects written.
    let lists: [(&[&str], &str); 3] = [
        (&["drain"], ""),
        (&["upgrade"], "/vmis"),
        (&["sync"], "/writes"),
    ];
    for (args, list) in lists {
        let alone = answer(args, &path);
        let alone = rows(alone.pointer(list).unwrap_or(&Value::Null));
        let all = answer(args, &big);
        let all = rows(all.pointer(list).unwrap_or(&Value::Null));
        assert!(!alone.is_empty(), "{args:?}");
        let mut want: Vec<String> = alone
            .iter()
            .flat_map(|row| std::iter::repeat_n(row.clone(), COPIES + 1))
            .collect();
        want.sort();
        assert_eq!(all.len(), want.len(), "{args:?}");
        assert!(all == want, "{args:?}: a VM's answer depends on its slice");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
