//! Reading cluster dumps: `kubectl get vm,kubevirt,pvc -A -o json` (a `List` of mixed kinds), a
//! single object, several JSON documents in a row, or YAML (one or more documents). Errors name
//! the file and, for a syntax error, the line and column.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::extra::Extra;

/// The objects of all files that the preview reads; every other kind is ignored.
#[derive(Debug, Default)]
pub struct Dump {
    /// VirtualMachines in reading order, one per namespace/name (the last one read wins).
    pub vms: Vec<Value>,
    /// `kubevirt.io` KubeVirt CRs.
    pub kubevirts: Vec<Value>,
    /// `v1` PersistentVolumeClaims.
    pub pvcs: Vec<Value>,
    /// `instancetype.kubevirt.io` instancetypes and preferences (cluster-wide and namespaced).
    pub instancetypes: Vec<Value>,
    /// What was odd but not fatal (a duplicate VM, a List item that is not an object or has no
    /// `kind` / `apiVersion`).
    pub notes: Vec<String>,
    /// How many objects had no `kind` or no `apiVersion` (ignored, each a note).
    pub untyped: usize,
}

/// Documents read from one place: a file, standard input (`-`), or a kind listed from the
/// cluster; `name` is how notes and errors name it.
#[derive(Debug, Clone)]
pub struct Source {
    pub name: String,
    pub documents: Vec<Value>,
}

/// Every file's documents (`-`: standard input); the first unreadable or unparseable file is
/// the error.
pub fn read_sources(paths: &[impl AsRef<Path>]) -> Result<Vec<Source>, String> {
    paths
        .iter()
        .map(|path| {
            let path = path.as_ref();
            Ok(Source {
                name: path.display().to_string(),
                documents: read_documents(path)?,
            })
        })
        .collect()
}

impl Dump {
    /// Reads every file; the first unreadable or unparseable one is the error.
    pub fn read(paths: &[impl AsRef<Path>]) -> Result<Dump, String> {
        Ok(split(read_sources(paths)?).0)
    }
}

/// The objects of every source, in order, moved into the kinds a preview reads: the
/// [`Dump`]'s and the [`Extra`]'s. Every other object is dropped as it is met, so what stays in
/// memory is one tree of each object kept, never a second copy.
pub fn split(sources: Vec<Source>) -> (Dump, Extra) {
    let mut dump = Dump::default();
    let mut extra = Extra::default();
    let mut seen: BTreeMap<(String, String), (usize, String)> = BTreeMap::new();
    for source in sources {
        let shown = source.name;
        for (i, object) in objects(source.documents).enumerate() {
            if !object.is_object() {
                dump.notes
                    .push(format!("{shown}: item {i} is not an object, ignored"));
                continue;
            }
            if !typed(&object) {
                dump.untyped += 1;
                dump.notes.push(format!(
                    "{shown}: item {i} ({}) has no kind or apiVersion, ignored",
                    described(&object)
                ));
                continue;
            }
            match classify(&object) {
                Some(Kind::VirtualMachine) => dump.keep_vm(object, &shown, &mut seen),
                Some(Kind::KubeVirt) => dump.kubevirts.push(object),
                Some(Kind::PersistentVolumeClaim) => dump.pvcs.push(object),
                Some(Kind::Instancetype) => dump.instancetypes.push(object),
                None => extra.keep(object),
            }
        }
    }
    if dump.kubevirts.len() > 1 {
        dump.notes.push(format!(
            "{} KubeVirt CRs read; KubeVirt honours one: the first is used",
            dump.kubevirts.len()
        ));
    }
    (dump, extra)
}

impl Dump {
    /// One VM per namespace/name: a VM read again replaces the first, with a note.
    fn keep_vm(
        &mut self,
        vm: Value,
        shown: &str,
        seen: &mut BTreeMap<(String, String), (usize, String)>,
    ) {
        let key = (
            text(vm.pointer("/metadata/namespace")),
            text(vm.pointer("/metadata/name")),
        );
        match seen.get(&key) {
            Some((at, first)) if !key.1.is_empty() => {
                self.notes.push(format!(
                    "{}/{}: read again from {shown} (first in {first}); the last one is used",
                    key.0, key.1
                ));
                self.vms[*at] = vm;
            }
            _ => {
                seen.insert(key, (self.vms.len(), shown.to_owned()));
                self.vms.push(vm);
            }
        }
    }
}

/// Whether an object names its `kind` and `apiVersion` (strings), as every object kubectl prints
/// does.
fn typed(object: &Value) -> bool {
    object.get("kind").is_some_and(Value::is_string)
        && object.get("apiVersion").is_some_and(Value::is_string)
}

/// `namespace/name`, `name` or `unnamed`, for a note.
fn described(object: &Value) -> String {
    let name = object.pointer("/metadata/name").and_then(Value::as_str);
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str);
    match (namespace, name) {
        (Some(namespace), Some(name)) => format!("{namespace}/{name}"),
        (None, Some(name)) => name.to_owned(),
        _ => "unnamed".to_owned(),
    }
}

enum Kind {
    VirtualMachine,
    KubeVirt,
    PersistentVolumeClaim,
    Instancetype,
}

