//! Reading cluster dumps: `kubectl get vm,kubevirt,pvc -A -o json` (a `List` of mixed kinds), a
//! single object, several JSON documents in a row, or YAML (one or more documents). Errors name
//! the file and, for a syntax error, the line and column.

use std::io::Read;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// The objects read from one place, each as its own JSON text: a file, standard input (`-`),
/// or a kind listed from the cluster; `name` is how notes and errors name it.
#[derive(Debug)]
pub struct Source {
    pub name: String,
    pub items: Vec<Box<RawValue>>,
}

/// Every file's objects (`-`: standard input); the first unreadable or unparseable file is the
/// error.
pub fn read_sources(paths: &[impl AsRef<Path>]) -> Result<Vec<Source>, String> {
    paths
        .iter()
        .map(|path| {
            let path = path.as_ref();
            Ok(Source {
                name: path.display().to_string(),
                items: items(&read_text(path)?, path)?,
            })
        })
        .collect()
}

/// The objects of the text of `path`, each as its own JSON text: a `List`'s (or a bare array's)
/// items, or the document itself (JSON when the text starts with `{` or `[`, YAML otherwise).
/// A file without any document, or with one that is not an object, list or array, is an error.
pub fn items(text: &str, path: &Path) -> Result<Vec<Box<RawValue>>, String> {
    let shown = path.display();
    if !is_json(text) {
        let documents = documents(text, path)?;
        return documents
            .into_iter()
            .flat_map(split_value)
            .map(|item| serde_json::value::to_raw_value(&item).map_err(|e| format!("{shown}: {e}")))
            .collect();
    }
    let documents = serde_json::Deserializer::from_str(text)
        .into_iter::<&RawValue>()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|skimmed| {
            // Skimming words some errors vaguely ("key must be a string" for a trailing comma):
            // the error is the one a full parse meets.
            let parsed = serde_json::Deserializer::from_str(text)
                .into_iter::<Value>()
                .find_map(Result::err);
            format!(
                "{shown}:{}",
                positioned(parsed.as_ref().unwrap_or(&skimmed))
            )
        })?;
    if documents.is_empty() {
        return Err(format!("{shown}: no object in the file (it is empty)"));
    }
    let mut items = Vec::new();
    for (i, document) in documents.into_iter().enumerate() {
        items.extend(split_raw(document).map_err(|e| format!("{shown}: document {}: {e}", i + 1))?);
    }
    Ok(items)
}

/// A JSON document's objects: a `List`'s items (an object whose `items` is an array), an
/// array's, or the object itself.
fn split_raw(document: &RawValue) -> Result<Vec<Box<RawValue>>, String> {
    #[derive(Deserialize)]
    struct Listed<'a> {
        #[serde(borrow, default)]
        items: Option<&'a RawValue>,
    }
    let text = document.get();
    let parsed = match text.as_bytes().first() {
        Some(b'[') => serde_json::from_str(text),
        Some(b'{') => match serde_json::from_str::<Listed>(text)
            .map_err(|e| e.to_string())?
            .items
        {
            Some(items) if items.get().starts_with('[') => serde_json::from_str(items.get()),
            _ => Ok(vec![document.to_owned()]),
        },
        _ => {
            let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
            return Err(format!(
                "expected a Kubernetes object or List, got {}",
                type_name(&value)
            ));
        }
    };
    parsed.map_err(|e| e.to_string())
}

/// A YAML document's objects, as [`split_raw`].
fn split_value(document: Value) -> Vec<Value> {
    match document {
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
    }
}

fn is_json(text: &str) -> bool {
    text.trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with(['{', '['])
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

/// The documents of the text of `path`, JSON when it starts with `{` or `[`, YAML otherwise.
/// Empty YAML documents are skipped; a file without any document, or one that is not an object,
/// list or array, is an error.
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
    if is_json(text) {
        serde_json::Deserializer::from_str(text)
            .into_iter::<Value>()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| positioned(&e))
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

/// A JSON syntax error as `LINE:COLUMN: message`.
fn positioned(e: &serde_json::Error) -> String {
    let message = strip_position(&e.to_string(), e.line(), e.column());
    format!("{}:{}: {message}", e.line(), e.column())
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
            let got = items(text, Path::new("t")).map(|items| items.len());
            assert_eq!(got, Ok(want), "{text}");
        }
    }
}
