//! Windows-only OS calls behind the platform-neutral functions of this crate.

pub(crate) mod displays;
pub(crate) mod powrprof;
pub(crate) mod process;
pub(crate) mod thermal;
