//! macOS's `osascript` command lines, for the notices and the tray's "Open live-status": the
//! script's lines as `-e` options, then a fixed first argument (so that osascript's option
//! parsing has ended before any value), then the values, which the script reads as
//! `item 2 of argv` and on. A value never becomes part of the script, so nothing in a path or a
//! project's name can change what runs.

/// osascript's fixed place (never looked up on the PATH).
pub const PROGRAM: &str = "/usr/bin/osascript";

/// The argument before the values: the script's `item 1 of argv`.
const FIRST: &str = "lidguard";

/// osascript's arguments running `script` (its lines) with `values` as `item 2 of argv` on.
pub fn arguments<S: for<'a> From<&'a str>>(
    script: &[&str],
    values: impl IntoIterator<Item = S>,
) -> Vec<S> {
    let mut args: Vec<S> = Vec::new();
    for line in script {
        args.push(S::from("-e"));
        args.push(S::from(line));
    }
    args.push(S::from(FIRST));
    args.extend(values);
    args
}
