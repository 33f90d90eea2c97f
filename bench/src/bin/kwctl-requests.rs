//! The requests of `make bench-kwctl`: `kwctl-requests DIR` writes ours and the peer's pairs of
//! equal size and node count (the `peer-mutate` / `peer-nochange` rows of `make bench`) as
//! AdmissionReviews, and both settings; and `ours-floor`: our `nochange` request as a ConfigMap,
//! which the policy lets through at its gate (what policy-server costs around a policy that does
//! nothing, on a request of the same size).

use std::path::PathBuf;

use policy_bench::scenarios::{self, peer_namespace, peer_settings};
use policy_bench::{bytes, nodes};
use serde_json::{Value, json};

fn review(request: &Value) -> Value {
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
}

fn main() -> Result<(), String> {
    let dir = PathBuf::from(std::env::args().nth(1).ok_or("usage: kwctl-requests DIR")?);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let scenarios = scenarios::all();
    let write = |name: &str, value: &Value| {
        let path = dir.join(name);
        std::fs::write(&path, value.to_string()).map_err(|e| format!("{}: {e}", path.display()))
    };
    for (pair, ours, labelled) in [
        ("mutate", "vm-create-mutate", false),
        ("nochange", "vm-consistent", true),
    ] {
        let scenario = scenarios
            .iter()
            .find(|s| s.id == ours)
            .ok_or_else(|| format!("no scenario {ours}"))?;
        let theirs = peer_namespace(bytes(&scenario.request), nodes(&scenario.request), labelled);
        write(&format!("ours-{pair}.json"), &review(&scenario.request))?;
        write(&format!("peer-{pair}.json"), &review(&theirs))?;
        write("ours-settings.json", &scenario.settings)?;
    }
    write("peer-settings.json", &peer_settings())?;
    let nochange = scenarios
        .iter()
        .find(|s| s.id == "vm-consistent")
        .ok_or("no scenario vm-consistent")?;
    let mut floor = nochange.request.clone();
    floor["kind"] = json!({"group": "", "version": "v1", "kind": "ConfigMap"});
    floor["requestKind"] = floor["kind"].clone();
    floor["resource"] = json!({"group": "", "version": "v1", "resource": "configmaps"});
    floor["requestResource"] = floor["resource"].clone();
    write("ours-floor.json", &review(&floor))?;
    println!("{}", dir.display());
    Ok(())
}
