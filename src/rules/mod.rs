//! The rules of docs/rules.md, a file per family: the maintenance-mode label (M1, M2, V1–V5,
//! [`labels`]), the eviction strategy (M3, V6, V7, [`eviction`]), migratability as KubeVirt
//! computes it ([`migratability`], on the VMI [`vmi`] builds), the KubeVirt CR (K1–K3,
//! [`kubevirt`]; K4, the label sync, [`label_sync`]), and what an allowed-list check answers ([`allowed`]).

pub(crate) mod allowed;
pub mod eviction;
pub(crate) mod kubevirt;
pub mod label_sync;
pub(crate) mod labels;
pub(crate) mod live_update;
pub mod migratability;
pub(crate) mod vmi;
