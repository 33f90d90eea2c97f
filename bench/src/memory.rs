//! Peak linear memory of one call. `wapc`/`wasmtime-provider` keep the store to themselves, so
//! this is a bare waPC host on the same wasmtime: it instantiates the module, runs `wapc_init`
//! and one guest call, then reads the exported memory's size. Wasm memory never shrinks, so the
//! size after the call is the peak of the call.
//!
//! It offers what the module imports: the waPC guest protocol (`__guest_request`,
//! `__guest_response`, `__guest_error`, and `__host_call` answering only the SDK's log line) and
//! a minimal WASI preview 1 (`random_get`, an empty environment, `fd_write` that discards);
//! any other import traps if called.

use wasmtime::{Caller, Engine, Extern, Linker, Memory, Module, Store, bail, format_err};

#[derive(Default)]
struct State {
    operation: Vec<u8>,
    message: Vec<u8>,
    response: Option<Vec<u8>>,
    error: Option<String>,
    host_response: Vec<u8>,
    host_error: Vec<u8>,
}

/// Memory sizes in bytes (64 KiB pages).
#[derive(Debug, Clone, Copy)]
pub struct Measurement {
    /// After instantiation and `wapc_init`, before the call.
    pub before: usize,
    /// After the call: the peak.
    pub after: usize,
    /// The answer's length.
    pub answer_len: usize,
}

pub struct MemoryProbe {
    engine: Engine,
    module: Module,
    linker: Linker<State>,
}

fn memory(caller: &mut Caller<'_, State>) -> wasmtime::Result<Memory> {
    caller
        .get_export("memory")
        .and_then(Extern::into_memory)
        .ok_or_else(|| format_err!("the module exports no memory"))
}

fn read(caller: &mut Caller<'_, State>, ptr: i32, len: i32) -> wasmtime::Result<Vec<u8>> {
    let memory = memory(caller)?;
    let mut buffer = vec![0; usize::try_from(len)?];
    memory.read(&caller, usize::try_from(ptr)?, &mut buffer)?;
    Ok(buffer)
}

fn write(caller: &mut Caller<'_, State>, ptr: i32, bytes: &[u8]) -> wasmtime::Result<()> {
    let memory = memory(caller)?;
    memory.write(caller, usize::try_from(ptr)?, bytes)?;
    Ok(())
}

fn len(bytes: &[u8]) -> i32 {
    i32::try_from(bytes.len()).unwrap_or(i32::MAX)
}

impl MemoryProbe {
    pub fn new(wasm: &[u8]) -> wasmtime::Result<MemoryProbe> {
        let engine = Engine::default();
        let module = Module::new(&engine, wasm)?;
        let mut linker: Linker<State> = Linker::new(&engine);
        link_wapc(&mut linker)?;
        link_wapc_host(&mut linker)?;
        link_wasi(&mut linker)?;
        linker.define_unknown_imports_as_traps(&module)?;
        Ok(MemoryProbe {
            engine,
            module,
            linker,
        })
    }
}

/// waPC's guest calls: the request in, the response or the error out.
fn link_wapc(linker: &mut Linker<State>) -> wasmtime::Result<()> {
    linker.func_wrap(
        "wapc",
        "__guest_request",
        |mut caller: Caller<'_, State>, op_ptr: i32, ptr: i32| {
            let (operation, message) = (
                caller.data().operation.clone(),
                caller.data().message.clone(),
            );
            write(&mut caller, op_ptr, &operation)?;
            write(&mut caller, ptr, &message)
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__guest_response",
        |mut caller: Caller<'_, State>, ptr: i32, len: i32| {
            let bytes = read(&mut caller, ptr, len)?;
            caller.data_mut().response = Some(bytes);
            Ok(())
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__guest_error",
        |mut caller: Caller<'_, State>, ptr: i32, len: i32| {
            let bytes = read(&mut caller, ptr, len)?;
            caller.data_mut().error = Some(String::from_utf8_lossy(&bytes).into_owned());
            Ok(())
        },
    )?;
    Ok(())
}

