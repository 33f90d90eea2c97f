//! What the live-update rules need of a JSON value (the views' [`Scalar`], so that the module
//! carries no second JSON tree): members by key (the last of duplicates, as a parser keeps),
//! paths, and Kubernetes' semantic equality, under which `null`, absent, `[]` and `{}` are all
//! unset and an object's member order does not count.

use crate::object::view::Scalar;

/// `value[key]`, when `value` is an object.
pub(super) fn get<'v, 'a>(value: &'v Scalar<'a>, key: &str) -> Option<&'v Scalar<'a>> {
    match value {
        Scalar::Object(members) => members.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
        _ => None,
    }
}

/// The value at `path`.
pub(super) fn at<'v, 'a>(value: &'v Scalar<'a>, path: &[&str]) -> Option<&'v Scalar<'a>> {
    path.iter().try_fold(value, |v, key| get(v, key))
}

/// A string member.
pub(super) fn text<'v>(value: &'v Scalar, path: &[&str]) -> Option<&'v str> {
    at(value, path)?.as_str()
}

/// A whole number member.
pub(super) fn number(value: &Scalar, path: &[&str]) -> Option<u64> {
    match at(value, path)? {
        Scalar::Number(n) => n.as_u64(),
        _ => None,
    }
}

/// The items of an array member.
pub(super) fn items<'v, 'a>(value: &'v Scalar<'a>, path: &[&str]) -> &'v [Scalar<'a>] {
    match at(value, path) {
        Some(Scalar::Array(items)) => items,
        _ => &[],
    }
}

/// Sets (or removes, `None`) `path` in `value`, creating objects on the way.
pub(super) fn set<'a>(value: &mut Scalar<'a>, path: &[&str], to: Option<Scalar<'a>>) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    if !matches!(value, Scalar::Object(_)) {
        *value = Scalar::Object(Vec::new());
    }
    let Scalar::Object(members) = value else {
        return;
    };
    if rest.is_empty() {
        members.retain(|(k, _)| k != first);
        members.extend(to.map(|to| ((*first).to_owned(), to)));
        return;
    }
    let index = match members.iter().rposition(|(k, _)| k == first) {
        Some(index) => index,
        None => {
            members.push(((*first).to_owned(), Scalar::Object(Vec::new())));
            members.len() - 1
        }
    };
    if let Some((_, below)) = members.get_mut(index) {
        set(below, rest, to);
    }
}

fn unset(value: Option<&Scalar>) -> bool {
    match value {
        None | Some(Scalar::Null) => true,
        Some(Scalar::Array(items)) => items.is_empty(),
        Some(Scalar::Object(members)) => members.is_empty(),
        _ => false,
    }
}

/// Semantic equality.
pub(super) fn same(a: Option<&Scalar>, b: Option<&Scalar>) -> bool {
    match (a, b) {
        _ if unset(a) && unset(b) => true,
        (Some(Scalar::Object(_)), Some(Scalar::Object(_))) => keys(a)
            .into_iter()
            .chain(keys(b))
            .all(|k| same(a.and_then(|a| get(a, k)), b.and_then(|b| get(b, k)))),
        (Some(Scalar::Array(x)), Some(Scalar::Array(y))) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(Some(x), Some(y)))
        }
        _ => a == b,
    }
}

/// An object's keys, sorted, each once.
fn keys<'v>(value: Option<&'v Scalar>) -> Vec<&'v str> {
    let mut keys: Vec<&str> = match value {
        Some(Scalar::Object(members)) => members.iter().map(|(k, _)| k.as_str()).collect(),
        _ => Vec::new(),
    };
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// The paths (`.`-joined, below where it starts) where `a` and `b` differ: objects member by
/// member, anything else as a whole.
pub(super) fn differing(path: &str, a: Option<&Scalar>, b: Option<&Scalar>, out: &mut Vec<String>) {
    if let (Some(Scalar::Object(_)), Some(Scalar::Object(_))) = (a, b) {
        let mut all = keys(a);
        all.extend(keys(b));
        all.sort_unstable();
        all.dedup();
        for key in all {
            let below = match path {
                "" => key.to_owned(),
                _ => format!("{path}.{key}"),
            };
            differing(
                &below,
                a.and_then(|a| get(a, key)),
                b.and_then(|b| get(b, key)),
                out,
            );
        }
    } else if !same(a, b) {
        out.push(path.to_owned());
    }
}
