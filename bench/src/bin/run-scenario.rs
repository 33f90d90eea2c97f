//! One scenario's `validate`, natively, N times: `run-scenario ID [N]`. For instruction counts
//! under `valgrind --tool=callgrind` (deterministic where wall time on a shared machine is not)
//! and for `perf record`; prints the answer's length so the work cannot be optimised away, and
//! the wall time a run and per KB of payload (the scenarios are built before the clock starts).

use policy_bench::scenarios;

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [id, rest @ ..] = args.as_slice() else {
        return Err("usage: run-scenario ID [N]".to_owned());
    };
    let n: usize = rest
        .first()
        .map_or(Ok(1), |n| n.parse())
        .map_err(|e| format!("N: {e}"))?;
    let scenario = scenarios::all()
        .into_iter()
        .find(|s| s.id == id)
        .ok_or_else(|| format!("no scenario {id}"))?;
    let payload = scenario.payload();
    let start = std::time::Instant::now();
    let total: usize = (0..n)
        .map(|_| vm_maintenance_strategy::policy::validate(&payload).len())
        .sum();
    let per_run = start.elapsed().as_secs_f64() * 1e6 / n as f64;
    let per_kb = per_run / (payload.len() as f64 / 1024.0);
    println!(
        "{id}: {n} runs, {total} answer bytes, {per_run:.1} µs a run, {per_kb:.2} µs per KB of payload"
    );
    Ok(())
}
