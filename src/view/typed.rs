//! Typed members for owned structs (the settings, the KubeVirt configuration): each member is read
//! as its type or refused with serde's own message (`invalid type: string "yes", expected a
//! boolean`), through the same type-erased reader as the views, so the module carries no serde
//! code per struct. [`members!`] declares a struct's members; `strict` ones refuse unknown keys
//! (`unknown field ...`). The reader remembers where it failed: [`trail`] names the member
//! (`kubevirt.configuration.permittedHostDevices.mediatedDevices[0].resourceName`).

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;

use serde::de::{Error, IgnoredAny, MapAccess, SeqAccess, Unexpected, Visitor};

use super::{AsSlot, Key, Members, Slot};

/// A typed member as the reader fills it.
pub(crate) enum Typed<'s, 'a> {
    Bool(&'s mut bool),
    /// Borrowed from the text unless it has escapes.
    Text(&'s mut Cow<'a, str>),
    /// An owned struct's text (a default of its own borrowed, a value read an owned copy).
    Owned(&'s mut Cow<'static, str>),
    /// `null` reads as `None`.
    OptText(&'s mut Option<String>),
    /// An owned struct's list of texts, as [`Typed::Owned`].
    Texts(&'s mut Cow<'static, [Cow<'static, str>]>),
    OptTexts(&'s mut Option<Vec<String>>),
    OptInt(&'s mut Option<i64>),
    /// Any value but `null` (its content skipped).
    Present(&'s mut Option<IgnoredAny>),
    Choice(&'s mut dyn Choose),
    Object(&'s mut dyn Shape<'a>),
    Objects(&'s mut dyn Elements<'a>),
    Entries(&'s mut dyn Entries<'a>),
}

/// A unit enum read from its name (serde's `unknown variant` for another).
pub(crate) trait Choose {
    fn variants(&self) -> &'static [&'static str];
    fn choose(&mut self, index: usize);
}

/// What an error names when a struct meets another JSON type (`struct Settings`).
pub(crate) trait Named {
    const EXPECTING: &'static str;
}

/// A struct member: `T` refuses `null`, `Option<T>` reads it as `None`.
pub(crate) trait Shape<'a> {
    fn expecting(&self) -> &'static str;
    /// Whether `null` is accepted (as `None`).
    fn nullable(&self) -> bool;
    /// `null`: whether it is accepted.
    fn null(&mut self) -> bool;
    /// An object: where its members go (a repeated key reads over the same struct).
    fn object(&mut self) -> &mut dyn Members<'a>;
}

impl<'a, T: Members<'a> + Named> Shape<'a> for T {
    fn expecting(&self) -> &'static str {
        T::EXPECTING
    }
    fn nullable(&self) -> bool {
        false
    }
    fn null(&mut self) -> bool {
        false
    }
    fn object(&mut self) -> &mut dyn Members<'a> {
        self
    }
}

impl<'a, T: Members<'a> + Named + Default> Shape<'a> for Option<T> {
    fn expecting(&self) -> &'static str {
        T::EXPECTING
    }
    fn nullable(&self) -> bool {
        true
    }
    fn null(&mut self) -> bool {
        *self = None;
        true
    }
    fn object(&mut self) -> &mut dyn Members<'a> {
        self.insert(T::default())
    }
}

/// `Option<Vec<T>>` of structs.
pub(crate) trait Elements<'a> {
    fn expecting(&self) -> &'static str;
    fn start(&mut self, present: bool);
    fn push(&mut self) -> &mut dyn Members<'a>;
}

impl<'a, T: Members<'a> + Named + Default> Elements<'a> for Option<Vec<T>> {
    fn expecting(&self) -> &'static str {
        T::EXPECTING
    }
    fn start(&mut self, present: bool) {
        *self = present.then(Vec::new);
    }
    fn push(&mut self) -> &mut dyn Members<'a> {
        let items = self.get_or_insert_with(Vec::new);
        items.push(T::default());
        let last = items.len() - 1;
        &mut items[last]
    }
}

/// `Option<Keyed<T>>` of structs ([`Keyed`]).
pub(crate) trait Entries<'a> {
    fn expecting(&self) -> &'static str;
    fn start(&mut self, present: bool);
    fn entry(&mut self, key: String) -> &mut dyn Members<'a>;
}

macro_rules! typed_slot {
    ($($ty:ty => $variant:ident,)*) => {
        $(impl<'a> AsSlot<'a> for $ty {
            fn slot(&mut self) -> Slot<'_, 'a> {
                Slot::Typed(Typed::$variant(self))
            }
        })*
    };
}

