//! Two builds of the module on the same scenarios, interleaved: `compare-modules A.wasm B.wasm
//! [ROUNDS]` prints, per scenario, the best-round median of `validate` on a warm instance and of
//! a fresh instance plus one `validate`, for A and B, with the spread between rounds, then the
//! peak linear memory of one `validate` on a fresh instance. For before/after measurements of one
//! change (module size, time and memory must not grow unnoticed).

use std::path::PathBuf;
use std::time::Instant;

use policy_bench::memory::MemoryProbe;
use policy_bench::scenarios;
use policy_host::PolicyHost;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// Median nanoseconds of `n` runs of `f`.
fn median(n: usize, mut f: impl FnMut() -> Result<(), Error>) -> Result<f64, Error> {
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        f()?;
        times.push(start.elapsed().as_nanos() as f64);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[n / 2])
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [a, b, rest @ ..] = args.as_slice() else {
        return Err("usage: compare-modules A.wasm B.wasm [ROUNDS]".into());
    };
    let rounds: usize = rest.first().map_or(Ok(5), |r| r.parse())?;
    let hosts = [
        PolicyHost::load(&PathBuf::from(a))?,
        PolicyHost::load(&PathBuf::from(b))?,
    ];
    for (name, path) in [("A", a), ("B", b)] {
        println!("{name}: {path} ({} bytes)", std::fs::metadata(path)?.len());
    }
    println!("| scenario | A warm µs | B warm µs | B/A | A fresh µs | B fresh µs | B/A |");
    println!("|---|---|---|---|---|---|---|");
    for scenario in scenarios::all().into_iter().filter(|s| s.cluster.is_none()) {
        let payload = scenario.payload();
        let n = if scenario.id == "vm-1mib" { 21 } else { 301 };
        // [host][warm|fresh] -> one median per round
        let mut results = [[Vec::new(), Vec::new()], [Vec::new(), Vec::new()]];
        for round in 0..rounds {
            for i in 0..2 {
                let h = if round % 2 == 0 { i } else { 1 - i };
                let instance = hosts[h].instance()?;
                instance.call("validate", &payload)?;
                results[h][0].push(median(n, || instance.call("validate", &payload).map(drop))?);
                results[h][1].push(median(n, || {
                    hosts[h].instance()?.call("validate", &payload).map(drop)
                })?);
            }
        }
        let best = |v: &Vec<f64>| v.iter().copied().fold(f64::INFINITY, f64::min) / 1000.0;
        let spread = |v: &Vec<f64>| {
            let max = v.iter().copied().fold(0.0, f64::max);
            max / (best(v) * 1000.0) - 1.0
        };
        let cell = |v: &Vec<f64>| format!("{:.1} (±{:.0}%)", best(v), 100.0 * spread(v));
        println!(
            "| {} | {} | {} | {:.2} | {} | {} | {:.2} |",
            scenario.id,
            cell(&results[0][0]),
            cell(&results[1][0]),
            best(&results[1][0]) / best(&results[0][0]),
            cell(&results[0][1]),
            cell(&results[1][1]),
            best(&results[1][1]) / best(&results[0][1]),
        );
    }
    println!();
    println!("| scenario | request B | A peak memory | B peak memory | B/A |");
    println!("|---|---|---|---|---|");
    let probes = [
        MemoryProbe::new(&std::fs::read(a)?)?,
        MemoryProbe::new(&std::fs::read(b)?)?,
    ];
    for scenario in scenarios::all().into_iter().filter(|s| s.cluster.is_none()) {
        let payload = scenario.payload();
        let [peak_a, peak_b] = [&probes[0], &probes[1]]
            .map(|probe| probe.measure("validate", &payload).map(|m| m.after));
        let (peak_a, peak_b) = (peak_a?, peak_b?);
        println!(
            "| {} | {} B | {peak_a} B ({:.1}×) | {peak_b} B ({:.1}×) | {:.2} |",
            scenario.id,
            payload.len(),
            peak_a as f64 / payload.len() as f64,
            peak_b as f64 / payload.len() as f64,
            peak_b as f64 / peak_a as f64,
        );
    }
    Ok(())
}
