//! The input of every command: the objects read from files (`files.rs`) or listed from the live
//! cluster (`live.rs`), held as text until a command parses the objects of some VMs at a time
//! (`store.rs`, keeping what `head.rs` reads of each) into one [`Slice`] (`slice.rs`); the slice as the cluster the policy's
//! assessment reads (`cluster.rs`); and the policy settings the commands are given
//! (`settings.rs`).

pub mod cluster;
pub mod files;
mod head;
mod kinds;
pub mod live;
pub mod node;
pub mod settings;
pub mod slice;
pub mod store;

pub use files::{Source, read_sources};
pub use slice::Slice;
pub use store::Store;