typed_slot! {
    bool => Bool,
    Cow<'static, str> => Owned,
    Cow<'static, [Cow<'static, str>]> => Texts,
    Option<String> => OptText,
    Option<Vec<String>> => OptTexts,
    Option<i64> => OptInt,
    Option<IgnoredAny> => Present,
}

impl<'a, T: Members<'a> + Named + Default> AsSlot<'a> for Option<Vec<T>> {
    fn slot(&mut self) -> Slot<'_, 'a> {
        Slot::Typed(Typed::Objects(self))
    }
}

/// Declares the members of an owned struct (`"key" => field`, each field an [`AsSlot`]): other
/// keys are skipped, or refused with serde's `unknown field` message after `strict`; a member given
/// twice is refused (serde's `duplicate field`), as serde's derive refused it. Also makes
/// the struct a typed member of another ([`Named`]: `expecting` is what an error says it wanted).
macro_rules! members {
    ($name:ident ($expecting:literal) $($strict:ident)? { $($key:literal => $field:ident,)* }) => {
        impl<'a> $crate::view::Members<'a> for $name {
            fn slot(&mut self, key: &::std::borrow::Cow<'a, str>) -> $crate::view::Slot<'_, 'a> {
                match key.as_ref() {
                    $($key => $crate::view::AsSlot::slot(&mut self.$field),)*
                    _ => $crate::view::typed::members!(@unknown $($strict)? [$($key),*]),
                }
            }
            fn once(&self) -> Option<&'static [&'static str]> {
                Some(&[$($key),*])
            }
        }
        impl $crate::view::typed::Named for $name {
            const EXPECTING: &'static str = $expecting;
        }
        impl<'a> $crate::view::AsSlot<'a> for $name {
            fn slot(&mut self) -> $crate::view::Slot<'_, 'a> {
                $crate::view::Slot::Typed($crate::view::typed::Typed::Object(self))
            }
        }
        impl<'a> $crate::view::AsSlot<'a> for Option<$name> {
            fn slot(&mut self) -> $crate::view::Slot<'_, 'a> {
                $crate::view::Slot::Typed($crate::view::typed::Typed::Object(self))
            }
        }
    };
    (@unknown strict [$($key:literal),*]) => { $crate::view::Slot::Unknown(&[$($key),*]) };
    (@unknown [$($key:literal),*]) => { $crate::view::Slot::Skip };

}
pub(crate) use members;

/// Declares a unit enum's names (`"name" => Variant`) and makes it a typed member.
macro_rules! choice {
    ($name:ident { $($key:literal => $variant:ident,)* }) => {
        impl $crate::view::typed::Choose for $name {
            fn variants(&self) -> &'static [&'static str] {
                &[$($key),*]
            }
            fn choose(&mut self, index: usize) {
                const ALL: &[$name] = &[$($name::$variant),*];
                if let Some(value) = ALL.get(index) {
                    *self = *value;
                }
            }
        }
        impl<'a> $crate::view::AsSlot<'a> for $name {
            fn slot(&mut self) -> $crate::view::Slot<'_, 'a> {
                $crate::view::Slot::Typed($crate::view::typed::Typed::Choice(self))
            }
        }
    };
}
pub(crate) use choice;

/// One step of the way to a member that failed to read.
enum Step {
    Key(String),
    Index(usize),
}

thread_local! {
    /// The steps to the member that failed, innermost first (written only as an error unwinds).
    static TRAIL: RefCell<Vec<Step>> = const { RefCell::new(Vec::new()) };
}

/// Notes that the error unwinding passes through the member `key`.
#[cold]
pub(super) fn passed_key(key: &str) {
    TRAIL.with_borrow_mut(|trail| trail.push(Step::Key(key.to_owned())));
}

/// Notes that the error unwinding passes through the element `index`.
#[cold]
pub(super) fn passed_index(index: usize) {
    TRAIL.with_borrow_mut(|trail| trail.push(Step::Index(index)));
}

/// Forgets the trail of an earlier read.
pub(super) fn clear_trail() {
    TRAIL.with_borrow_mut(Vec::clear);
}

/// Where the last read failed, as serde_path_to_error writes a path (`a.b[0].c`; `.` for the
/// top), and forgets it.
pub(crate) fn trail() -> String {
    let steps = TRAIL.with_borrow_mut(std::mem::take);
    if steps.is_empty() {
        return ".".to_owned();
    }
    let mut path = String::new();
    for step in steps.iter().rev() {
        match step {
            Step::Key(key) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Step::Index(index) => {
                path.push('[');
                path.push_str(&index.to_string());
                path.push(']');
            }
        }
    }
    path
}

