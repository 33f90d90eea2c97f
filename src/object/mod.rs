//! Reading and writing the request's object: the borrowed views the rules read ([`view`], the
//! VirtualMachine's in [`vm`]) and the mutated object spliced into the request's own text
//! ([`splice`]).

pub(crate) mod splice;
pub(crate) mod view;
pub(crate) mod vm;
