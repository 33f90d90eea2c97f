//! The parts of the KubeVirt CR that decide migratability: `spec.configuration` as far as docs/rules.md
//! names it (the rest is ignored, never refused) and the release whose rules apply. The same shape
//! reads the `kubevirt.configuration` setting and the live CR.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::listing::listed;
use crate::object::view::objects::{objects, optional_object};

/// `spec.configuration` of the KubeVirt CR, only the fields the rules read. Unknown fields are
/// ignored (no `deny_unknown_fields`): a copy of a real CR's configuration is always accepted.
#[derive(Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(default, rename_all = "camelCase")]
#[serde(expecting = "an object (a copy of the KubeVirt CR's spec.configuration)")]
pub struct Configuration {
    pub eviction_strategy: Option<String>,
    #[serde(deserialize_with = "optional_object")]
    pub network: Option<Network>,
    #[serde(deserialize_with = "optional_object")]
    pub developer_configuration: Option<Developer>,
    #[serde(deserialize_with = "optional_object")]
    pub permitted_host_devices: Option<PermittedHostDevices>,
    /// `Stage` or `LiveUpdate`; unset is `LiveUpdate` (docs/rules.md, "Live updates").
    pub vm_rollout_strategy: Option<String>,
    #[serde(deserialize_with = "optional_object")]
    pub live_update_configuration: Option<LiveUpdateConfiguration>,
}

/// `spec.configuration.liveUpdateConfiguration` (`types.go:4001-4015`).
#[derive(Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct LiveUpdateConfiguration {
    pub max_cpu_sockets: Option<u64>,
    /// A Kubernetes quantity (`16Gi`).
    pub max_guest: Option<String>,
    pub max_hotplug_ratio: Option<u64>,
}

/// `spec.workloadUpdateStrategy` of the KubeVirt CR, as far as the live-update rules read it.
/// Unknown fields are ignored: a copy of a real CR's is always accepted.
#[derive(Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct WorkloadUpdateStrategy {
    pub workload_update_methods: Option<Vec<String>>,
}

/// `spec.configuration.network`.
#[derive(Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct Network {
    pub default_network_interface: Option<String>,
    pub binding: Option<BTreeMap<String, BindingPlugin>>,
}

/// `spec.configuration.network.binding.NAME`: a plugin migrates iff `migration` is set.
#[derive(Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(default)]
pub struct BindingPlugin {
    pub migration: Option<IgnoredAny>,
}

/// `spec.configuration.developerConfiguration`.
#[derive(Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct Developer {
    pub feature_gates: Option<Vec<String>>,
    #[serde(rename = "minimumClusterTSCFrequency")]
    pub minimum_cluster_tsc_frequency: Option<i64>,
}

/// `spec.configuration.permittedHostDevices`.
#[derive(Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct PermittedHostDevices {
    pub mediated_devices: Option<Vec<MediatedDevice>>,
}

/// `spec.configuration.permittedHostDevices.mediatedDevices[]`.
#[derive(Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct MediatedDevice {
    pub resource_name: Option<String>,
}

objects! {
    Configuration => "an object (a copy of the KubeVirt CR's spec.configuration)",
    Network => "struct Network",
    Developer => "struct Developer",
    PermittedHostDevices => "struct PermittedHostDevices",
    LiveUpdateConfiguration => "struct LiveUpdateConfiguration",
    WorkloadUpdateStrategy => "an object (a copy of the KubeVirt CR's spec.workloadUpdateStrategy)",
}

/// KubeVirt's `network.defaultNetworkInterface` values (`virt-config/configuration.go:489-494`).
pub(crate) const DEFAULT_INTERFACES: [&str; 3] = ["bridge", "masquerade", "slirp"];

impl Configuration {
    /// The binding of the default pod interface: `network.defaultNetworkInterface`, `bridge` when
    /// unset or empty (`virt-config.go:73`).
    pub(crate) fn default_interface(&self) -> &str {
        self.network
            .as_ref()
            .and_then(|n| n.default_network_interface.as_deref())
            .filter(|d| !d.is_empty())
            .unwrap_or("bridge")
    }

    /// Whether the binding plugin `name` has `migration` (`interface.go:80-83`).
    pub(crate) fn plugin_migrates(&self, name: &str) -> bool {
        self.network
            .as_ref()
            .and_then(|n| n.binding.as_ref())
            .and_then(|b| b.get(name))
            .is_some_and(|p| p.migration.is_some())
    }

    /// Whether the feature gate is listed in `developerConfiguration.featureGates`.
    pub(crate) fn gate(&self, gate: &str) -> bool {
        self.developer_configuration
            .as_ref()
            .and_then(|d| d.feature_gates.as_ref())
            .is_some_and(|g| g.iter().any(|x| x == gate))
    }

