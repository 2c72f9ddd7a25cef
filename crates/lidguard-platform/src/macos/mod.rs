//! macOS calls behind the platform traits (type-checked here; see the README for what has run
//! on a Mac).

pub(crate) mod displays;
pub(crate) mod iokit;
