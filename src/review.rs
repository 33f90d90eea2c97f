//! What every rule may ask about the request besides the new object: the operation, the settings,
//! and the old object, which is parsed only when a rule first asks for it.

use std::cell::OnceCell;

use serde_json::value::RawValue;

use crate::request::{Operation, parse_object};
use crate::settings::Settings;
use crate::vm::Object;

pub struct Review<'a> {
    pub operation: Operation,
    pub settings: &'a Settings,
    old_raw: Option<&'a RawValue>,
    old: OnceCell<Option<Object>>,
}

impl<'a> Review<'a> {
    pub fn new(
        operation: Operation,
        settings: &'a Settings,
        old_raw: Option<&'a RawValue>,
    ) -> Self {
        Review {
            operation,
            settings,
            old_raw,
            old: OnceCell::new(),
        }
    }

    /// The old object of an UPDATE. `None` on CREATE and on an UPDATE whose `oldObject` is missing
    /// or not an object: such an UPDATE is evaluated as a CREATE (G5).
    pub fn old(&self) -> Option<&Object> {
        if self.operation != Operation::Update {
            return None;
        }
        self.old
            .get_or_init(|| parse_object(self.old_raw).ok().flatten())
            .as_ref()
    }
}
