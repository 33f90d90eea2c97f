//! `make bench`: per scenario, criterion medians of
//! (a) the native rule evaluation (`policy::validate` through the rlib),
//! (b) `validate` on a warm wasm instance (what `kwctl bench` times),
//! (c) a fresh instance plus one `validate` (what policy-server does per request),
//! (d) (b) plus the host's work on the answer (parse it, diff `mutated_object` into a patch),
//! in interleaved rounds (scenario order and variant order change every round); the table shows
//! the best round and the spread between rounds. Then module size, compile time, peak linear
//! memory, and — when `POLICY_BENCH_PEER` names psa-label-enforcer's module — the peer on
//! Namespace requests matched to ours in bytes and JSON nodes.
//!
//! Environment: `POLICY_WASM` (default `policy.wasm`), `POLICY_BENCH_ROUNDS` (3),
//! `POLICY_BENCH_PEER` (unset: no peer rows), `POLICY_BENCH_OUT` (default `BENCHMARKS.md`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cluster_model::objects::ObjectCluster;
use criterion::{BenchmarkGroup, Criterion, SamplingMode, measurement::WallTime};
use policy_bench::memory::MemoryProbe;
use policy_bench::scenarios::{self, Scenario, payload, peer_namespace, peer_settings};
use policy_bench::table::{
    benchmarks_file, best_and_spread, machine, median_ns, replace_section, thousands, time,
};
use policy_bench::{bytes, nodes};
use policy_host::admission::ValidationResponse;
use policy_host::{Cluster, Instance, PolicyHost, default_module_path, workspace_dir};
use serde_json::Value;

const VARIANTS: [&str; 4] = ["a-native", "b-warm", "c-fresh", "d-warm-host"];
const PEER_VARIANTS: [&str; 4] = ["ours-warm", "peer-warm", "ours-fresh", "peer-fresh"];

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The host's work on an answer, as policy-server does it: parse, and diff the mutated object.
fn host_side(answer: &[u8], object: &Value) -> usize {
    let response: ValidationResponse =
        serde_json::from_slice(answer).expect("a ValidationResponse");
    response
        .mutated_object
        .map_or(0, |mutated| json_patch::diff(object, &mutated).0.len())
}

/// What one variant runs on: the payload, the request's object, and the cluster, if any.
struct Input<'a> {
    bytes: &'a [u8],
    object: &'a Value,
    cluster: Option<(&'a [Value], Arc<Cluster>)>,
}

fn instance(host: &PolicyHost, input: &Input<'_>) -> Instance {
    match &input.cluster {
        Some((_, cluster)) => host.instance_with_cluster(cluster.clone()),
        None => host.instance(),
    }
    .expect("instance")
}

fn bench_variant(
    group: &mut BenchmarkGroup<'_, WallTime>,
    variant: &str,
    host: &PolicyHost,
    input: &Input<'_>,
) {
    let bytes = input.bytes;
    match variant {
        "a-native" => match &input.cluster {
            Some((objects, _)) => group.bench_function(variant, |b| {
                let cluster = ObjectCluster::new(objects.iter());
                b.iter(|| vm_maintenance_strategy::policy::validate_with(bytes, &cluster))
            }),
            None => group.bench_function(variant, |b| {
                b.iter(|| vm_maintenance_strategy::policy::validate(bytes))
            }),
        },
        "b-warm" | "ours-warm" | "peer-warm" => {
            let instance = instance(host, input);
            group.bench_function(variant, |b| {
                b.iter(|| instance.call("validate", bytes).expect("answer"))
            })
        }
        "c-fresh" | "ours-fresh" | "peer-fresh" => group.bench_function(variant, |b| {
            b.iter(|| {
                instance(host, input)
                    .call("validate", bytes)
                    .expect("answer")
            })
        }),
        "d-warm-host" => {
            let instance = instance(host, input);
            group.bench_function(variant, |b| {
                b.iter(|| {
                    host_side(
                        &instance.call("validate", bytes).expect("answer"),
                        input.object,
                    )
                })
            })
        }
        other => panic!("unknown variant {other}"),
    };
}

