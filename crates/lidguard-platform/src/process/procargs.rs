//! A macOS process's arguments from `sysctl` `KERN_PROCARGS2`, read as XNU lays them out.
//!
//! Facts (XNU `bsd/kern/kern_sysctl.c`, `sysctl_procargsx`): the buffer starts with the process's
//! `argc` as a native-endian `int`, then the executable's path and its terminating NUL, padded
//! with more NULs for alignment, then `argc` NUL-terminated arguments (`argv[0]` first), then
//! the environment — which the kernel leaves out for a process of another user. The buffer may
//! end early: a process whose arguments no longer fit gives fewer.

/// What `KERN_PROCARGS2` says of a process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcArgs {
    /// The path the kernel executed.
    pub exec_path: String,
    /// `argv`, as many as the buffer holds.
    pub argv: Vec<String>,
}

/// Reads a `KERN_PROCARGS2` buffer; `None` when it is too short to hold `argc` and a path.
pub fn parse(buffer: &[u8]) -> Option<ProcArgs> {
    let (count, rest) = buffer.split_first_chunk::<4>()?;
    let argc = usize::try_from(i32::from_ne_bytes(*count)).ok()?;
    let path_end = rest.iter().position(|&b| b == 0)?;
    let exec_path = String::from_utf8_lossy(&rest[..path_end]).into_owned();
    let args_start = rest[path_end..]
        .iter()
        .position(|&b| b != 0)
        .map_or(rest.len(), |skip| path_end + skip);
    let argv = rest[args_start..]
        .split(|&b| b == 0)
        .take(argc)
        .map(|arg| String::from_utf8_lossy(arg).into_owned())
        .collect::<Vec<_>>();
    // A final piece without its NUL is cut short, not an argument.
    let complete = argv
        .len()
        .min(rest[args_start..].iter().filter(|&&b| b == 0).count());
    Some(ProcArgs {
        exec_path,
        argv: argv.into_iter().take(complete).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer as `sysctl_procargsx` fills it: `argc`, the path, `pad` NULs, the arguments and
    /// the environment.
    fn buffer(argc: i32, path: &str, pad: usize, argv: &[&str], env: &[&str]) -> Vec<u8> {
        let mut bytes = argc.to_ne_bytes().to_vec();
        bytes.extend_from_slice(path.as_bytes());
        bytes.extend(std::iter::repeat_n(0, 1 + pad));
        for word in argv.iter().chain(env) {
            bytes.extend_from_slice(word.as_bytes());
            bytes.push(0);
        }
        bytes
    }

    /// Claude Code as Homebrew's Node runs it: `node` executing the package's script.
    #[test]
    fn an_agent_under_node() {
        let bytes = buffer(
            3,
            "/opt/homebrew/Cellar/node/22.11.0/bin/node",
            5,
            &["node", "/opt/homebrew/bin/claude", "--resume"],
            &["HOME=/Users/alice", "TERM=xterm-256color"],
        );
        assert_eq!(
            parse(&bytes),
            Some(ProcArgs {
                exec_path: "/opt/homebrew/Cellar/node/22.11.0/bin/node".into(),
                argv: vec![
                    "node".into(),
                    "/opt/homebrew/bin/claude".into(),
                    "--resume".into()
                ],
            })
        );
    }

    /// Another user's process: the kernel leaves the environment out; no padding.
    #[test]
    fn without_the_environment_and_padding() {
        let bytes = buffer(2, "/usr/local/bin/codex", 0, &["codex", "exec"], &[]);
        let args = parse(&bytes).unwrap();
        assert_eq!(args.argv, ["codex", "exec"]);
    }

    /// A cut buffer gives the arguments it holds whole; nonsense gives nothing.
    #[test]
    fn short_and_broken_buffers() {
        let mut bytes = buffer(3, "/bin/zsh", 2, &["-zsh", "-c", "sleep 5"], &[]);
        bytes.truncate(bytes.len() - 3);
        assert_eq!(parse(&bytes).unwrap().argv, ["-zsh", "-c"]);
        assert_eq!(parse(&[1, 0]), None);
        assert_eq!(parse(&buffer(-1, "/bin/sh", 0, &[], &[])), None);
        let no_args = buffer(0, "/sbin/launchd", 3, &[], &["X=1"]);
        assert_eq!(parse(&no_args).unwrap().argv, Vec::<String>::new());
        // The path without its NUL: not a buffer the kernel gives.
        assert_eq!(parse(&[1, 0, 0, 0, b'/', b'x']), None);
    }
}
