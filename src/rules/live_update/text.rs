//! A VM's own text as the live-update rules read it (L1): `spec.template.spec` kept as written
//! until the old and the new one differ, then parsed; the VM's name and the VM-level fields that
//! decide a change's fate. Read by the views' reader, so it adds no JSON reader of its own.

use serde_json::value::RawValue;

use crate::object::view::{self, Field, Scalar, view};

view! {
    /// A VM's text as far as the live-update rules read it: its name, and `spec.template.spec`
    /// and the VM-level fields beside it, as raw text until a change is found.
    Text<'a> {
        "metadata" => metadata: Field<Metadata<'a>>,
        "spec" => spec: Field<Spec<'a>>,
    }
}

view! {
    Metadata<'a> {
        "name" => name: Option<Scalar<'a>>,
    }
}

view! {
    Spec<'a> {
        "template" => template: Field<Template<'a>>,
        "updateVolumesStrategy" => update_volumes_strategy: Option<Scalar<'a>>,
        "runStrategy" => run_strategy: Option<Scalar<'a>>,
        "running" => running: Option<Scalar<'a>>,
    }
}

view! {
    Template<'a> {
        "spec" => spec: Option<&'a RawValue>,
    }
}

view! {
    /// The payload as far as [`Text::of_request`] reads it (the request reader has refused a
    /// repeated member).
    Payload<'a> {
        "request" => request: Field<Request<'a>>,
    }
}

view! {
    Request<'a> {
        "object" => object: Field<Text<'a>>,
    }
}

impl<'a> Text<'a> {
    /// The text of the payload's `request.object`.
    pub(super) fn of_request(payload: &'a str) -> Result<Text<'a>, String> {
        let request = view::parse::<Payload>(payload)?.map(|p| p.request);
        match request {
            Some(Field::Object(Request {
                object: Field::Object(text),
                ..
            })) => Ok(text),
            _ => Ok(Text::default()),
        }
    }

    /// Reads a VM's text; an object or `null`, as the request's reading already found it.
    pub(super) fn read(text: &'a str) -> Result<Text<'a>, String> {
        Ok(view::parse(text)?.unwrap_or_default())
    }

    fn spec(&self) -> Option<&Spec<'a>> {
        self.spec.get()
    }

    /// `spec.template.spec` as written.
    pub(super) fn template_spec(&self) -> Option<&'a str> {
        Some(self.spec()?.template.get()?.spec?.get())
    }

    /// `spec.template.spec` parsed (`null` when absent); an error only past serde_json's nesting
    /// limit, which the first reading, skipping it, does not meet.
    pub(super) fn spec_value(&self) -> Result<Scalar<'a>, String> {
        self.template_spec().map_or(Ok(Scalar::Null), |text| {
            serde_json::from_str(text).map_err(|e| e.to_string())
        })
    }

    /// `metadata.name`.
    pub(super) fn name(&self) -> Option<String> {
        let name = self.metadata.get()?.name.as_ref()?;
        name.as_str().map(str::to_owned)
    }

    /// `spec.updateVolumesStrategy: Migration`.
    pub(super) fn volume_migration(&self) -> bool {
        let strategy = self.spec().and_then(|s| s.update_volumes_strategy.as_ref());
        strategy.and_then(Scalar::as_str) == Some("Migration")
    }

    /// `spec.runStrategy` and `spec.running`, each as JSON (`null` is unset).
    pub(super) fn run_strategy(&self) -> (Option<Scalar<'a>>, Option<Scalar<'a>>) {
        let value = |v: Option<&Scalar<'a>>| v.filter(|v| **v != Scalar::Null).cloned();
        let spec = self.spec();
        (
            value(spec.and_then(|s| s.run_strategy.as_ref())),
            value(spec.and_then(|s| s.running.as_ref())),
        )
    }
}