    /// Whether `deviceName` is a permitted mediated device's `resourceName` (`vm.go:1292-1302`).
    pub(crate) fn is_mdev(&self, device_name: &str) -> bool {
        self.permitted_host_devices
            .as_ref()
            .and_then(|p| p.mediated_devices.as_ref())
            .is_some_and(|m| {
                m.iter()
                    .any(|d| d.resource_name.as_deref() == Some(device_name))
            })
    }

    /// `developerConfiguration.minimumClusterTSCFrequency` > 0: every VMI gets a TSC hint.
    pub(crate) fn tsc_frequency_known(&self) -> bool {
        self.developer_configuration
            .as_ref()
            .and_then(|d| d.minimum_cluster_tsc_frequency)
            .is_some_and(|f| f > 0)
    }

    /// Whether the cluster rolls template changes out to running VMs (`virt-config.go:514-517`:
    /// unset is `LiveUpdate`, whatever the API comment says).
    pub(crate) fn live_update(&self) -> bool {
        self.vm_rollout_strategy.as_deref() != Some("Stage")
    }

    /// `liveUpdateConfiguration.maxHotplugRatio`, 4 when unset (`virt-config.go:110`).
    pub(crate) fn max_hotplug_ratio(&self) -> u64 {
        self.live_update_configuration
            .as_ref()
            .and_then(|l| l.max_hotplug_ratio)
            .unwrap_or(4)
    }

    /// The settings' checks of the fields read, with the path of each.
    pub(crate) fn check(&self, path: &str) -> Result<(), String> {
        if let Some(value) = self
            .network
            .as_ref()
            .and_then(|n| n.default_network_interface.as_deref())
            .filter(|d| !d.is_empty() && !DEFAULT_INTERFACES.contains(d))
        {
            return Err(format!(
                "{path}.network.defaultNetworkInterface: unknown value {value:?} (valid: {})",
                listed(&DEFAULT_INTERFACES, ", ")
            ));
        }
        if let Some(value) = self
            .vm_rollout_strategy
            .as_deref()
            .filter(|s| !["Stage", "LiveUpdate"].contains(s))
        {
            return Err(format!(
                "{path}.vmRolloutStrategy: unknown value {value:?} (valid: Stage, LiveUpdate)"
            ));
        }
        if let Some(value) = self
            .eviction_strategy
            .as_deref()
            .filter(|s| !crate::strategy::is_eviction_strategy(s))
        {
            return Err(format!(
                "{path}.evictionStrategy: unknown value {value:?} (valid: {})",
                listed(&crate::strategy::EVICTION_STRATEGIES, ", ")
            ));
        }
        Ok(())
    }
}

/// Which release's rules apply where KubeVirt changed them (docs/rules.md, `kubevirt.version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rules {
    /// v1.6.0–v1.6.x: as v1.7, and `launchSecurity` knows only `sev` (the API server prunes
    /// `snp` and `tdx`), a preference has no `preferredArchitecture`, no label-sync flag.
    V1_6,
    /// v1.7.0–v1.7.x: as v1.8, but an interface has no `passtBinding` (the API server prunes it).
    V1_7,
    /// v1.8.0–v1.8.x: every GPU blocks, a LUN with `reservation: true` blocks.
    V1_8,
    /// v1.9.x, the newest rules: one vGPU migrates (gate, mediated device), reservations migrate.
    V1_9,
}

/// A release as KubeVirt writes it: an optional `v`, `major.minor`, an optional `.patch`, then
/// anything (`-rc.1`, `+build`). `None` when it does not start that way (`latest`, a digest).
pub fn parse_version(text: &str) -> Option<(u64, u64)> {
    let text = text.strip_prefix('v').unwrap_or(text);
    let mut parts = text.splitn(3, '.');
    let major = parts.next()?.parse().ok()?;
    let minor: String = parts
        .next()?
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((major, minor.parse().ok()?))
}

impl Rules {
    /// The rules of a release: before v1.7 the v1.6 ones, then each minor release's own, from
    /// v1.9 on the newest.
    pub fn of(version: (u64, u64)) -> Rules {
        match version {
            v if v < (1, 7) => Rules::V1_6,
            v if v < (1, 8) => Rules::V1_7,
            v if v < (1, 9) => Rules::V1_8,
            _ => Rules::V1_9,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Rules::V1_6 => "v1.6",
            Rules::V1_7 => "v1.7",
            Rules::V1_8 => "v1.8",
            Rules::V1_9 => "v1.9",
        }
    }
}
