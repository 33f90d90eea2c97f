//! The admission plumbing: the `validate` payload as far as routing needs it, what a rule is
//! given to read (the settings, the cluster, the old object), the verdict the rules build, and
//! Kubewarden's answer bytes.

pub(crate) mod request;
pub(crate) mod response;
pub(crate) mod review;
pub(crate) mod verdict;
