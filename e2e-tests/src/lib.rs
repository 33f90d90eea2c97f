//! The data-driven e2e suite: the cases of `cases/*.yaml`, run on the compiled `policy.wasm`
//! through [`policy_host`] (waPC on wasmtime, as policy-server runs it).

pub mod cases;
