//! The decision the rules build up: warnings accumulate, the first rejection wins.

/// Code for a request the policy refuses (docs/rules.md).
pub(crate) const UNPROCESSABLE: u16 = 422;
/// Code for a payload that is not a validation request at all.
pub(crate) const BAD_REQUEST: u16 = 400;
/// Code for a policy whose settings are invalid: the operator's mistake, not the user's.
pub(crate) const MISCONFIGURED: u16 = 500;

#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub(crate) rejection: Option<(String, u16)>,
    pub(crate) warnings: Vec<String>,
}

impl Verdict {
    pub(crate) fn warn(&mut self, warning: String) {
        self.warnings.push(warning);
    }

    /// Rejects with code 422 unless an earlier rule rejected already.
    pub(crate) fn reject(&mut self, message: String) {
        self.rejection.get_or_insert((message, UNPROCESSABLE));
    }
}
