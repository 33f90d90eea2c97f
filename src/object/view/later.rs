//! [`Later`]: a member of a view read only when a rule needs it.

use serde_json::value::RawValue;

use super::{AsSlot, Slot, read};

/// A member read only when the rules need it: the first reading keeps its text (delimiting it costs
/// what skipping it costs), and [`Later::load`] reads it as `T`. For what only V7 reads of a VM
/// (its devices, volumes, networks), so that a request V7 does not apply to does not pay for
/// reading them. Until it is loaded there is no value to read: [`Later::read`] is `None`.
#[derive(Debug, Clone)]
pub(crate) enum Later<'a, T> {
    /// Absent, or the member's text, not read yet.
    Kept(Option<&'a RawValue>),
    /// Read (absent: `T`'s default, an absent member's reading).
    Read(T),
}

impl<T> Default for Later<'_, T> {
    fn default() -> Self {
        Later::Kept(None)
    }
}

impl<'a, T: AsSlot<'a> + Default> Later<'a, T> {
    /// The member's slot in the first reading: read at once when `now`, else kept for later.
    pub(crate) fn slot_when(&mut self, now: bool) -> Slot<'_, 'a> {
        if !now {
            return AsSlot::slot(self);
        }
        *self = Later::Read(T::default());
        match self {
            Later::Read(value) => value.slot(),
            Later::Kept(_) => Slot::Skip,
        }
    }

    /// Reads the member (once); an error only for serde_json's nesting limit, as the first
    /// reading delimited the text.
    pub(crate) fn load(&mut self) -> Result<(), String> {
        if let Later::Kept(text) = *self {
            let mut value = T::default();
            if let Some(text) = text {
                read(text.get(), value.slot())?;
            }
            *self = Later::Read(value);
        }
        Ok(())
    }
}

impl<T> Later<'_, T> {
    /// The member as read; `None` until [`Later::load`].
    pub(crate) fn read(&self) -> Option<&T> {
        match self {
            Later::Read(value) => Some(value),
            Later::Kept(_) => None,
        }
    }
}

impl<'a, T> AsSlot<'a> for Later<'a, T> {
    fn slot(&mut self) -> Slot<'_, 'a> {
        // A repeated key starts over: the last one counts.
        *self = Later::Kept(None);
        match self {
            Later::Kept(text) => Slot::Raw(text),
            Later::Read(_) => Slot::Skip,
        }
    }
}
