//! Policy settings: serde shape, defaults and the consistency checks of `validate_settings`.

use std::borrow::Cow;

use kubewarden_policy_sdk::settings::Validatable;
use serde::Deserialize;

use crate::cluster::KubeVirtCr;
use crate::configuration::{Configuration, Rules, WorkloadUpdateStrategy, parse_version};
use crate::listing::listed;
use crate::object::view::objects::{object, objects, optional_object};
use crate::strategy::{
    DEFAULT_LABEL_KEY, DEFAULT_MAINTENANCE_STRATEGY, EVICTION_STRATEGIES, LIVE_MIGRATE_IF_POSSIBLE,
    MAINTENANCE_STRATEGIES, is_eviction_strategy,
};

/// What to do about a finding that is not always an error.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Ignore,
    Warn,
    Reject,
}

/// A setting's text: a default is the policy's own constant, a value read from the settings JSON
/// an owned copy (every request reads its settings: the defaults cost no allocation).
pub type Text = Cow<'static, str>;

/// A setting's list of names, as [`Text`].
pub type Names = Cow<'static, [Text]>;

/// Every member is optional (its default stays); an unknown one is refused.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct Settings {
    pub label_key: Text,
    pub allowed_strategies: Names,
    pub default_strategy: Text,
    pub mutate: bool,
    pub require_label: bool,
    pub template_mismatch: Mode,
    #[serde(deserialize_with = "object")]
    pub eviction_strategy: EvictionSettings,
    #[serde(deserialize_with = "object")]
    pub kubevirt: KubevirtSettings,
    pub cluster_lookups: bool,
    /// L1–L9: what to do about an update of a running VM that KubeVirt will not apply as asked.
    pub live_updates: Mode,
}

/// What V7 does with a VM that cannot live-migrate under `LiveMigrate`.
#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
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
    pub allowed: Names,
    pub cluster_default: Option<String>,
    pub non_migratable: NonMigratable,
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct KubevirtSettings {
    pub allowed_eviction_strategies: Names,
    pub recommended_eviction_strategy: Text,
    pub require_evict_fallback: bool,
    /// The KubeVirt release the cluster runs (`v1.8.4`); unset: the CR's
    /// `status.observedKubeVirtVersion`, else the newest rules.
    pub version: Option<String>,
    /// A copy of the KubeVirt CR's `spec.configuration`; unset: the live CR's.
    #[serde(deserialize_with = "optional_object")]
    pub configuration: Option<Configuration>,
    /// K4: what to do when the CR does not make virt-controller sync `labelKey`.
    pub label_sync: Mode,
    /// A copy of the KubeVirt CR's `spec.workloadUpdateStrategy`; unset: the live CR's.
    #[serde(deserialize_with = "optional_object")]
    pub workload_update_strategy: Option<WorkloadUpdateStrategy>,
}

objects! {
    EvictionSettings => "struct EvictionSettings",
    KubevirtSettings => "struct KubevirtSettings",
}

/// The default lists, borrowed by every default `Settings`.
static ALL_EVICTION_STRATEGIES: [Text; 4] = texts(EVICTION_STRATEGIES);
static ALL_MAINTENANCE_STRATEGIES: [Text; 4] = texts(MAINTENANCE_STRATEGIES);

