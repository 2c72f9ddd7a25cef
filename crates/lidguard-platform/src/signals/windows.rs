//! On Windows Ctrl-C reaches every process of the console, the command included.

/// Forwards nothing: the console already reaches the command.
pub struct Forwarder;

impl Forwarder {
    /// Nothing to install.
    pub fn install() -> Forwarder {
        Forwarder
    }

    /// Nothing to pass on.
    pub fn to(&self, _pid: u32) {}

    /// Nothing comes.
    pub fn on_signal_leave(&self, _leave: Box<dyn FnOnce() + Send>) {}

    /// Never.
    pub fn signalled(&self) -> bool {
        false
    }
}

/// No process ends by a signal here.
pub fn killed_by(_status: &std::process::ExitStatus) -> Option<i32> {
    None
}
