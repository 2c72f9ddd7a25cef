//! `lidguard-hook <agent>-hook [--event E]`: the executable the installed hooks run on every
//! event of every agent. It does what `lidguard <agent>-hook` does, and only that, so it starts
//! fast: no command-line parser, no daemon, no MCP server, no HTTP client linked in; linked as a
//! position-dependent executable (build.rs) and entered through C `main` directly, skipping the
//! Rust runtime's start-up work (stack-guard probing, signal-handler set-up) that a process this
//! short never needs. Everything it writes goes through `std` as usual.
#![no_main]

use std::ffi::{OsString, c_char};

/// The C entry point.
#[unsafe(no_mangle)]
pub extern "C" fn main(argc: i32, argv: *const *const c_char) -> i32 {
    match lidguard::hook::parse_args(arguments(argc, argv).into_iter().skip(1)) {
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

/// The arguments as the C runtime passed them to `main`. Without the Rust runtime's own `main`,
/// `std::env::args_os` is filled in only where `std` reads the C runtime itself (glibc, Windows);
/// under musl — the static Linux build — it would be empty.
#[cfg(unix)]
fn arguments(argc: i32, argv: *const *const c_char) -> Vec<OsString> {
    use std::os::unix::ffi::OsStrExt;
    let count = usize::try_from(argc).unwrap_or(0);
    (0..count)
        .filter_map(|i| {
            // SAFETY: the C runtime passes `argc` pointers in `argv`, each null or a
            // NUL-terminated string that lives as long as the process.
            let arg = unsafe { *argv.add(i) };
            // SAFETY: as above; a null entry is skipped.
            let bytes = (!arg.is_null()).then(|| unsafe { std::ffi::CStr::from_ptr(arg) })?;
            Some(std::ffi::OsStr::from_bytes(bytes.to_bytes()).to_owned())
        })
        .collect()
}

/// Windows: `std` reads the UTF-16 command line itself (`argv` would be in the ANSI code page).
#[cfg(not(unix))]
fn arguments(_argc: i32, _argv: *const *const c_char) -> Vec<OsString> {
    std::env::args_os().collect()
}