/// The JSON type of a value other than a string, number or boolean, as serde names it.
fn unexpected<'u>(kind: &Met<'u>) -> Unexpected<'u> {
    match *kind {
        Met::Null => Unexpected::Unit,
        Met::Bool(b) => Unexpected::Bool(b),
        Met::Signed(i) => Unexpected::Signed(i),
        Met::Unsigned(u) => Unexpected::Unsigned(u),
        Met::Float(f) => Unexpected::Float(f),
        Met::Str(s) => Unexpected::Str(s),
        Met::Seq => Unexpected::Seq,
        Met::Map => Unexpected::Map,
    }
}

/// What the reader met where a typed member was expected.
enum Met<'u> {
    Null,
    Bool(bool),
    Signed(i64),
    Unsigned(u64),
    Float(f64),
    Str(&'u str),
    Seq,
    Map,
}

/// What a unit enum expects, as serde's `unknown variant` message lists it: one of `a`, `b`.
struct OneOf(&'static [&'static str]);

impl serde::de::Expected for OneOf {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("one of ")?;
        for (index, name) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            write!(f, "`{name}`")?;
        }
        Ok(())
    }
}

/// Reads one typed member.
pub(super) struct TypedVisitor<'s, 'a>(pub(super) Typed<'s, 'a>);

impl<'a> TypedVisitor<'_, 'a> {
    fn expecting_text(&self) -> &'static str {
        match &self.0 {
            Typed::Bool(_) => "a boolean",
            Typed::Text(_) | Typed::Owned(_) | Typed::OptText(_) => "a string",
            Typed::Texts(_) | Typed::OptTexts(_) | Typed::Objects(_) => "a sequence",
            Typed::OptInt(_) => "i64",
            Typed::Present(_) => "any value",
            Typed::Choice(_) => "a name",
            Typed::Object(shape) => shape.expecting(),
            Typed::Entries(_) => "a map",
        }
    }

    /// A scalar value (or `null`): stored when it fits, else serde's `invalid type`.
    fn scalar<E: Error>(self, met: Met) -> Result<(), E> {
        let typed = match (self.0, &met) {
            (Typed::Object(shape), Met::Null) => {
                if shape.null() {
                    return Ok(());
                }
                Typed::Object(shape)
            }
            (typed, _) => typed,
        };
        match (typed, met) {
            (Typed::Bool(slot), Met::Bool(b)) => *slot = b,
            (Typed::Text(slot), Met::Str(s)) => *slot = Cow::Owned(s.to_owned()),
            (Typed::Owned(slot), Met::Str(s)) => *slot = Cow::Owned(s.to_owned()),
            (Typed::OptText(slot), Met::Str(s)) => *slot = Some(s.to_owned()),
            (Typed::OptText(slot), Met::Null) => *slot = None,
            (Typed::OptTexts(slot), Met::Null) => *slot = None,
            (Typed::OptInt(slot), Met::Null) => *slot = None,
            (Typed::OptInt(slot), Met::Signed(i)) => *slot = Some(i),
            (Typed::OptInt(slot), Met::Unsigned(u)) => match i64::try_from(u) {
                Ok(i) => *slot = Some(i),
                Err(_) => return Err(E::invalid_value(Unexpected::Unsigned(u), &"i64")),
            },
            (Typed::Present(slot), Met::Null) => *slot = None,
            (Typed::Present(slot), _) => *slot = Some(IgnoredAny),
            (Typed::Objects(slot), Met::Null) => slot.start(false),
            (Typed::Entries(slot), Met::Null) => slot.start(false),
            (Typed::Choice(slot), Met::Str(s)) => {
                let variants = slot.variants();
                match variants.iter().position(|v| *v == s) {
                    Some(index) => slot.choose(index),
                    None => return Err(E::unknown_variant(s, variants)),
                }
            }
            (Typed::Choice(slot), met) => {
                return Err(E::invalid_type(unexpected(&met), &OneOf(slot.variants())));
            }
            (visitor, met) => {
                let expected = TypedVisitor(visitor).expecting_text();
                return Err(E::invalid_type(unexpected(&met), &expected));
            }
        }
        Ok(())
    }
}

