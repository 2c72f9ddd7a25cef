//! `lidguard`: keeps a laptop awake, lid closed included, exactly while AI coding agents work.
//!
//! This binary is a thin shell: it parses the command line, talks to the daemon over the local
//! socket (or runs it, for `run-server`) and prints. Everything that decides lives in
//! `lidguard-core`; everything that touches the OS lives in `lidguard-platform` and
//! `lidguard-daemon`.
//!
//! stdout carries command output only: hooks and MCP servers rely on that, so every print goes
//! through [`output`].

mod cli;
mod commands;
mod examples;
mod help;
mod logging;
mod manual;
mod output;
mod prompt;

use std::process::ExitCode;

fn main() -> ExitCode {
    // The hook path runs on every tool call of every agent: skip building the whole command
    // line parser when the arguments are exactly a hook invocation.
    if let Some((provider, event)) = lidguard::hook::parse_args(std::env::args_os().skip(1)) {
        return lidguard::hook::run(provider, event.as_deref());
    }
    // `lidguard --help` is the same overview as `lidguard help`: the commands a person types,
    // grouped (clap's own list would be every subcommand, plumbing included).
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if matches!(args.as_slice(), [a] if a == "--help" || a == "-h") {
        let _ = output::prompt(&help::overview());
        return ExitCode::SUCCESS;
    }
    // `lidguard --help CMD` is `lidguard help CMD`.
    if let [a, command] = args.as_slice()
        && (a == "--help" || a == "-h")
        && let Some(command) = command.to_str()
    {
        return match help::run(Some(command)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                output::error(&output::error_text(&e));
                output::exit_code_for(&e)
            }
        };
    }
    let cli = match cli::parse() {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    match commands::run(cli) {
        Ok(code) => code,
        Err(err) => {
            // A closed pipe on stdout (`lidguard status | head`) is not an error worth
            // reporting; a broken socket to the daemon is.
            if output::is_stdout_closed(&err) {
                return ExitCode::SUCCESS;
            }
            output::error(&output::error_text(&err));
            output::exit_code_for(&err)
        }
    }
}
