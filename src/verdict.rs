//! The decision the rules build up: warnings accumulate, the first rejection wins.

/// Code for a request the policy refuses (SPEC §3).
pub const UNPROCESSABLE: u16 = 422;
/// Code for a payload that is not a validation request at all.
pub const BAD_REQUEST: u16 = 400;
/// Code for a policy whose settings are invalid: the operator's mistake, not the user's.
pub const MISCONFIGURED: u16 = 500;

#[derive(Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    pub rejection: Option<(String, u16)>,
    pub warnings: Vec<String>,
}

impl Verdict {
    pub fn warn(&mut self, warning: String) {
        self.warnings.push(warning);
    }

    /// Rejects with code 422 unless an earlier rule rejected already.
    pub fn reject(&mut self, message: String) {
        self.rejection.get_or_insert((message, UNPROCESSABLE));
    }

    pub fn is_rejected(&self) -> bool {
        self.rejection.is_some()
    }
}
