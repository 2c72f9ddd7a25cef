//! One process, as an ancestry lists it.

/// One process in a hook's ancestry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Its pid.
    pub pid: u32,
    /// Its parent's pid (0 when unknown).
    pub ppid: u32,
    /// The short name (`/proc/<pid>/comm`; the kernel truncates it to 15 bytes).
    pub name: String,
    /// The command line, arguments joined by spaces.
    pub cmdline: String,
}
