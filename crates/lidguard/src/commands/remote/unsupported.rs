//! The far side where there are no Unix sockets on this side (Windows): said plainly.

use std::process::ExitCode;

use lidguard_ipc::Places;

use crate::cli::{ContainerArgs, SshArgs};

const WHY: &str = "the relay needs Unix sockets on this side: run it from Linux, macOS or WSL";

/// `lidguard ssh`: not here.
pub(crate) fn ssh(_places: &Places, _args: &SshArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!(WHY)
}

/// `lidguard container`: not here.
pub(crate) fn container(_places: &Places, _args: &ContainerArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!(WHY)
}