fn classify(object: &Value) -> Option<Kind> {
    let api_version = object.get("apiVersion")?.as_str()?;
    let kubevirt = api_version.starts_with("kubevirt.io/");
    match object.get("kind")?.as_str()? {
        "VirtualMachine" if kubevirt => Some(Kind::VirtualMachine),
        "KubeVirt" if kubevirt => Some(Kind::KubeVirt),
        "PersistentVolumeClaim" if api_version == "v1" => Some(Kind::PersistentVolumeClaim),
        "VirtualMachineInstancetype"
        | "VirtualMachineClusterInstancetype"
        | "VirtualMachinePreference"
        | "VirtualMachineClusterPreference"
            if api_version.starts_with("instancetype.kubevirt.io/") =>
        {
            Some(Kind::Instancetype)
        }
        _ => None,
    }
}

/// A string field, or `""`.
fn text(value: Option<&Value>) -> String {
    value.and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// The objects of the documents, moved out of them: a `List`'s (or bare array's) items, or
/// the document itself. An item that is not an object is passed on, to be noted.
fn objects(documents: Vec<Value>) -> impl Iterator<Item = Value> {
    documents.into_iter().flat_map(|document| match document {
        Value::Array(items) => items,
        Value::Object(mut map) => match map.remove("items") {
            Some(Value::Array(items)) => items,
            Some(other) => {
                map.insert("items".to_owned(), other);
                vec![Value::Object(map)]
            }
            None => vec![Value::Object(map)],
        },
        other => vec![other],
    })
}

/// The documents of one file, JSON when it starts with `{` or `[`, YAML otherwise. Empty YAML
/// documents are skipped; a file without any document, or one that is not an object, list or
/// array, is an error.
pub fn read_documents(path: &Path) -> Result<Vec<Value>, String> {
    documents(&read_text(path)?, path)
}

/// The text of a file (`-`: standard input).
pub fn read_text(path: &Path) -> Result<String, String> {
    let shown = path.display();
    if path == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("{shown}: {e}"))?;
        Ok(text)
    } else {
        std::fs::read_to_string(path).map_err(|e| format!("{shown}: {e}"))
    }
}

/// The documents of the text of `path`, as [`read_documents`].
pub fn documents(text: &str, path: &Path) -> Result<Vec<Value>, String> {
    let shown = path.display();
    let documents = parse(text).map_err(|e| format!("{shown}:{e}"))?;
    if documents.is_empty() {
        return Err(format!("{shown}: no object in the file (it is empty)"));
    }
    for (i, document) in documents.iter().enumerate() {
        if !document.is_object() && !document.is_array() {
            return Err(format!(
                "{shown}: document {}: expected a Kubernetes object or List, got {}",
                i + 1,
                type_name(document)
            ));
        }
    }
    Ok(documents)
}

/// The documents, or `LINE:COLUMN: message` (1-based; ` message` when the parser gives no
/// position), to be shown after `FILE:`.
fn parse(text: &str) -> Result<Vec<Value>, String> {
    let json = text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with(['{', '[']);
    if json {
        serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                let message = strip_position(&e.to_string(), e.line(), e.column());
                format!("{}:{}: {message}", e.line(), e.column())
            })
    } else {
        let mut documents = Vec::new();
        for document in serde_yaml::Deserializer::from_str(text) {
            match Value::deserialize(document) {
                Ok(Value::Null) => {}
                Ok(value) => documents.push(value),
                Err(e) => {
                    return Err(match e.location() {
                        Some(at) => {
                            let message = strip_position(&e.to_string(), at.line(), at.column());
                            format!("{}:{}: {message}", at.line(), at.column())
                        }
                        None => format!(" {e}"),
                    });
                }
            }
        }
        Ok(documents)
    }
}

/// serde_json and serde_yaml write ` at line L column C` into their messages; the position is
/// shown in front instead (a second position, such as YAML's "while parsing ... at line", stays).
fn strip_position(message: &str, line: usize, column: usize) -> String {
    message.replacen(&format!(" at line {line} column {column}"), "", 1)
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_errors_carry_the_position() {
        let cases = [
            ("{\"items\": [\n  {\"a\": 1,}\n]}", "2:11: trailing comma"),
            ("{\"items\": [", "1:11: EOF while parsing a list"),
            (
                "items:\n  - a: 1\n   b: 2\n",
                "3:4: did not find expected '-' indicator, while parsing a block collection at line 2 column 3",
            ),
            (
                "a: b: c\n",
                "1:5: mapping values are not allowed in this context",
            ),
        ];
        for (text, want) in cases {
            let got = parse(text).err().unwrap_or_default();
            assert_eq!(got, want, "{text:?}");
        }
    }

    #[test]
    fn documents_and_lists() {
        let cases: [(&str, usize); 6] = [
            (
                "{\"kind\": \"List\", \"items\": [{\"a\": 1}, 2, {\"b\": 3}]}",
                3,
            ),
            ("{\"a\": 1} {\"b\": 2}", 2),
            ("[{\"a\": 1}]", 1),
            ("a: 1\n---\n---\nb: 2\n", 2),
            ("kind: List\nitems: []\n", 0),
            ("{\"kind\": \"VirtualMachine\"}", 1),
        ];
        for (text, want) in cases {
            let documents = parse(text).unwrap_or_default();
            assert_eq!(objects(documents).count(), want, "{text}");
        }
    }
}
