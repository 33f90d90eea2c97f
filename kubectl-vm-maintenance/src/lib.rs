//! `kubectl vm-maintenance`, by role:
//! - [`input`]: the objects read from files or the live cluster, held as text ([`input::store`])
//!   until a command parses one [`input::Slice`] of them; the slice as the cluster the policy's
//!   assessment reads; the settings file.
//! - [`running`]: what runs and what lags behind it: a running VM judged by its VMI, what its
//!   objects carry against its VM ([`running::staleness`]), whether the KubeVirt CR syncs the
//!   label ([`running::label_sync`]).
//! - a folder per command, owning its rows and its table: [`drain`], [`maintenance`],
//!   [`upgrade`], [`status`] (a drain in progress diagnosed), and [`sync`] with its writes
//!   ([`sync::send`]).
//! - [`output`]: what every table shares (`kubectl get`'s columns, wrapping, `-o json|yaml`).
//! - [`context`]: the invocation resolved once (layout, settings, notes, exit codes).

pub mod context;
pub mod drain;
pub mod input;
pub mod maintenance;
pub mod output;
pub mod running;
pub mod status;
pub mod sync;
pub mod upgrade;