/// waPC's host calls: every one refused but `kubewarden/tracing/log`; console logs dropped.
fn link_wapc_host(linker: &mut Linker<State>) -> wasmtime::Result<()> {
    linker.func_wrap(
        "wapc",
        "__host_call",
        |mut caller: Caller<'_, State>,
         bd_ptr: i32,
         bd_len: i32,
         ns_ptr: i32,
         ns_len: i32,
         op_ptr: i32,
         op_len: i32,
         _ptr: i32,
         _len: i32|
         -> wasmtime::Result<i32> {
            let binding = read(&mut caller, bd_ptr, bd_len)?;
            let namespace = read(&mut caller, ns_ptr, ns_len)?;
            let operation = read(&mut caller, op_ptr, op_len)?;
            let state = caller.data_mut();
            state.host_response.clear();
            state.host_error.clear();
            if (
                binding.as_slice(),
                namespace.as_slice(),
                operation.as_slice(),
            ) == (b"kubewarden", b"tracing", b"log")
            {
                return Ok(1);
            }
            state.host_error = b"host capability not offered by the memory probe".to_vec();
            Ok(0)
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__host_response_len",
        |caller: Caller<'_, State>| len(&caller.data().host_response),
    )?;
    linker.func_wrap(
        "wapc",
        "__host_response",
        |mut caller: Caller<'_, State>, ptr: i32| {
            let bytes = caller.data().host_response.clone();
            write(&mut caller, ptr, &bytes)
        },
    )?;
    linker.func_wrap("wapc", "__host_error_len", |caller: Caller<'_, State>| {
        len(&caller.data().host_error)
    })?;
    linker.func_wrap(
        "wapc",
        "__host_error",
        |mut caller: Caller<'_, State>, ptr: i32| {
            let bytes = caller.data().host_error.clone();
            write(&mut caller, ptr, &bytes)
        },
    )?;
    linker.func_wrap(
        "wapc",
        "__console_log",
        |_: Caller<'_, State>, _: i32, _: i32| {},
    )?;
    Ok(())
}

/// WASI as the module needs it: deterministic random bytes, an empty environment, writes
/// counted and dropped, `proc_exit` a trap.
fn link_wasi(linker: &mut Linker<State>) -> wasmtime::Result<()> {
    let wasi = "wasi_snapshot_preview1";
    linker.func_wrap(
        wasi,
        "random_get",
        |mut caller: Caller<'_, State>, ptr: i32, len: i32| -> wasmtime::Result<i32> {
            let bytes: Vec<u8> = (0..len)
                .map(|i| (i as u8).wrapping_mul(151).wrapping_add(7))
                .collect();
            write(&mut caller, ptr, &bytes)?;
            Ok(0)
        },
    )?;
    linker.func_wrap(
        wasi,
        "environ_sizes_get",
        |mut caller: Caller<'_, State>, count: i32, size: i32| -> wasmtime::Result<i32> {
            write(&mut caller, count, &0u32.to_le_bytes())?;
            write(&mut caller, size, &0u32.to_le_bytes())?;
            Ok(0)
        },
    )?;
    linker.func_wrap(
        wasi,
        "environ_get",
        |_: Caller<'_, State>, _: i32, _: i32| 0i32,
    )?;
    linker.func_wrap(
        wasi,
        "fd_write",
        |mut caller: Caller<'_, State>,
         _fd: i32,
         iovs: i32,
         iovs_len: i32,
         written: i32|
         -> wasmtime::Result<i32> {
            let vectors = read(&mut caller, iovs, iovs_len.saturating_mul(8))?;
            let total: u32 = vectors
                .chunks_exact(8)
                .map(|v| u32::from_le_bytes([v[4], v[5], v[6], v[7]]))
                .sum();
            write(&mut caller, written, &total.to_le_bytes())?;
            Ok(0)
        },
    )?;
    linker.func_wrap(
        wasi,
        "proc_exit",
        |_: Caller<'_, State>, code: i32| -> wasmtime::Result<()> { bail!("proc_exit({code})") },
    )?;
    Ok(())
}

impl MemoryProbe {
    /// A fresh instance, `wapc_init`, one call of `function`: the memory before and after.
    pub fn measure(&self, function: &str, payload: &[u8]) -> wasmtime::Result<Measurement> {
        let mut store = Store::new(&self.engine, State::default());
        let instance = self.linker.instantiate(&mut store, &self.module)?;
        for init in ["_start", "_initialize", "wapc_init"] {
            if let Ok(f) = instance.get_typed_func::<(), ()>(&mut store, init) {
                f.call(&mut store, ())?;
            }
        }
        let memory = instance
            .get_memory(&mut store, "memory")
            .ok_or_else(|| format_err!("the module exports no memory"))?;
        let before = memory.data_size(&store);
        {
            let state = store.data_mut();
            state.operation = function.as_bytes().to_vec();
            state.message = payload.to_vec();
        }
        let call = instance.get_typed_func::<(i32, i32), i32>(&mut store, "__guest_call")?;
        let ok = call.call(&mut store, (len(function.as_bytes()), len(payload)))?;
        let after = memory.data_size(&store);
        let state = store.data();
        match (&state.response, ok) {
            (Some(answer), 1) => Ok(Measurement {
                before,
                after,
                answer_len: answer.len(),
            }),
            _ => bail!("the guest call failed: {:?}", state.error),
        }
    }
}
