//! The settings reader as it was before `src/view/typed.rs` (serde's derive and
//! serde_path_to_error, commit 36d4984), kept only as the oracle of `tests/settings_reader.rs`.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt;

use serde::de::value::MapAccessDeserializer;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use vm_maintenance_strategy::strategy::{
    DEFAULT_LABEL_KEY, DEFAULT_MAINTENANCE_STRATEGY, EVICTION_STRATEGIES, LIVE_MIGRATE_IF_POSSIBLE,
    MAINTENANCE_STRATEGIES,
};

/// What to do about a finding that is not always an error.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum Mode {
    Ignore,
    Warn,
    Reject,
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct Settings {
    pub label_key: String,
    pub allowed_strategies: Vec<String>,
    pub default_strategy: String,
    pub mutate: bool,
    pub require_label: bool,
    pub template_mismatch: Mode,
    pub eviction_strategy: EvictionSettings,
    pub kubevirt: KubevirtSettings,
    pub cluster_lookups: bool,
}

/// What V7 does with a VM that cannot live-migrate under `LiveMigrate`.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum NonMigratable {
    Ignore,
    Warn,
    Reject,
    Fix,
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct EvictionSettings {
    pub default: Option<String>,
    pub allowed: Vec<String>,
    pub cluster_default: Option<String>,
    pub non_migratable: NonMigratable,
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct KubevirtSettings {
    pub allowed_eviction_strategies: Vec<String>,
    pub recommended_eviction_strategy: String,
    pub require_evict_fallback: bool,
    /// The KubeVirt release the cluster runs (`v1.8.4`); unset: the CR's
    /// `status.observedKubeVirtVersion`, else the newest rules.
    pub version: Option<String>,
    /// A copy of the KubeVirt CR's `spec.configuration`; unset: the live CR's.
    #[serde(deserialize_with = "object_or_null")]
    pub configuration: Option<Configuration>,
}

fn all_eviction_strategies() -> Vec<String> {
    EVICTION_STRATEGIES.map(str::to_owned).to_vec()
}

impl Default for EvictionSettings {
    fn default() -> Self {
        EvictionSettings {
            default: None,
            allowed: all_eviction_strategies(),
            cluster_default: None,
            non_migratable: NonMigratable::Warn,
        }
    }
}

impl Default for KubevirtSettings {
    fn default() -> Self {
        KubevirtSettings {
            allowed_eviction_strategies: all_eviction_strategies(),
            recommended_eviction_strategy: LIVE_MIGRATE_IF_POSSIBLE.to_owned(),
            require_evict_fallback: true,
            version: None,
            configuration: None,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            label_key: DEFAULT_LABEL_KEY.to_owned(),
            allowed_strategies: MAINTENANCE_STRATEGIES.map(str::to_owned).to_vec(),
            default_strategy: DEFAULT_MAINTENANCE_STRATEGY.to_owned(),
            mutate: true,
            require_label: true,
            template_mismatch: Mode::Reject,
            eviction_strategy: EvictionSettings::default(),
            kubevirt: KubevirtSettings::default(),
            cluster_lookups: true,
        }
    }
}

/// `spec.configuration` of the KubeVirt CR, only the fields the rules read. Unknown fields are
/// ignored (no `deny_unknown_fields`): a copy of a real CR's configuration is always accepted.
#[derive(Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(default, rename_all = "camelCase")]
pub struct Configuration {
    pub eviction_strategy: Option<String>,
    pub network: Option<Network>,
    pub developer_configuration: Option<Developer>,
    pub permitted_host_devices: Option<PermittedHostDevices>,
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

/// `kubevirt.configuration`: an object or `null` (serde alone would also read a struct from an
/// array); the fields inside keep their paths in errors.
pub(crate) fn object_or_null<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Configuration>, D::Error> {
    struct Object;
    impl<'de> Visitor<'de> for Object {
        type Value = Option<Configuration>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object (a copy of the KubeVirt CR's spec.configuration)")
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(Object)
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            Configuration::deserialize(MapAccessDeserializer::new(map)).map(Some)
        }
    }
    deserializer.deserialize_option(Object)
}

/// The old `Settings::from_json`, verbatim but for the names.
pub fn from_json(raw: &[u8]) -> Result<Settings, String> {
    if raw.trim_ascii_start().first() == Some(&b'[') {
        return Err("settings must be a JSON object, got an array".to_owned());
    }
    let de = &mut serde_json::Deserializer::from_slice(raw);
    let settings: Option<Settings> =
        serde_path_to_error::deserialize(&mut *de).map_err(|e| match e.path().to_string() {
            path if path == "." || path == "?" => e.inner().to_string(),
            path => format!("{path}: {}", e.inner()),
        })?;
    de.end().map_err(|e| e.to_string())?;
    Ok(settings.unwrap_or_default())
}
