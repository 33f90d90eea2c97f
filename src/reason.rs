//! Why KubeVirt will not live-migrate a VMI: the reason constant KubeVirt names
//! ([`ReasonKind`], v1.9.0 `pkg/virt-handler/vm.go` and `pkg/apis/core/v1` condition reasons)
//! and what in the spec makes it so. `Display` writes `Kind: detail`, the words of every message.

use std::fmt;

/// KubeVirt's reason constants for `LiveMigratable=False`, in its check order, spelled as KubeVirt
/// spells them (v1.9.0 `staging/src/kubevirt.io/api/core/v1/types.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReasonKind {
    InterfaceNotLiveMigratable,
    CPUModeLiveMigratable,
    HostDeviceNotLiveMigratable,
    SEVNotLiveMigratable,
    TDXNotLiveMigratable,
    SecureExecutionNotLiveMigratable,
    PersistentReservationNotLiveMigratable,
    NoTSCFrequencyNotLiveMigratable,
    HypervPassthroughNotLiveMigratable,
    DisksNotLiveMigratable,
}

impl ReasonKind {
    /// The constant as KubeVirt spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonKind::InterfaceNotLiveMigratable => "InterfaceNotLiveMigratable",
            ReasonKind::CPUModeLiveMigratable => "CPUModeLiveMigratable",
            ReasonKind::HostDeviceNotLiveMigratable => "HostDeviceNotLiveMigratable",
            ReasonKind::SEVNotLiveMigratable => "SEVNotLiveMigratable",
            ReasonKind::TDXNotLiveMigratable => "TDXNotLiveMigratable",
            ReasonKind::SecureExecutionNotLiveMigratable => "SecureExecutionNotLiveMigratable",
            ReasonKind::PersistentReservationNotLiveMigratable => {
                "PersistentReservationNotLiveMigratable"
            }
            ReasonKind::NoTSCFrequencyNotLiveMigratable => "NoTSCFrequencyNotLiveMigratable",
            ReasonKind::HypervPassthroughNotLiveMigratable => "HypervPassthroughNotLiveMigratable",
            ReasonKind::DisksNotLiveMigratable => "DisksNotLiveMigratable",
        }
    }
}

impl fmt::Display for ReasonKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One reason: its kind and what it names (`host device nic-vf`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reason {
    pub kind: ReasonKind,
    pub detail: String,
}

impl Reason {
    pub fn new(kind: ReasonKind, detail: impl Into<String>) -> Reason {
        Reason {
            kind,
            detail: detail.into(),
        }
    }

    /// `Kind: detail` appended to `text` (what `Display` writes, without the formatting machinery
    /// in the module).
    fn write_to(&self, text: &mut String) {
        text.push_str(self.kind.as_str());
        text.push_str(": ");
        text.push_str(&self.detail);
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.detail)
    }
}

impl serde::Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The reasons as one text, `separator` between them.
pub fn join(reasons: &[Reason], separator: &str) -> String {
    let mut text = String::new();
    for (at, reason) in reasons.iter().enumerate() {
        if at > 0 {
            text.push_str(separator);
        }
        reason.write_to(&mut text);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_keeps_the_message_words() {
        let cases = [
            (
                Reason::new(
                    ReasonKind::HostDeviceNotLiveMigratable,
                    "host device nic-vf",
                ),
                "HostDeviceNotLiveMigratable: host device nic-vf",
            ),
            (
                Reason::new(ReasonKind::CPUModeLiveMigratable, "host-model CPU"),
                "CPUModeLiveMigratable: host-model CPU",
            ),
            (
                Reason::new(ReasonKind::NoTSCFrequencyNotLiveMigratable, "x"),
                "NoTSCFrequencyNotLiveMigratable: x",
            ),
        ];
        for (reason, text) in &cases {
            assert_eq!(reason.to_string(), *text);
            assert_eq!(serde_json::to_value(reason).ok(), Some((*text).into()));
        }
        let reasons: Vec<Reason> = cases.iter().map(|(r, _)| r.clone()).collect();
        assert_eq!(
            join(&reasons, "; "),
            "HostDeviceNotLiveMigratable: host device nic-vf; CPUModeLiveMigratable: host-model CPU; NoTSCFrequencyNotLiveMigratable: x"
        );
        assert_eq!(join(&[], "; "), "");
    }
}
