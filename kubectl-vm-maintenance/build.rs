//! Embeds the policy module (`policy.wasm` at the workspace root, or `$POLICY_WASM`) into the
//! kubectl plugin, so that it judges from any folder. Without one (a build before `make
//! policy.wasm`), the plugin embeds nothing and asks for `--policy`.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let module = std::env::var_os("POLICY_WASM")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("..").join("policy.wasm"));
    println!("cargo::rerun-if-changed={}", module.display());
    println!("cargo::rerun-if-env-changed=POLICY_WASM");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join("policy.wasm");
    let bytes = std::fs::read(&module).unwrap_or_default();
    if bytes.is_empty() {
        println!(
            "cargo::warning=no policy module at {}: the plugin embeds none (run `make policy.wasm` first)",
            module.display()
        );
    }
    if let Err(e) = std::fs::write(&out, bytes) {
        panic!("{}: {e}", out.display());
    }
}
