//! [`Keyed`]: objects by name, as the typed structs read a JSON object of structs.

use std::fmt;

use super::typed::{Entries, Named, Typed};
use super::{AsSlot, Members, Slot};

/// Objects by name (a JSON object of structs), sorted by name; a name given twice keeps the
/// last (as a map keeps it). A sorted list rather than a `BTreeMap`: one map type fewer in the
/// module (the `Value` tree's is the other), for a handful of entries.
#[derive(Clone, PartialEq, Default)]
pub struct Keyed<T>(Vec<(String, T)>);

impl<T> Keyed<T> {
    /// The entry named `name`.
    pub fn get(&self, name: &str) -> Option<&T> {
        self.0
            .binary_search_by(|(key, _)| key.as_str().cmp(name))
            .ok()
            .map(|at| &self.0[at].1)
    }

    /// The entries, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.0.iter().map(|(key, value)| (key.as_str(), value))
    }
}

/// As a map: `{"name": entry, ...}`.
impl<T: fmt::Debug> fmt::Debug for Keyed<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<'a, T: Members<'a> + Named + Default> Entries<'a> for Option<Keyed<T>> {
    fn expecting(&self) -> &'static str {
        T::EXPECTING
    }
    fn start(&mut self, present: bool) {
        *self = present.then(Keyed::default);
    }
    fn entry(&mut self, key: String) -> &mut dyn Members<'a> {
        let entries = &mut self.get_or_insert_with(Keyed::default).0;
        let at = match entries.binary_search_by(|(name, _)| name.cmp(&key)) {
            Ok(at) => {
                entries[at].1 = T::default();
                at
            }
            Err(at) => {
                entries.insert(at, (key, T::default()));
                at
            }
        };
        &mut entries[at].1
    }
}

impl<'a, T: Members<'a> + Named + Default> AsSlot<'a> for Option<Keyed<T>> {
    fn slot(&mut self) -> Slot<'_, 'a> {
        Slot::Typed(Typed::Entries(self))
    }
}
