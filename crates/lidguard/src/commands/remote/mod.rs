//! The far side: `lidguard ssh` and `lidguard container` relay a remote machine's or a
//! container's hooks to this machine's daemon over a Unix socket (`relay`), and `ssh --install`
//! puts the hook and its entries there (`ssh_install`). Unix only; `unsupported.rs` says so
//! elsewhere.

mod container;
mod container_watch;
mod relay;
mod ssh;
mod ssh_install;

use std::process::ExitCode;

use lidguard_ipc::Places;

use crate::cli::{ContainerArgs, SshArgs};

/// `lidguard ssh`: relays through an ssh connection, or installs/removes the far side.
pub(crate) fn ssh(places: &Places, args: &SshArgs) -> anyhow::Result<ExitCode> {
    if args.install || args.remove {
        ssh_install::run(places, &args.ssh_args, args.hook.as_deref(), args.remove)
    } else {
        ssh::run(places, &args.ssh_args)
    }
}

/// `lidguard container`: relays into a container (or follows one that starts).
pub(crate) fn container(places: &Places, args: &ContainerArgs) -> anyhow::Result<ExitCode> {
    container::run(places, args)
}
