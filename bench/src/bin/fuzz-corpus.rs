//! `make fuzz-corpus`: seeds for the fuzz targets from the e2e cases (each case's `validate`
//! payload, built as the e2e suite builds it) and the fixtures; settings seeds from the cases'
//! settings. Usage: `fuzz-corpus DIR` (writes DIR/validate/ and DIR/settings/; file names are
//! content hashes, so reruns add nothing twice).

use std::collections::BTreeSet;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::Path;

use e2e_tests::cases::{cases_dir, load_all};
use policy_bench::scenarios::{admission_request, payload};
use policy_host::fixture;
use serde_json::{Value, json};

fn write(dir: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    let mut hasher = DefaultHasher::new();
    bytes.hash(&mut hasher);
    let path = dir.join(format!("{:016x}", hasher.finish()));
    if path.exists() {
        return Ok(false);
    }
    std::fs::write(path, bytes)?;
    Ok(true)
}

fn main() -> Result<(), policy_host::host::Error> {
    let out = std::env::args().nth(1).ok_or("usage: fuzz-corpus DIR")?;
    let (validate, settings) = (
        Path::new(&out).join("validate"),
        Path::new(&out).join("settings"),
    );
    std::fs::create_dir_all(&validate)?;
    std::fs::create_dir_all(&settings)?;
    let (mut payloads, mut all_settings) = (0, BTreeSet::new());
    for (name, case) in load_all(&cases_dir())? {
        all_settings.insert(serde_json::to_string(&case.settings)?);
        match case.request() {
            Ok(request) => {
                payloads += usize::from(write(&validate, &payload(&request, &case.settings))?)
            }
            Err(e) => eprintln!("{name}: {e}"),
        }
    }
    let fixtures = std::fs::read_dir(policy_host::workspace_dir().join("fixtures"))?;
    for entry in fixtures {
        let path = entry?.path();
        let Some(stem) = path
            .file_stem()
            .and_then(|s| s.to_str())
            .filter(|_| path.extension().is_some_and(|e| e == "yaml"))
        else {
            continue;
        };
        let object = fixture(stem)?;
        let kind = object["kind"]
            .as_str()
            .unwrap_or("VirtualMachine")
            .to_owned();
        for operation in ["CREATE", "UPDATE"] {
            let old = (operation == "UPDATE").then_some(&object);
            let request = admission_request(
                "kubevirt.io",
                &kind,
                "virtualmachines",
                operation,
                &object,
                old,
            );
            payloads += usize::from(write(&validate, &payload(&request, &json!({})))?);
        }
    }
    let mut settings_seeds = 0;
    for text in &all_settings {
        settings_seeds += usize::from(write(&settings, text.as_bytes())?);
        // The YAML-ish pretty form too: the host passes the JSON it was configured with.
        let value: Value = serde_json::from_str(text)?;
        settings_seeds += usize::from(write(
            &settings,
            serde_json::to_string_pretty(&value)?.as_bytes(),
        )?);
    }
    println!(
        "fuzz-corpus: {payloads} new validate seeds, {settings_seeds} new settings seeds in {out}"
    );
    Ok(())
}