fn rotated<'a>(items: &[&'a str], by: usize) -> Vec<&'a str> {
    let mut v = items.to_vec();
    let n = v.len();
    v.rotate_left(by % n);
    v
}

/// The medians of `group`/`function` over the rounds.
fn rounds_of(dir: &Path, rounds: usize, id: &str, function: &str) -> Vec<f64> {
    (0..rounds)
        .filter_map(|r| median_ns(dir, &format!("r{r}-{id}"), function))
        .collect()
}

fn cell(values: &[f64]) -> String {
    match best_and_spread(values) {
        Some((best, spread)) => format!("{} (±{:.0}%)", time(best), spread * 100.0),
        None => "n/a".to_owned(),
    }
}

fn best(values: &[f64]) -> Option<f64> {
    best_and_spread(values).map(|(b, _)| b)
}

fn ratio(x: Option<f64>, y: Option<f64>) -> String {
    match (x, y) {
        (Some(x), Some(y)) if y > 0.0 => format!("{:.1}×", x / y),
        _ => "n/a".to_owned(),
    }
}

/// One matched pair: ours and the peer's payload and object.
struct Pair {
    id: &'static str,
    what: String,
    ours: (Vec<u8>, Value),
    theirs: (Vec<u8>, Value),
}

struct Peer {
    host: PolicyHost,
    size: usize,
    pairs: Vec<Pair>,
}

fn peer(path: &Path, scenarios: &[Scenario]) -> Peer {
    let wasm = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let host = PolicyHost::from_bytes(&wasm).expect("the peer module compiles");
    let mut pairs = Vec::new();
    for (id, ours, labelled) in [
        ("peer-mutate", "vm-create-mutate", false),
        ("peer-nochange", "vm-consistent", true),
    ] {
        let scenario = scenarios.iter().find(|s| s.id == ours).expect("scenario");
        let theirs = peer_namespace(bytes(&scenario.request), nodes(&scenario.request), labelled);
        let what = format!(
            "ours: {} ({} B, {} nodes); peer: Namespace ({} B, {} nodes){}",
            scenario.what,
            thousands(bytes(&scenario.request)),
            nodes(&scenario.request),
            thousands(bytes(&theirs)),
            nodes(&theirs),
            if labelled {
                ", already labelled"
            } else {
                ", label added"
            },
        );
        pairs.push(Pair {
            id,
            what,
            ours: (scenario.payload(), scenario.request["object"].clone()),
            theirs: (payload(&theirs, &peer_settings()), theirs["object"].clone()),
        });
    }
    Peer {
        host,
        size: wasm.len(),
        pairs,
    }
}

