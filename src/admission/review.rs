//! What every rule may ask about the request besides the new object: the operation, the settings,
//! the namespace, the old object (parsed only when a rule first asks for it) and the cluster
//! (each lookup made only when a rule first asks for it).

use std::cell::OnceCell;

use serde_json::value::RawValue;

use crate::admission::request::Operation;
use crate::cluster::{Cluster, Lookups};
use crate::object::view::{self, Scalar};
use crate::object::vm::Vm;
use crate::settings::Settings;

pub(crate) struct Review<'a> {
    pub(crate) operation: Operation,
    pub(crate) settings: &'a Settings,
    /// The request's namespace (the object's `metadata.namespace` when the request names none).
    pub(crate) namespace: Option<&'a str>,
    pub(crate) cluster: Lookups<'a>,
    /// The payload's text (its `request.object` as sent) and the request's `oldObject`.
    payload: &'a str,
    old_raw: Option<&'a RawValue>,
    old: OnceCell<Option<Vm<'a>>>,
}

impl<'a> Review<'a> {
    pub(crate) fn new(
        operation: Operation,
        settings: &'a Settings,
        namespace: Option<&'a str>,
        cluster: &'a dyn Cluster,
        payload: &'a str,
        old_raw: Option<&'a RawValue>,
    ) -> Self {
        Review {
            operation,
            settings,
            namespace: namespace.filter(|ns| !ns.is_empty()),
            cluster: Lookups::new(cluster),
            payload,
            old_raw,
            old: OnceCell::new(),
        }
    }

    /// The old object of an UPDATE. `None` on CREATE and on an UPDATE whose `oldObject` is missing
    /// or not an object: such an UPDATE is evaluated as a CREATE (G5).
    pub(crate) fn old(&self) -> Option<&Vm<'a>> {
        if self.operation != Operation::Update {
            return None;
        }
        self.old
            .get_or_init(|| {
                let raw = self.old_raw?;
                view::parse(raw.get()).ok().flatten()
            })
            .as_ref()
    }

    /// The payload's text, for a rule that reads `request.object` as written (the pipeline read
    /// it as a view, in the payload's pass).
    pub(crate) fn payload(&self) -> &'a str {
        self.payload
    }

    /// The text of the old object, on an UPDATE that has one.
    pub(crate) fn old_text(&self) -> Option<&'a str> {
        let old = self.old_raw.filter(|_| self.operation == Operation::Update);
        old.map(RawValue::get)
    }

    /// `old.metadata.labels[key]`.
    pub(crate) fn old_label(&self, key: &str) -> Option<&Scalar<'a>> {
        self.old()?.label(key)
    }

    /// `old.spec.template.metadata.labels[key]`.
    pub(crate) fn old_template_label(&self, key: &str) -> Option<&Scalar<'a>> {
        self.old()?.template_label(key)
    }

    /// `old.spec.template.spec.evictionStrategy`.
    pub(crate) fn old_eviction_strategy(&self) -> Option<&Scalar<'a>> {
        self.old()?.eviction_strategy()
    }
}