impl<'a> Visitor<'a> for TypedVisitor<'_, 'a> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match &self.0 {
            Typed::Choice(choice) => serde::de::Expected::fmt(&OneOf(choice.variants()), f),
            _ => f.write_str(self.expecting_text()),
        }
    }
    fn visit_some<D: serde::Deserializer<'a>>(self, deserializer: D) -> Result<(), D::Error> {
        inner(deserializer, self)
    }
    fn visit_unit<E: Error>(self) -> Result<(), E> {
        self.scalar(Met::Null)
    }
    fn visit_none<E: Error>(self) -> Result<(), E> {
        self.scalar(Met::Null)
    }
    fn visit_bool<E: Error>(self, v: bool) -> Result<(), E> {
        self.scalar(Met::Bool(v))
    }
    fn visit_i64<E: Error>(self, v: i64) -> Result<(), E> {
        self.scalar(Met::Signed(v))
    }
    fn visit_u64<E: Error>(self, v: u64) -> Result<(), E> {
        self.scalar(Met::Unsigned(v))
    }
    fn visit_f64<E: Error>(self, v: f64) -> Result<(), E> {
        self.scalar(Met::Float(v))
    }
    fn visit_str<E: Error>(self, v: &str) -> Result<(), E> {
        self.scalar(Met::Str(v))
    }
    fn visit_borrowed_str<E: Error>(self, v: &'a str) -> Result<(), E> {
        match self.0 {
            Typed::Text(slot) => {
                *slot = Cow::Borrowed(v);
                Ok(())
            }
            other => TypedVisitor(other).scalar(Met::Str(v)),
        }
    }
    fn visit_seq<S: SeqAccess<'a>>(self, mut seq: S) -> Result<(), S::Error> {
        let mut index = 0;
        // Each text to `push`, an error noting the element it unwinds through.
        let mut texts = |seq: &mut S, push: &mut dyn FnMut(String)| -> Result<(), S::Error> {
            loop {
                match seq.next_element::<String>() {
                    Ok(Some(text)) => push(text),
                    Ok(None) => return Ok(()),
                    Err(e) => {
                        passed_index(index);
                        return Err(e);
                    }
                }
                index += 1;
            }
        };
        match self.0 {
            Typed::Texts(slot) => {
                let mut list = Vec::new();
                texts(&mut seq, &mut |text| list.push(Cow::Owned(text)))?;
                *slot = Cow::Owned(list);
            }
            Typed::OptTexts(slot) => {
                let mut list = Vec::new();
                texts(&mut seq, &mut |text| list.push(text))?;
                *slot = Some(list);
            }
            Typed::Objects(slot) => {
                slot.start(true);
                loop {
                    let element = ObjectSeed(Typed::Object(&mut Element(&mut *slot)));
                    match seq.next_element_seed(element) {
                        Ok(Some(())) => index += 1,
                        Ok(None) => break,
                        Err(e) => {
                            passed_index(index);
                            return Err(e);
                        }
                    }
                }
            }
            other => return TypedVisitor(other).scalar(Met::Seq),
        }
        Ok(())
    }
    fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<(), M::Error> {
        match self.0 {
            Typed::Object(shape) => super::read_members(shape.object(), map),
            Typed::Entries(entries) => {
                entries.start(true);
                while let Some(Key::<true>(key)) = map.next_key()? {
                    let name = key.to_string();
                    let mut entry = Entry(&mut *entries, Some(key.into_owned()));
                    if let Err(e) = map.next_value_seed(ObjectSeed(Typed::Object(&mut entry))) {
                        passed_key(&name);
                        return Err(e);
                    }
                }
                Ok(())
            }
            other => TypedVisitor(other).scalar(Met::Map),
        }
    }
}

/// Reads a typed member, out of line (the views' reading of a VM does not grow with it). Each
/// type asks serde_json for what serde's derive asked (`deserialize_bool`, `deserialize_option`,
/// ...), so that a value of another type is refused where serde refused it, at the same position.
#[inline(never)]
pub(super) fn read<'a, D: serde::Deserializer<'a>>(
    deserializer: D,
    typed: Typed<'_, 'a>,
) -> Result<(), D::Error> {
    let visitor = TypedVisitor(typed);
    match &visitor.0 {
        Typed::OptText(_)
        | Typed::OptTexts(_)
        | Typed::OptInt(_)
        | Typed::Present(_)
        | Typed::Objects(_)
        | Typed::Entries(_) => deserializer.deserialize_option(visitor),
        Typed::Object(shape) if shape.nullable() => deserializer.deserialize_option(visitor),
        _ => inner(deserializer, visitor),
    }
}