fn main() {
    let module = default_module_path();
    let wasm = std::fs::read(&module)
        .unwrap_or_else(|e| panic!("{}: {e} (make policy.wasm)", module.display()));
    let mut compile = Vec::new();
    for _ in 0..3 {
        let start = Instant::now();
        let _ = PolicyHost::from_bytes(&wasm).expect("the module compiles");
        compile.push(start.elapsed().as_secs_f64() * 1e9);
    }
    let host = PolicyHost::from_bytes(&wasm).expect("the module compiles");
    let scenarios = scenarios::all();
    let rounds = env_usize("POLICY_BENCH_ROUNDS", 3).max(1);
    let peer = std::env::var_os("POLICY_BENCH_PEER")
        .filter(|p| !p.is_empty())
        .map(|p| peer(Path::new(&p), &scenarios));
    let dir: PathBuf = workspace_dir().join("target").join("criterion-table");
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1200))
        .sample_size(20)
        .output_directory(&dir)
        .without_plots()
        .configure_from_args();
    let payloads: Vec<(Vec<u8>, Value, Option<Arc<Cluster>>)> = scenarios
        .iter()
        .map(|s| {
            (
                s.payload(),
                s.request["object"].clone(),
                s.cluster.clone().map(|o| Arc::new(Cluster::new(o))),
            )
        })
        .collect();
    for round in 0..rounds {
        let mut order: Vec<usize> = (0..scenarios.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for i in order {
            let mut group = c.benchmark_group(format!("r{round}-{}", scenarios[i].id));
            group.sampling_mode(SamplingMode::Flat);
            let (bytes, object, cluster) = &payloads[i];
            let input = Input {
                bytes,
                object,
                cluster: scenarios[i].cluster.as_deref().zip(cluster.clone()),
            };
            for variant in rotated(&VARIANTS, round) {
                bench_variant(&mut group, variant, &host, &input);
            }
            group.finish();
        }
        if let Some(peer) = &peer {
            for pair in &peer.pairs {
                let mut group = c.benchmark_group(format!("r{round}-{}", pair.id));
                group.sampling_mode(SamplingMode::Flat);
                for variant in rotated(&PEER_VARIANTS, round) {
                    let (h, (p, o)) = if variant.starts_with("peer") {
                        (&peer.host, &pair.theirs)
                    } else {
                        (&host, &pair.ours)
                    };
                    bench_variant(
                        &mut group,
                        variant,
                        h,
                        &Input {
                            bytes: p,
                            object: o,
                            cluster: None,
                        },
                    );
                }
                group.finish();
            }
        }
        let mut group = c.benchmark_group(format!("r{round}-instantiate"));
        group.bench_function("fresh-instance", |b| {
            b.iter(|| host.instance().expect("instance"))
        });
        group.finish();
    }
    c.final_summary();
    report(&dir, rounds, &scenarios, &wasm, &compile, peer.as_ref());
}

/// Time per KB of request of the 1 MiB VMs with many labels, annotations and volumes against the
/// 5 KB VMs, native and warm: linear in the object means a ratio near 1.
fn per_kb(dir: &Path, rounds: usize, scenarios: &[Scenario]) -> String {
    let kb = |id: &str| {
        scenarios
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.payload().len() as f64 / 1024.0)
    };
    let mut out = String::from("\n| per KB of request | native | warm instance |\n|---|---|---|\n");
    for (big, small) in [
        ("vm-1mib-many-mutate", "vm-create-mutate"),
        ("vm-1mib-many-consistent", "vm-consistent"),
    ] {
        let mut cells = Vec::new();
        for variant in ["a-native", "b-warm"] {
            let per = |id: &str| Some(best(&rounds_of(dir, rounds, id, variant))? / kb(id)?);
            cells.push(match (per(big), per(small)) {
                (Some(b), Some(s)) => format!("{} / {} = {:.2}×", time(b), time(s), b / s),
                _ => "n/a".to_owned(),
            });
        }
        out.push_str(&format!(
            "| `{big}` / `{small}` | {} | {} |\n",
            cells[0], cells[1]
        ));
    }
    out
}

