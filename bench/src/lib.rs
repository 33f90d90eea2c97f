//! What `make bench` measures: the scenarios (validate payloads), the peer's matched requests, a
//! bare waPC host that reads the module's linear memory, and the table it prints; and the
//! generated cluster of the previews' benchmarks (`cluster`).

pub mod cluster;
pub mod memory;
pub mod scenarios;
pub mod table;

use serde_json::Value;

/// The number of JSON nodes in a value: every scalar, array and object counts one.
pub fn nodes(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(nodes).sum(),
        Value::Object(map) => map.values().map(nodes).sum(),
        _ => 0,
    }
}

/// The compact JSON size of a value in bytes.
pub fn bytes(value: &Value) -> usize {
    serde_json::to_vec(value).map_or(0, |v| v.len())
}
