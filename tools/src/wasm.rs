//! Reading and writing the module's custom sections (wasmparser / wasm-encoder).

use memchr::memmem;
use wasmparser::{Encoding, Parser, Payload};

use crate::Error;

/// The contents of every custom section called `name`, in module order. Readers (kwctl,
/// policy-server) use the first one.
pub fn custom_sections<'a>(module: &'a [u8], name: &str) -> Result<Vec<&'a [u8]>, Error> {
    let mut found = Vec::new();
    for payload in Parser::new(0).parse_all(module) {
        match payload.map_err(|e| format!("not a wasm module: {e}"))? {
            Payload::Version { encoding, .. } if encoding != Encoding::Module => {
                return Err("a wasm component, not a core module".into());
            }
            Payload::CustomSection(section) if section.name() == name => {
                found.push(section.data());
            }
            _ => {}
        }
    }
    Ok(found)
}

/// The module with a custom section appended after all others (where kwctl puts it). Every
/// section of the original module is re-emitted unchanged.
pub fn append_custom_section(module: &[u8], name: &str, data: &[u8]) -> Result<Vec<u8>, Error> {
    let mut out = wasm_encoder::Module::new();
    let mut saw_header = false;
    for payload in Parser::new(0).parse_all(module) {
        let payload = payload.map_err(|e| format!("not a wasm module: {e}"))?;
        if let Payload::Version { encoding, .. } = &payload {
            if *encoding != Encoding::Module {
                return Err("a wasm component, not a core module".into());
            }
            saw_header = true;
            continue;
        }
        if let Some((id, range)) = payload.as_section() {
            out.section(&wasm_encoder::RawSection {
                id,
                data: &module[range],
            });
        }
    }
    if !saw_header {
        return Err("not a wasm module: empty".into());
    }
    out.section(&wasm_encoder::CustomSection {
        name: name.into(),
        data: data.into(),
    });
    Ok(out.finish())
}

/// Host capabilities whose `namespace` and `operation` strings both appear in the module's data
/// segments: the capabilities the module may call (the SDK passes these strings to the host).
pub fn referenced_host_capabilities(module: &[u8]) -> Result<Vec<&'static str>, Error> {
    let mut data = Vec::new();
    for payload in Parser::new(0).parse_all(module) {
        if let Payload::DataSection(reader) =
            payload.map_err(|e| format!("not a wasm module: {e}"))?
        {
            for segment in reader {
                let segment = segment.map_err(|e| format!("not a wasm module: {e}"))?;
                data.extend_from_slice(segment.data);
                // A separator no string contains: no match across two segments.
                data.push(0xff);
            }
        }
    }
    let all = crate::capabilities::HOST_CAPABILITIES;
    let mut found = Vec::new();
    for capability in all {
        let Some((namespace, operation)) = capability.split_once('/') else {
            continue;
        };
        if memmem::find(&data, namespace.as_bytes()).is_none() {
            continue;
        }
        // `list_resources_all` must not count as a use of a shorter name it starts with.
        let longer: Vec<&str> = all
            .iter()
            .filter_map(|c| c.split_once('/').map(|(_, op)| op))
            .filter(|op| op.len() > operation.len() && op.starts_with(operation))
            .collect();
        let standalone = memmem::find_iter(&data, operation.as_bytes())
            .any(|at| longer.iter().all(|l| !data[at..].starts_with(l.as_bytes())));
        if standalone {
            found.push(capability);
        }
    }
    Ok(found)
}
