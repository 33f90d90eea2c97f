//! The data-driven e2e suite: the cases of `cases/*.yaml`, run on the compiled `policy.wasm`
//! through [`policy_host`] (waPC on wasmtime, as policy-server runs it), natively on the policy
//! crate (`tests/native.rs`), and through kwctl (`kwctl/run`).

pub mod cases;
pub mod reuse;
