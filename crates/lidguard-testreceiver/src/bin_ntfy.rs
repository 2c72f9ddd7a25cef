//! `lidguard-test-ntfy`: runs the test-only ntfy stand-in ([`lidguard_testreceiver::ntfy`])
//! until killed, for end-to-end drivers in other languages.
//!
//! Prints one line, `{"url":"http://127.0.0.1:PORT"}`, then serves.

use std::io::Write;
use std::process::ExitCode;

const USAGE: &str = "usage: lidguard-test-ntfy [--port N] [--token T]";

#[expect(
    clippy::print_stderr,
    reason = "a command-line tool: the ready line goes to stdout, usage errors to stderr"
)]
fn main() -> ExitCode {
    let mut port = 0u16;
    let mut token = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--port", Some(p)) => match p.parse() {
                Ok(p) => port = p,
                Err(_) => {
                    eprintln!("--port: `{p}` is not a port number\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            ("--token", Some(t)) => token = Some(t),
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let server = match lidguard_testreceiver::ntfy::NtfyServer::start(port, token.as_deref()) {
        Ok(server) => server,
        Err(e) => {
            eprintln!("cannot listen: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", serde_json::json!({ "url": server.url() }));
    let _ = out.flush();
    drop(out);
    loop {
        std::thread::park();
    }
}
