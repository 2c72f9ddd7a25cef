//! One module per command family; [`run`] dispatches.

mod server;
mod session;
mod settings;
mod status;

use std::process::ExitCode;

use lidguard_ipc::Places;

use crate::cli::{Cli, Command};
use crate::{help, logging};

/// Runs the parsed command line.
pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let Some(command) = cli.command else {
        help::run(None)?;
        return Ok(ExitCode::SUCCESS);
    };
    if let Command::Help { command } = &command {
        help::run(command.as_deref())?;
        return Ok(ExitCode::SUCCESS);
    }
    let places = Places::from_env()?;
    logging::init(&places, matches!(command, Command::RunServer));
    match command {
        Command::Start(args) => session::start(&places, args),
        Command::Stop(args) => session::stop(&places, args),
        Command::RemoveSession(args) => session::remove(&places, args),
        Command::CleanupOrphans(args) => session::cleanup_orphans(&places, args.json),
        Command::Status(args) => status::run(&places, args.json),
        Command::Settings(args) => settings::run(&places, &args),
        Command::RunServer => server::run(places),
        Command::Help { .. } => unreachable!("handled above"),
    }
}