fn report(
    dir: &Path,
    rounds: usize,
    scenarios: &[Scenario],
    wasm: &[u8],
    compile: &[f64],
    peer: Option<&Peer>,
) {
    let mut out = String::new();
    out.push_str(&format!(
        "Machine: {}. `make bench`, {rounds} interleaved rounds; each cell is criterion's median in the best round (±: spread of the rounds' medians).\n\n",
        machine()
    ));
    out.push_str("| scenario | request | (a) native | (b) warm instance | (c) fresh instance | (d) warm + host diff | (b)/(a) | (c)/(a) |\n");
    out.push_str("|---|---|---|---|---|---|---|---|\n");
    let mut best_b = std::collections::BTreeMap::new();
    for s in scenarios {
        let [a, b, c, d] = VARIANTS.map(|v| rounds_of(dir, rounds, s.id, v));
        best_b.insert(s.id, best(&b));
        out.push_str(&format!(
            "| `{}`: {} | {} B | {} | {} | {} | {} | {} | {} |\n",
            s.id,
            s.what,
            thousands(s.payload().len()),
            cell(&a),
            cell(&b),
            cell(&c),
            cell(&d),
            ratio(best(&b), best(&a)),
            ratio(best(&c), best(&a)),
        ));
    }
    out.push_str(&per_kb(dir, rounds, scenarios));
    let instantiate = rounds_of(dir, rounds, "instantiate", "fresh-instance");
    out.push_str(&format!(
        "\nA fresh instance alone: {}.\n",
        cell(&instantiate)
    ));
    if let (Some(Some(big)), Some(Some(small))) =
        (best_b.get("vm-1mib"), best_b.get("vm-create-mutate"))
    {
        out.push_str(&format!(
            "1 MiB / 5 KB scenario, warm: {:.0}× (the request is {:.0}× larger).\n",
            big / small,
            scenarios
                .iter()
                .find(|s| s.id == "vm-1mib")
                .map_or(0, |s| s.payload().len()) as f64
                / scenarios
                    .iter()
                    .find(|s| s.id == "vm-create-mutate")
                    .map_or(1, |s| s.payload().len()) as f64
        ));
    }
    out.push_str("\n| module | figure |\n|---|---|\n");
    out.push_str(&format!(
        "| `policy.wasm` | {} B |\n",
        thousands(wasm.len())
    ));
    let annotated = workspace_dir().join("annotated-policy.wasm");
    match std::fs::metadata(&annotated) {
        Ok(m) => out.push_str(&format!(
            "| `annotated-policy.wasm` | {} B |\n",
            thousands(m.len() as usize)
        )),
        Err(_) => {
            out.push_str("| `annotated-policy.wasm` | not built (`make annotated-policy.wasm`) |\n")
        }
    }
    out.push_str(&format!(
        "| compile (`build_pre`: wasmtime/cranelift, best of 3) | {} |\n",
        best(compile).map_or("n/a".to_owned(), time)
    ));
    match MemoryProbe::new(wasm) {
        Ok(probe) => {
            for s in scenarios
                .iter()
                .filter(|s| ["vm-1mib", "vm-create-mutate"].contains(&s.id))
            {
                let p = s.payload();
                match probe.measure("validate", &p) {
                    Ok(m) => out.push_str(&format!(
                        "| peak linear memory, `{}` ({} B request, {} B answer) | {} B before the call, {} B after ({:.1}× the request) |\n",
                        s.id,
                        thousands(p.len()),
                        thousands(m.answer_len),
                        thousands(m.before),
                        thousands(m.after),
                        m.after as f64 / p.len() as f64
                    )),
                    Err(e) => out.push_str(&format!("| peak linear memory, `{}` | probe failed: {e} |\n", s.id)),
                }
            }
        }
        Err(e) => out.push_str(&format!("| peak linear memory | probe failed: {e} |\n")),
    }
    if let Some(peer) = peer {
        out.push_str(&format!(
            "\nPeer: psa-label-enforcer ({} B module), settings `{}`, on our e2e host (`make bench-kwctl` measures the same with the real `kwctl bench` and policy-server).\n\n",
            thousands(peer.size),
            peer_settings()
        ));
        out.push_str("| requests | ours warm | peer warm | ours/peer warm | ours fresh | peer fresh | ours/peer fresh |\n|---|---|---|---|---|---|---|\n");
        for Pair { id, what, .. } in &peer.pairs {
            let [ow, pw, of, pf] = PEER_VARIANTS.map(|v| rounds_of(dir, rounds, id, v));
            out.push_str(&format!(
                "| `{id}`: {what} | {} | {} | {} | {} | {} | {} |\n",
                cell(&ow),
                cell(&pw),
                ratio(best(&ow), best(&pw)),
                cell(&of),
                cell(&pf),
                ratio(best(&of), best(&pf)),
            ));
        }
    }
    println!("\n{out}");
    let file = benchmarks_file();
    match replace_section(&file, "## Evaluation (`make bench`)", &out) {
        Ok(()) => println!("written to {}", file.display()),
        Err(e) => eprintln!("{}: {e}", file.display()),
    }
}