/// Keeps a member as raw JSON text, out of line like [`read`].
#[inline(never)]
pub(super) fn read_raw<'a, D: serde::Deserializer<'a>>(
    deserializer: D,
    slot: &mut Option<&'a serde_json::value::RawValue>,
) -> Result<(), D::Error> {
    *slot = Some(serde::Deserialize::deserialize(deserializer)?);
    Ok(())
}

/// A member's value once it is known not to be `null` where `null` is allowed.
fn inner<'a, D: serde::Deserializer<'a>>(
    deserializer: D,
    visitor: TypedVisitor<'_, 'a>,
) -> Result<(), D::Error> {
    let v = |typed| TypedVisitor(typed);
    match visitor.0 {
        Typed::Bool(slot) => deserializer.deserialize_bool(v(Typed::Bool(slot))),
        Typed::Text(slot) => deserializer.deserialize_str(v(Typed::Text(slot))),
        Typed::Owned(slot) => deserializer.deserialize_str(v(Typed::Owned(slot))),
        Typed::OptText(slot) => deserializer.deserialize_str(v(Typed::OptText(slot))),
        Typed::Choice(slot) => deserializer.deserialize_str(v(Typed::Choice(slot))),
        Typed::Texts(slot) => deserializer.deserialize_seq(v(Typed::Texts(slot))),
        Typed::OptTexts(slot) => deserializer.deserialize_seq(v(Typed::OptTexts(slot))),
        Typed::Objects(slot) => deserializer.deserialize_seq(v(Typed::Objects(slot))),
        Typed::OptInt(slot) => deserializer.deserialize_i64(v(Typed::OptInt(slot))),
        Typed::Object(slot) => deserializer.deserialize_map(v(Typed::Object(slot))),
        Typed::Entries(slot) => deserializer.deserialize_map(v(Typed::Entries(slot))),
        Typed::Present(slot) => deserializer.deserialize_ignored_any(Skipped(slot)),
    }
}

/// A value that is present (not `null`), its content skipped: serde_json skips it, then says
/// `unit`.
struct Skipped<'s>(&'s mut Option<IgnoredAny>);

impl<'a> Visitor<'a> for Skipped<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_unit<E: Error>(self) -> Result<(), E> {
        *self.0 = Some(IgnoredAny);
        Ok(())
    }
}

/// A typed member read from its own deserializer (list elements, map entries).
struct ObjectSeed<'s, 'a>(Typed<'s, 'a>);

impl<'a> serde::de::DeserializeSeed<'a> for ObjectSeed<'_, 'a> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'a>>(self, deserializer: D) -> Result<(), D::Error> {
        inner(deserializer, TypedVisitor(self.0))
    }
}

/// The next element of an [`Elements`], as a struct that refuses `null`.
struct Element<'s, 'a>(&'s mut dyn Elements<'a>);

impl<'a> Shape<'a> for Element<'_, 'a> {
    fn expecting(&self) -> &'static str {
        self.0.expecting()
    }
    fn nullable(&self) -> bool {
        false
    }
    fn null(&mut self) -> bool {
        false
    }
    fn object(&mut self) -> &mut dyn Members<'a> {
        self.0.push()
    }
}

/// The entry `key` of an [`Entries`], as a struct that refuses `null`.
struct Entry<'s, 'a>(&'s mut dyn Entries<'a>, Option<String>);

impl<'a> Shape<'a> for Entry<'_, 'a> {
    fn expecting(&self) -> &'static str {
        self.0.expecting()
    }
    fn nullable(&self) -> bool {
        false
    }
    fn null(&mut self) -> bool {
        false
    }
    fn object(&mut self) -> &mut dyn Members<'a> {
        let key = self.1.take().unwrap_or_default();
        self.0.entry(key)
    }
}

/// Reads `bytes` (one JSON value, UTF-8) as `T`: `Ok(None)` for `null`. The error is
/// serde_json's, with the position; [`trail`] then names the member.
pub(crate) fn parse<'a, T>(bytes: &'a [u8]) -> Result<Option<T>, serde_json::Error>
where
    T: Members<'a> + Named + Default,
{
    let text = std::str::from_utf8(bytes).map_err(|e| {
        clear_trail();
        serde_json::Error::custom(format_args!("not UTF-8: {e}"))
    })?;
    let mut value: Option<T> = None;
    super::read_text(text, Slot::Typed(Typed::Object(&mut value)))?;
    Ok(value)
}
