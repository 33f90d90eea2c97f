//! A VM's own text as the live-update rules read it (L1): `spec.template.spec` kept as written
//! until the old and the new one differ, then parsed; the VM's name and the VM-level fields that
//! decide a change's fate.

use crate::object::view::Scalar;
use serde::Deserialize;
use serde_json::value::RawValue;

/// A VM's text as far as the live-update rules read it: its name, and `spec.template.spec` and
/// the VM-level fields beside it, as raw text until a change is found.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(super) struct Text<'a> {
    #[serde(borrow)]
    metadata: Option<Metadata<'a>>,
    #[serde(borrow)]
    spec: Option<Spec<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Metadata<'a> {
    #[serde(borrow)]
    name: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Spec<'a> {
    #[serde(borrow)]
    template: Option<Template<'a>>,
    #[serde(borrow)]
    update_volumes_strategy: Option<&'a RawValue>,
    #[serde(borrow)]
    run_strategy: Option<&'a RawValue>,
    #[serde(borrow)]
    running: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Template<'a> {
    #[serde(borrow)]
    spec: Option<&'a RawValue>,
}

impl<'a> Text<'a> {
    pub(super) fn read(text: &'a str) -> Result<Text<'a>, String> {
        serde_json::from_str(text).map_err(|e| e.to_string())
    }

    fn spec(&self) -> Option<&Spec<'a>> {
        self.spec.as_ref()
    }

    /// `spec.template.spec` as written.
    pub(super) fn template_spec(&self) -> Option<&'a str> {
        Some(self.spec()?.template.as_ref()?.spec?.get())
    }

    /// `spec.template.spec` parsed (`null` when absent).
    pub(super) fn spec_value(&self) -> Result<Scalar<'a>, serde_json::Error> {
        self.template_spec()
            .map_or(Ok(Scalar::Null), serde_json::from_str)
    }

    fn string(raw: Option<&'a RawValue>) -> Option<String> {
        serde_json::from_str::<String>(raw?.get()).ok()
    }

    /// `metadata.name`.
    pub(super) fn name(&self) -> Option<String> {
        Text::string(self.metadata.as_ref()?.name)
    }

    /// `spec.updateVolumesStrategy: Migration`.
    pub(super) fn volume_migration(&self) -> bool {
        let strategy = self
            .spec()
            .and_then(|s| Text::string(s.update_volumes_strategy));
        strategy.as_deref() == Some("Migration")
    }

    /// `spec.runStrategy` and `spec.running`, each as JSON (`null` is unset).
    pub(super) fn run_strategy(&self) -> (Option<Scalar<'a>>, Option<Scalar<'a>>) {
        let value = |raw: Option<&'a RawValue>| {
            raw.and_then(|r| serde_json::from_str::<Scalar>(r.get()).ok())
                .filter(|v| *v != Scalar::Null)
        };
        let spec = self.spec.as_ref();
        (
            value(spec.and_then(|s| s.run_strategy)),
            value(spec.and_then(|s| s.running)),
        )
    }
}
