//! `lidguard-hook <agent>-hook [--event E]`: the executable the installed hooks run on every
//! event of every agent. It does what `lidguard <agent>-hook` does, and only that, so it starts
//! fast: no command-line parser, no daemon, no MCP server, no HTTP client linked in; linked as a
//! position-dependent executable (build.rs) and entered through C `main` directly, skipping the
//! Rust runtime's start-up work (stack-guard probing, signal-handler set-up) that a process this
//! short never needs. Everything it writes goes through `std` as usual.
#![no_main]

/// The C entry point. `std::env::args_os` works without the Rust runtime's `main`: on the
/// platforms lidguard builds for, `std` reads the arguments from the C runtime itself.
#[unsafe(no_mangle)]
pub extern "C" fn main(_argc: i32, _argv: *const *const u8) -> i32 {
    match lidguard::hook::parse_args(std::env::args_os().skip(1)) {
        Some((provider, event)) => {
            lidguard::hook::run(provider, event.as_deref());
            0
        }
        None => {
            #[allow(clippy::print_stderr, reason = "the usage line is for a human")]
            {
                let forms: Vec<String> = lidguard_providers::AGENTS
                    .iter()
                    .map(|a| match a.event_on_command_line {
                        true => format!("{} --event E", a.hook_command),
                        false => a.hook_command.to_owned(),
                    })
                    .collect();
                eprintln!(
                    "usage: lidguard-hook {}\n(installed by `lidguard hook-install`; `lidguard help` \
                     explains the rest)",
                    forms.join(" | ")
                );
            }
            // Never an exit code an agent acts on (Claude Code blocks a tool call on 2).
            0
        }
    }
}
