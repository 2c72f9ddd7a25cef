//! `lidguard-test-receiver`: runs a [`lidguard_testreceiver::Receiver`] until killed, for
//! end-to-end drivers in other languages.
//!
//! On start it prints exactly one line to stdout, `{"url":"http://127.0.0.1:PORT",
//! "webhookUrl":"http://127.0.0.1:PORT/api/webhooks/lidguard/<secret>"}`, and flushes.
#![allow(
    clippy::disallowed_methods,
    reason = "test support: fixtures are written and the environment read directly"
)]

use std::io::Write;
use std::process::ExitCode;
use std::str::FromStr;

use lidguard_testreceiver::{Options, Receiver};

const USAGE: &str = "\
usage: lidguard-test-receiver [options]

  --port N               port on 127.0.0.1 (default 0: any free port)
  --secret S             webhook path secret (default test-webhook-secret)
  --access-token T       bearer token for reply/extend/cancel (default test-access-token)
  --absolute-poll-url    hand out http://127.0.0.1:PORT/api/... poll URLs instead of /api/...
  --webhook-fault MODE   normal | status500 | garbage | silent
  --poll-fault MODE      normal | status500 | garbage | silent | unknown-status
  --omit-expires-at      leave expiresAtUtc out of StopFollowUp answers
  --help                 show this text

Prints one JSON line {\"url\":...,\"webhookUrl\":...} on stdout, then serves until killed.
Test-only endpoints: GET /test/requests, GET /test/follow-ups.";

/// Parses the command line (without the program name).
fn parse(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
    let mut options = Options::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_owned(), Some(value.to_owned()))
            }
            _ => (arg, None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "--port" => {
                let port = value("--port")?;
                options.port = port
                    .parse()
                    .map_err(|_| format!("--port: `{port}` is not a port number"))?;
            }
            "--secret" => options.secret = value("--secret")?,
            "--access-token" => options.access_token = value("--access-token")?,
            "--webhook-fault" => {
                options.webhook_fault = FromStr::from_str(&value("--webhook-fault")?)
                    .map_err(|e| format!("--webhook-fault: {e}"))?;
            }
            "--poll-fault" => {
                options.poll_fault = FromStr::from_str(&value("--poll-fault")?)
                    .map_err(|e| format!("--poll-fault: {e}"))?;
            }
            "--absolute-poll-url" if inline.is_none() => options.absolute_poll_url = true,
            "--omit-expires-at" if inline.is_none() => options.omit_expires_at = true,
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(options)
}

#[allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line tool: the ready line goes to stdout, usage errors to stderr"
)]
fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) if message.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("lidguard-test-receiver: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let receiver = match Receiver::try_start(options) {
        Ok(receiver) => receiver,
        Err(error) => {
            eprintln!("lidguard-test-receiver: cannot listen on 127.0.0.1: {error}");
            return ExitCode::FAILURE;
        }
    };
    let ready = serde_json::json!({
        "url": receiver.url(),
        "webhookUrl": receiver.webhook_url(),
    });
    let mut stdout = std::io::stdout().lock();
    if writeln!(stdout, "{ready}")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    drop(stdout);
    loop {
        std::thread::park();
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use lidguard_testreceiver::{PollFault, WebhookFault};

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn parses_every_flag() {
        let options = parse(args(&[
            "--port",
            "8123",
            "--secret=s3",
            "--access-token",
            "tok",
            "--absolute-poll-url",
            "--webhook-fault",
            "Status500",
            "--poll-fault=unknown-status",
            "--omit-expires-at",
        ]))
        .unwrap();
        assert_eq!(options.port, 8123);
        assert_eq!(options.secret, "s3");
        assert_eq!(options.access_token, "tok");
        assert!(options.absolute_poll_url);
        assert_eq!(options.webhook_fault, WebhookFault::Status500);
        assert_eq!(options.poll_fault, PollFault::UnknownStatus);
        assert!(options.omit_expires_at);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(parse(args(&["--port", "x"])).is_err());
        assert!(parse(args(&["--port"])).is_err());
        assert!(parse(args(&["--webhook-fault", "unknown-status"])).is_err());
        assert!(parse(args(&["--bogus"])).is_err());
        assert!(parse(args(&["--omit-expires-at=1"])).is_err());
        assert_eq!(parse(args(&["--help"])).unwrap_err(), "");
    }
}
