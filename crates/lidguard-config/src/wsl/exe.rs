//! Running `wsl.exe` (or the stand-in `LIDGUARD_WSL_EXE` names) with a time limit.

use std::io::{self, Read, Write};
use std::process::{Command, Output, Stdio};

use wait_timeout::ChildExt;

use super::WslError;
use super::command::{MAX_OUTPUT_BYTES, decode_distro_list};

/// Runs `wsl.exe` (or what stands in for it) with these arguments.
pub trait Wsl {
    /// The process's output; `stdin` is written to it first.
    fn run(&self, args: &[String], stdin: &[u8]) -> io::Result<Output>;
}

/// The environment variable that names the program run instead of `wsl.exe` (tests on Linux
/// point it at a script that runs the distro side locally).
pub const WSL_EXE_ENV: &str = "LIDGUARD_WSL_EXE";

/// How long one `wsl.exe` call may take: a wedged WSL must not hang `settings` (every change of
/// a hook timeout refreshes each distro's hooks) or an install for good.
pub const WSL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The real `wsl.exe` (or `LIDGUARD_WSL_EXE`).
#[derive(Clone, Debug)]
pub struct WslExe {
    program: std::ffi::OsString,
    env: Vec<(String, std::ffi::OsString)>,
    timeout: std::time::Duration,
    hint: &'static str,
}

/// What a failure to start `wsl.exe` suggests.
const WSL_HINT: &str = "the WSL bridge runs on Windows with WSL installed";

impl WslExe {
    /// `LIDGUARD_WSL_EXE` when set, else `wsl.exe` from `PATH`.
    pub fn from_env() -> WslExe {
        WslExe {
            program: lidguard_files::environment::var(WSL_EXE_ENV)
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "wsl.exe".into()),
            env: Vec::new(),
            timeout: WSL_TIMEOUT,
            hint: WSL_HINT,
        }
    }
}

impl WslExe {
    /// `program` instead of `wsl.exe`.
    pub fn at(program: impl Into<std::ffi::OsString>) -> WslExe {
        WslExe {
            program: program.into(),
            env: Vec::new(),
            timeout: WSL_TIMEOUT,
            hint: WSL_HINT,
        }
    }

    /// Another time limit than [`WSL_TIMEOUT`].
    pub fn with_timeout(mut self, timeout: std::time::Duration) -> WslExe {
        self.timeout = timeout;
        self
    }

    /// What a failure to start the program suggests, instead of WSL's.
    pub fn with_hint(mut self, hint: &'static str) -> WslExe {
        self.hint = hint;
        self
    }

    /// Also sets `name` for the program (a stand-in's settings).
    pub fn with_env(mut self, name: &str, value: impl Into<std::ffi::OsString>) -> WslExe {
        self.env.push((name.to_owned(), value.into()));
        self
    }
}

impl Wsl for WslExe {
    fn run(&self, args: &[String], stdin: &[u8]) -> io::Result<Output> {
        let mut child = Command::new(&self.program)
            .args(args)
            // wsl.exe answers in UTF-8 with this; decode_distro_list handles both.
            .env("WSL_UTF8", "1")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                io::Error::new(
                    e.kind(),
                    format!(
                        "cannot run {}: {e} ({})",
                        self.program.to_string_lossy(),
                        self.hint
                    ),
                )
            })?;
        // Input and output off this thread, so a program that reads nothing or never ends
        // cannot hold it past the limit.
        let input = child.stdin.take().map(|mut pipe| {
            let bytes = stdin.to_vec();
            std::thread::spawn(move || pipe.write_all(&bytes))
        });
        let stdout = drain(child.stdout.take(), MAX_OUTPUT_BYTES);
        let stderr = drain(child.stderr.take(), MAX_OUTPUT_BYTES);
        let Some(status) = child.wait_timeout(self.timeout)? else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "{} did not answer within {} s (is WSL stuck? `wsl.exe --shutdown` restarts \
                     it)",
                    self.program.to_string_lossy(),
                    self.timeout.as_secs()
                ),
            ));
        };
        if let Some(input) = input {
            let _ = input.join();
        }
        let stdout = stdout.join().unwrap_or_default();
        if stdout.len() > MAX_OUTPUT_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} printed more than {} MiB, which none of lidguard's commands there does; \
                     its output was not read further",
                    self.program.to_string_lossy(),
                    MAX_OUTPUT_BYTES >> 20
                ),
            ));
        }
        Ok(Output {
            status,
            stdout,
            stderr: stderr.join().unwrap_or_default(),
        })
    }
}

/// Reads a child's pipe on a thread of its own: to its end, or `limit` bytes and one more, after
/// which the pipe is closed (a program that goes on writing gets `EPIPE` and ends), so the far
/// side cannot make this process hold more than that.
pub(super) fn drain(
    pipe: Option<impl Read + Send + 'static>,
    limit: usize,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(pipe) = pipe {
            let _ = pipe.take(limit as u64 + 1).read_to_end(&mut bytes);
        }
        bytes
    })
}

/// The installed distros (`wsl.exe --list --quiet`).
pub fn distros(wsl: &dyn Wsl) -> Result<Vec<String>, WslError> {
    let args = ["--list".to_owned(), "--quiet".to_owned()];
    let out = wsl
        .run(&args, b"")
        .map_err(|source| WslError::Unreachable {
            distro: "wsl.exe".to_owned(),
            source,
        })?;
    if !out.status.success() {
        return Err(WslError::Failed {
            distro: "wsl.exe".to_owned(),
            what: "--list --quiet".to_owned(),
            code: out.status.code().unwrap_or(-1),
            stderr: decode_distro_list(&out.stderr).join(" "),
        });
    }
    Ok(decode_distro_list(&out.stdout))
}
