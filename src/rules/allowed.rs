//! The rule V2/V3, V6 and K1 share: a value must be one of a configured list, unless an UPDATE
//! keeps the old object's value unchanged (so controllers can still operate old objects).

use crate::object::view::Scalar;

/// How a value stands against its allowed list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Allowance {
    /// A string listed in the allowed list (exact, case-sensitive).
    Allowed,
    /// Not allowed, but the UPDATE keeps the old object's value unchanged.
    Kept,
    /// Not allowed.
    Refused,
}

/// Checks `value` against `allowed`. `old` gives the old object's value at the same path; it is
/// asked only for a value that is not allowed, so the old object is parsed only then. Rules
/// without grandfathering pass `|| None`.
pub(crate) fn allowance<'o>(
    value: &Scalar,
    allowed: &[crate::settings::Text],
    old: impl FnOnce() -> Option<&'o Scalar<'o>>,
) -> Allowance {
    if value
        .as_str()
        .is_some_and(|v| allowed.iter().any(|a| a == v))
    {
        Allowance::Allowed
    } else if old().is_some_and(|old| old == value) {
        Allowance::Kept
    } else {
        Allowance::Refused
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// A value against `Migrate, Shutdown`, with the old object's value (`None`: a CREATE).
    #[rstest]
    #[case::allowed(r#""Migrate""#, None, Allowance::Allowed)]
    #[case::allowed_whatever_the_old_value(r#""Migrate""#, Some(r#""x""#), Allowance::Allowed)]
    #[case::unknown_on_create(r#""migrate""#, None, Allowance::Refused)]
    #[case::unknown_replacing_a_valid_one(r#""migrate""#, Some(r#""Migrate""#), Allowance::Refused)]
    #[case::unknown_kept_unchanged(r#""migrate""#, Some(r#""migrate""#), Allowance::Kept)]
    #[case::escaped_kept_unchanged(r#""migr\u0061te""#, Some(r#""migrate""#), Allowance::Kept)]
    #[case::non_string_kept_unchanged("1", Some("1"), Allowance::Kept)]
    #[case::non_string_written_otherwise("1.0", Some("1"), Allowance::Refused)]
    #[case::non_string_on_create("1", None, Allowance::Refused)]
    #[case::null_on_create("null", None, Allowance::Refused)]
    fn allowed_kept_refused(
        #[case] value: &str,
        #[case] old: Option<&str>,
        #[case] want: Allowance,
    ) -> serde_json::Result<()> {
        let allowed = ["Migrate".into(), "Shutdown".into()];
        let value: Scalar = serde_json::from_str(value)?;
        let old: Option<Scalar> = old.map(serde_json::from_str).transpose()?;
        assert_eq!(allowance(&value, &allowed, || old.as_ref()), want);
        Ok(())
    }

    #[test]
    fn old_is_not_asked_for_an_allowed_value() {
        let allowed = ["Migrate".into()];
        let asked = std::cell::Cell::new(false);
        let got = allowance(&Scalar::str("Migrate"), &allowed, || {
            asked.set(true);
            None
        });
        assert_eq!(got, Allowance::Allowed);
        assert!(!asked.get(), "the old object must not be read");
    }
}
