//! What one admission request costs on the compiled module: a fresh instance (as policy-server
//! makes per request) plus `validate`, for small fixtures and a request of several MiB.

use criterion::{Criterion, criterion_group, criterion_main};
use policy_host::fixture;
use policy_host::{PolicyHost, default_module_path};
use serde_json::{Value, json};

fn payload(object: &Value, settings: Value) -> Vec<u8> {
    let request = json!({
        "uid": "u", "operation": "UPDATE",
        "kind": {"group": "kubevirt.io", "version": "v1", "kind": "VirtualMachine"},
        "object": object, "oldObject": object,
    });
    serde_json::to_vec(&json!({"request": request, "settings": settings})).unwrap_or_default()
}

fn bench(c: &mut Criterion) {
    let host = PolicyHost::load(&default_module_path()).expect("make policy.wasm first");
    let mut big = fixture("legacy-01-unlabelled").expect("fixture");
    for i in 0..20_000 {
        big["metadata"]["annotations"][format!("example.com/note-{i}")] = json!("x".repeat(100));
    }
    let strict =
        json!({"evictionStrategy": {"nonMigratable": "reject", "clusterDefault": "LiveMigrate"}});
    let inputs = [
        (
            "web-01 accept",
            payload(&fixture("web-01-migratable").expect("fixture"), json!({})),
        ),
        (
            "legacy-01 mutate",
            payload(
                &fixture("legacy-01-unlabelled").expect("fixture"),
                json!({}),
            ),
        ),
        (
            "db-01 V7 reject",
            payload(&fixture("db-01-rwo-livemigrate").expect("fixture"), strict),
        ),
        ("legacy-01 + 2 MiB of annotations", payload(&big, json!({}))),
    ];
    c.bench_function("instantiate only", |b| {
        b.iter(|| host.instance().expect("instance"))
    });
    for (name, bytes) in &inputs {
        c.bench_function(&format!("instantiate + validate: {name}"), |b| {
            b.iter(|| {
                host.instance()
                    .and_then(|i| i.call("validate", bytes))
                    .expect("answer")
            })
        });
    }
    let instance = host.instance().expect("instance");
    for (name, bytes) in &inputs {
        c.bench_function(&format!("validate on a warm instance: {name}"), |b| {
            b.iter(|| instance.call("validate", bytes).expect("answer"))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
