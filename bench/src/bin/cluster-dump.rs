//! `cluster-dump VMS NODES FILE`: writes the generated cluster (`policy_bench::cluster`) as the
//! JSON `kubectl get ... -o json` prints, for the previews' benchmarks (`make bench-previews`).

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [vms, nodes, file] = args.as_slice() else {
        return Err("usage: cluster-dump VMS NODES FILE".to_owned());
    };
    let number = |text: &str| text.parse::<usize>().map_err(|e| format!("{text}: {e}"));
    let dump = policy_bench::cluster::dump(number(vms)?, number(nodes)?);
    let text = serde_json::to_vec(&dump).map_err(|e| e.to_string())?;
    std::fs::write(file, text).map_err(|e| format!("{file}: {e}"))
}
