//! Cluster lookups (docs/rules.md, "Cluster lookups") through the library functions the tools
//! use: `eviction::assess` on a cluster of plain data, and the reading of a KubeVirt list answer.
//! The lookups of the policy, with the exact calls made, are cases of e2e-tests/cases/lookups.yaml
//! and kubevirt-reasons.yaml.

mod common;

use common::{TestCluster, fixture, patched};
use serde_json::{Value, json};

/// web-01 under its own LiveMigrate, its disk's claim made outside the VM (no Harvester
/// `volumeClaimTemplates`): the claim `default/web-01-disk-0-k2x7q` must be read.
fn external_claim_vm() -> Value {
    patched(
        fixture("web-01-migratable"),
        &json!([
            {"op": "replace", "path": "/spec/template/spec/evictionStrategy", "value": "LiveMigrate"},
            {"op": "remove", "path": "/metadata/annotations/harvesterhci.io~1volumeClaimTemplates"},
        ]),
    )
}

fn claim(modes: Vec<&'static str>) -> TestCluster {
    TestCluster {
        claims: vec![("default", "web-01-disk-0-k2x7q", modes)],
        ..TestCluster::default()
    }
}

#[test]
fn assessment_reads_everything() {
    use vm_maintenance_strategy::eviction::{StrategySource, assess};
    use vm_maintenance_strategy::reason::{Reason, ReasonKind};
    use vm_maintenance_strategy::settings::Settings;
    use vm_maintenance_strategy::strategy::EvictionStrategy;
    let settings = Settings::default();
    let cluster = TestCluster {
        kubevirt: TestCluster::strategy("LiveMigrate").kubevirt,
        ..claim(vec!["ReadWriteOnce"])
    };
    let vm = patched(
        external_claim_vm(),
        &json!([{"op": "remove", "path": "/spec/template/spec/evictionStrategy"}]),
    );
    let got = assess(&vm, &settings, &cluster);
    assert_eq!(got.eviction_strategy, Some(EvictionStrategy::LiveMigrate));
    assert_eq!(got.source, StrategySource::Cluster);
    assert_eq!(
        got.reasons,
        [Reason::new(
            ReasonKind::DisksNotLiveMigratable,
            "volume web-01-disk-0-k2x7q (ReadWriteOnce)"
        )]
    );
    assert!(got.warnings.is_empty(), "{:?}", got.warnings);

    let offline: Settings = Settings::load(br#"{"clusterLookups": false}"#).expect("settings");
    let got = assess(&vm, &offline, &cluster);
    assert_eq!(
        (got.eviction_strategy, got.source),
        (None, StrategySource::Default)
    );
    assert!(got.reasons.is_empty());
}

/// The host's reading of a `list_resources_all` answer: the items count, the list's own
/// `apiVersion`/`kind` do not (`kubevirt.io/v1 KubeVirtList` or kube-rs' plain `v1 List`).
#[test]
fn kubevirt_list_answers() {
    use vm_maintenance_strategy::cluster::kubevirt_from_list;
    let cr = json!({
        "apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"configuration": {"evictionStrategy": "LiveMigrate", "network": {"defaultNetworkInterface": "masquerade"}}},
        "status": {"observedKubeVirtVersion": "v1.9.0"},
    });
    // (what, the list answer, the CR's (evictionStrategy, observed version) or no CR)
    type Want = Option<(&'static str, &'static str)>;
    let table: Vec<(&str, Value, Want)> = vec![
        (
            "KubeVirtList",
            json!({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirtList", "metadata": {}, "items": [cr]}),
            Some(("LiveMigrate", "v1.9.0")),
        ),
        (
            "plain v1 List",
            json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [cr]}),
            Some(("LiveMigrate", "v1.9.0")),
        ),
        (
            "items without apiVersion and kind",
            json!({"apiVersion": "v1", "kind": "List", "items": [{"spec": cr["spec"], "status": cr["status"]}]}),
            Some(("LiveMigrate", "v1.9.0")),
        ),
        (
            "empty list",
            json!({"apiVersion": "v1", "kind": "List", "items": []}),
            None,
        ),
        (
            "items null",
            json!({"apiVersion": "v1", "kind": "List", "items": null}),
            None,
        ),
        (
            "no items",
            json!({"apiVersion": "v1", "kind": "List"}),
            None,
        ),
    ];
    for (what, list, want) in table {
        let got = kubevirt_from_list(list.to_string().as_bytes())
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        let read = got.as_ref().map(|cr| {
            (
                cr.configuration
                    .eviction_strategy
                    .as_deref()
                    .unwrap_or_default(),
                cr.observed_version.as_deref().unwrap_or_default(),
            )
        });
        assert_eq!(read, want, "{what}");
        if let Some(cr) = got {
            let network = cr
                .configuration
                .network
                .and_then(|n| n.default_network_interface);
            assert_eq!(network.as_deref(), Some("masquerade"), "{what}");
        }
    }
    let malformed = kubevirt_from_list(b"{\"items\": 3}");
    assert!(
        malformed
            .as_ref()
            .is_err_and(|e| e.starts_with("list all resources response: invalid type")),
        "{malformed:?}"
    );
}
