//! [`Later`]: a member of a view read only when a rule needs it.

use std::ops::Deref;

use serde_json::value::RawValue;

use super::{AsSlot, Slot, read};

/// A member read only when the rules need it: the one pass keeps its text (delimiting it costs
/// what skipping it costs), and [`Later::load`] reads it as `T`. For what only V7 reads of a VM
/// (its devices, volumes, networks), so that a request V7 does not apply to does not pay for
/// reading them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Later<'a, T> {
    text: Option<&'a RawValue>,
    value: T,
    loaded: bool,
}

impl<'a, T: AsSlot<'a> + Default> Later<'a, T> {
    /// The member's slot in the one pass: read at once when `now`, else kept for later.
    pub(crate) fn slot_when(&mut self, now: bool) -> Slot<'_, 'a> {
        if !now {
            return AsSlot::slot(self);
        }
        self.text = None;
        self.loaded = true;
        self.value = T::default();
        self.value.slot()
    }

    /// Reads the member (once); an error only for serde_json's nesting limit, as the one pass
    /// delimited the text.
    pub(crate) fn load(&mut self) -> Result<(), String> {
        load(&mut self.loaded, self.text, self.value.slot())
    }
}

/// [`Later::load`], whatever the type.
#[inline(never)]
fn load<'a>(
    loaded: &mut bool,
    text: Option<&'a RawValue>,
    slot: Slot<'_, 'a>,
) -> Result<(), String> {
    match (std::mem::replace(loaded, true), text) {
        (false, Some(text)) => read(text.get(), slot),
        _ => Ok(()),
    }
}

impl<T> Deref for Later<'_, T> {
    type Target = T;
    /// The member as read, `T`'s default until [`Later::load`].
    fn deref(&self) -> &T {
        debug_assert!(
            self.loaded || self.text.is_none(),
            "a member read before it was loaded"
        );
        &self.value
    }
}

impl<'a, T: Default> AsSlot<'a> for Later<'a, T> {
    fn slot(&mut self) -> Slot<'_, 'a> {
        // A repeated key starts over: the last one counts.
        self.value = T::default();
        self.loaded = false;
        Slot::Raw(&mut self.text)
    }
}