const fn texts(names: [&'static str; 4]) -> [Text; 4] {
    let [a, b, c, d] = names;
    [
        Cow::Borrowed(a),
        Cow::Borrowed(b),
        Cow::Borrowed(c),
        Cow::Borrowed(d),
    ]
}

impl Default for EvictionSettings {
    fn default() -> Self {
        EvictionSettings {
            default: None,
            allowed: Cow::Borrowed(&ALL_EVICTION_STRATEGIES),
            cluster_default: None,
            non_migratable: NonMigratable::Warn,
        }
    }
}

impl Default for KubevirtSettings {
    fn default() -> Self {
        KubevirtSettings {
            allowed_eviction_strategies: Cow::Borrowed(&ALL_EVICTION_STRATEGIES),
            recommended_eviction_strategy: Cow::Borrowed(LIVE_MIGRATE_IF_POSSIBLE),
            require_evict_fallback: true,
            version: None,
            configuration: None,
            label_sync: Mode::Warn,
            workload_update_strategy: None,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            label_key: Cow::Borrowed(DEFAULT_LABEL_KEY),
            allowed_strategies: Cow::Borrowed(&ALL_MAINTENANCE_STRATEGIES),
            default_strategy: Cow::Borrowed(DEFAULT_MAINTENANCE_STRATEGY),
            mutate: true,
            require_label: true,
            template_mismatch: Mode::Reject,
            eviction_strategy: EvictionSettings::default(),
            kubevirt: KubevirtSettings::default(),
            cluster_lookups: true,
            live_updates: Mode::Warn,
        }
    }
}

impl Settings {
    /// Parses settings JSON (`null` is the defaults); the error names the offending field as
    /// serde_path_to_error writes its path (`evictionStrategy.default: ...`).
    pub fn from_json(raw: &[u8]) -> Result<Settings, String> {
        let text = std::str::from_utf8(raw).map_err(|e| format!("not UTF-8: {e}"))?;
        // serde's derive also reads a struct from an array, by position.
        if text.trim_start().starts_with('[') {
            return Err("settings must be a JSON object, got an array".to_owned());
        }
        let deserializer = &mut serde_json::Deserializer::from_str(text);
        let settings: Option<Settings> = serde_path_to_error::deserialize(&mut *deserializer)
            .map_err(|e| match e.path().to_string() {
                path if path == "." || path == "?" => e.inner().to_string(),
                path => format!("{path}: {}", e.inner()),
            })
            .and_then(|settings| match deserializer.end() {
                Ok(()) => Ok(settings),
                Err(e) => Err(e.to_string()),
            })?;
        Ok(settings.unwrap_or_default())
    }

    /// Parses and checks settings: the one entry point for both waPC functions. Every request
    /// carries its settings: the common `{}` (and a payload without settings) are the defaults,
    /// valid by construction, without a reading.
    pub fn load(raw: &[u8]) -> Result<Settings, String> {
        if raw == b"{}" {
            return Ok(Settings::default());
        }
        let settings = Settings::from_json(raw)?;
        settings.validate()?;
        Ok(settings)
    }
}

impl Validatable for Settings {
    fn validate(&self) -> Result<(), String> {
        if !is_label_key(&self.label_key) {
            return Err(format!(
                "labelKey: {:?} is not a valid label key ([prefix/]name, name at most 63 characters)",
                self.label_key
            ));
        }
        check_list(
            "allowedStrategies",
            &self.allowed_strategies,
            &MAINTENANCE_STRATEGIES,
        )?;
        check_member(
            "defaultStrategy",
            &self.default_strategy,
            "allowedStrategies",
            &self.allowed_strategies,
        )?;
        let eviction = &self.eviction_strategy;
        check_list(
            "evictionStrategy.allowed",
            &eviction.allowed,
            &EVICTION_STRATEGIES,
        )?;
        if let Some(default) = &eviction.default {
            check_member(
                "evictionStrategy.default",
                default,
                "evictionStrategy.allowed",
                &eviction.allowed,
            )?;
            if !self.mutate {
                return Err("evictionStrategy.default: needs mutate: true".to_owned());
            }
        }
        if let Some(cluster) = eviction
            .cluster_default
            .as_ref()
            .filter(|c| !is_eviction_strategy(c))
        {
            return Err(format!(
                "evictionStrategy.clusterDefault: unknown value {cluster:?} (valid: {})",
                listed(&EVICTION_STRATEGIES, ", ")
            ));
        }
        if eviction.non_migratable == NonMigratable::Fix {
            if !self.mutate {
                return Err("evictionStrategy.nonMigratable: fix needs mutate: true".to_owned());
            }
            // `fix` writes LiveMigrateIfPossible, which V6 then checks like any other value.
            if !eviction
                .allowed
                .iter()
                .any(|s| s == LIVE_MIGRATE_IF_POSSIBLE)
            {
                return Err(format!(
                    "evictionStrategy.nonMigratable: fix sets LiveMigrateIfPossible, which evictionStrategy.allowed ({}) does not include",
                    listed(&eviction.allowed, ", ")
                ));
            }
        }
        let kubevirt = &self.kubevirt;
        if let Some(version) = &kubevirt.version {
            check_version(version)?;
        }
        if let Some(configuration) = &kubevirt.configuration {
            configuration.check("kubevirt.configuration")?;
        }
        check_list(
            "kubevirt.allowedEvictionStrategies",
            &kubevirt.allowed_eviction_strategies,
            &EVICTION_STRATEGIES,
        )?;
        check_member(
            "kubevirt.recommendedEvictionStrategy",
            &kubevirt.recommended_eviction_strategy,
            "kubevirt.allowedEvictionStrategies",
            &kubevirt.allowed_eviction_strategies,
        )
    }
}

/// The releases whose rules the policy knows (docs/rules.md, "Migratability as KubeVirt computes it").
pub const SUPPORTED_RELEASES: &str = "v1.6.x, v1.7.x, v1.8.x, v1.9.x";

impl KubevirtSettings {
    /// The rules `kubevirt.version` names; `None` when unset.
    pub fn rules(&self) -> Option<Rules> {
        self.version
            .as_deref()
            .and_then(parse_version)
            .map(Rules::of)
    }

    /// The configuration and the rules: each the settings' own, else the KubeVirt CR's (its
    /// `spec.configuration`, its `status.observedKubeVirtVersion`) when `cr` was read; an unknown
    /// release is `None`.
    pub(crate) fn or_cr(&self, cr: Option<&KubeVirtCr>) -> (Configuration, Option<Rules>) {
        let config = self
            .configuration
            .clone()
            .or_else(|| cr.map(|cr| cr.configuration.clone()))
            .unwrap_or_default();
        let rules = self.rules().or_else(|| {
            cr.and_then(|cr| cr.observed_version.as_deref())
                .and_then(parse_version)
                .map(Rules::of)
        });
        (config, rules)
    }
}

/// `kubevirt.version`: `v1.8.4`, `1.9.0` or `v1.9`, a supported release.
fn check_version(version: &str) -> Result<(), String> {
    let digits = version.strip_prefix('v').unwrap_or(version);
    let parts: Vec<&str> = digits.split('.').collect();
    let numeric = (2..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    match parse_version(version).filter(|_| numeric) {
        None => Err(format!(
            "kubevirt.version: {version:?} is not a KubeVirt release such as v1.8.4"
        )),
        Some((major, minor)) if major != 1 || !(6..=9).contains(&minor) => Err(format!(
            "kubevirt.version: {version} is not supported (supported: {SUPPORTED_RELEASES})"
        )),
        Some(_) => Ok(()),
    }
}

/// A non-empty list of distinct names, each one of `known`.
pub(crate) fn check_list(field: &str, list: &[Text], known: &[&str]) -> Result<(), String> {
    if list.is_empty() {
        return Err(format!("{field}: must not be empty"));
    }
    for (i, name) in list.iter().enumerate() {
        if name.is_empty() {
            return Err(format!("{field}[{i}]: must not be empty"));
        }
        if !known.contains(&name.as_ref()) {
            return Err(format!(
                "{field}[{i}]: unknown value {name:?} (valid: {})",
                listed(known, ", ")
            ));
        }
        if list[..i].contains(name) {
            return Err(format!("{field}[{i}]: {name:?} is listed twice"));
        }
    }
    Ok(())
}

/// `value` must be one of `list` (the field named `list_field`).
pub(crate) fn check_member(
    field: &str,
    value: &str,
    list_field: &str,
    list: &[Text],
) -> Result<(), String> {
    if list.iter().any(|s| s == value) {
        return Ok(());
    }
    Err(format!(
        "{field}: {value:?} is not in {list_field} ({})",
        listed(list, ", ")
    ))
}

/// A Kubernetes label key: `[prefix/]name`, prefix a DNS subdomain of at most 253 characters,
/// name at most 63 characters of `[A-Za-z0-9_.-]` that starts and ends alphanumeric.
pub fn is_label_key(key: &str) -> bool {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    prefix.is_none_or(is_dns_subdomain) && is_label_name(name)
}

fn is_label_name(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn is_dns_subdomain(prefix: &str) -> bool {
    let lower_alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    prefix.len() <= 253
        && prefix.split('.').all(|part| {
            let b = part.as_bytes();
            !b.is_empty()
                && b.len() <= 63
                && lower_alnum(&b[0])
                && lower_alnum(&b[b.len() - 1])
                && b.iter().all(|c| lower_alnum(c) || *c == b'-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `load`'s shortcut for `{}` answers what reading and checking `{}` answers.
    #[test]
    fn empty_settings_are_the_checked_defaults() -> Result<(), String> {
        let read = Settings::from_json(b"{}")?;
        read.validate()?;
        assert_eq!(read, Settings::default());
        assert_eq!(Settings::load(b"{}")?, read);
        Ok(())
    }
}
