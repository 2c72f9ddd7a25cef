//! The WSL bridge's plain parts: reading `wsl.exe`'s distro list, the command lines that run
//! inside a distro, and the paths lidguard's entries carry there.
//!
//! Facts (Microsoft's WSL command reference and issues microsoft/WSL#4607, #10177):
//! - `wsl.exe --list --quiet` writes UTF-16LE (NUL bytes when read as bytes) unless `WSL_UTF8=1`;
//! - `wsl.exe --distribution NAME --exec PROGRAM ARGS…` runs a program without a shell, and
//!   with no `--distribution` in the default distro;
//! - `wslpath -a -u 'C:\…'` prints the Linux form (`/mnt/c/…`) of a Windows path.
//!
//! Configuration inside a distro is read and written by small `sh` scripts. Over ssh they run as
//! `sh -c SCRIPT lidguard-wsl ARGS…`, the file paths passed as positional parameters, so nothing
//! is quoted into the script. Through `wsl.exe` nothing but plain words goes on its command line:
//! `wsl.exe` reads its command line with rules of its own, which a script full of quotes and
//! newlines would not survive, so the script, its arguments and its input reach the distro's
//! `sh` on stdin as one program ([`stdin_program`]).
//!
//! The same edits reach a Linux host over the user's own `ssh` (`lidguard ssh --install`): the
//! command line ssh hands to the remote login shell is each word single-quoted, which every
//! POSIX shell (sh, bash, dash, zsh, ksh) reads back as the same words.

use std::io::{self, Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use wait_timeout::ChildExt;

use lidguard_core::provider::Provider;
use lidguard_providers::agent::Env;
use lidguard_providers::install::mcp::{self as mcp_edits, McpStatus};
use lidguard_providers::install::{
    Change, HookCommand, HookShell, HookStatus, InstallError, InstallState,
};

use crate::agents::Location;

mod event_files;

/// The distro names in `wsl.exe --list --quiet` output: UTF-16LE when the bytes hold NULs
/// (a BOM is dropped), else UTF-8; `\r`, NULs and blank lines removed, names trimmed.
pub fn decode_distro_list(bytes: &[u8]) -> Vec<String> {
    let text = if bytes.contains(&0) {
        let body = bytes.strip_prefix(&[0xFF, 0xFE]).unwrap_or(bytes);
        let units: Vec<u16> = body
            .chunks(2)
            .map(|pair| u16::from_le_bytes([pair[0], *pair.get(1).unwrap_or(&0)]))
            .collect();
        String::from_utf16_lossy(&units)
    } else {
        String::from_utf8_lossy(bytes).into_owned()
    };
    text.replace('\0', "")
        .lines()
        .map(|line| line.trim().trim_start_matches('\u{feff}').trim())
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The `wsl.exe` arguments that run `program args…` in `distro` (`None` or empty: the default
/// distro) without a shell in between.
pub fn exec_args(distro: Option<&str>, program: &str, args: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(name) = distro.filter(|d| !d.trim().is_empty()) {
        out.extend(["--distribution".to_owned(), name.trim().to_owned()]);
    }
    out.extend(["--exec".to_owned(), program.to_owned()]);
    out.extend(args.iter().map(|a| (*a).to_owned()));
    out
}

/// The arguments that convert this Windows path to its Linux form inside `distro`.
pub fn wslpath_args(distro: Option<&str>, windows_path: &str) -> Vec<String> {
    exec_args(distro, "wslpath", &["-a", "-u", windows_path])
}

/// The largest agent config lidguard reads on the far side (a WSL distro, an ssh host): configs
/// are a few kilobytes; anything bigger is not one, and the far side is not trusted to say so.
pub const MAX_CONFIG_BYTES: usize = 1 << 20;

/// The most a command on the far side may print before lidguard stops reading it (a config of
/// [`MAX_CONFIG_BYTES`] and some room).
pub const MAX_OUTPUT_BYTES: usize = 2 << 20;

/// A script run as `sh -c SCRIPT lidguard-wsl FILE`: prints FILE, or nothing with exit 3 when it
/// does not exist (so "missing" and "unreadable" differ), or exit 4 when it is not a regular
/// file (a device, a folder, a pipe: never read); at most [`MAX_CONFIG_BYTES`] and one byte
/// more, so a larger file is seen to be larger without being read whole.
pub const READ_SCRIPT: &str = r#"if [ ! -e "$1" ]; then exit 3; fi
if [ ! -f "$1" ]; then echo "not a regular file" >&2; exit 4; fi
head -c 1048577 -- "$1""#;

/// A script run as `sh -c SCRIPT lidguard-wsl FILE STAMP` with the new content on stdin: makes
/// the directory, keeps a backup `FILE.STAMP.bak` of an existing file (mode kept by `cp -p`),
/// writes a temporary file next to FILE and renames it over FILE (atomic within the directory;
/// a symlinked FILE is written through to its target).
pub const WRITE_SCRIPT: &str = r#"set -e
target=$1
if [ -L "$target" ]; then target=$(readlink -f -- "$target"); fi
mkdir -p -- "$(dirname -- "$target")"
if [ -e "$target" ]; then cp -p -- "$target" "$target.$2.bak"; fi
tmp="$target.lidguard-tmp.$$"
umask 077
cat > "$tmp"
if [ -e "$target" ]; then chmod --reference="$target" -- "$tmp" 2>/dev/null || true; fi
mv -f -- "$tmp" "$target""#;

/// A script run as `sh -c SCRIPT lidguard-wsl FILE STAMP`: keeps a backup and deletes FILE.
pub const DELETE_SCRIPT: &str = r#"set -e
if [ -e "$1" ]; then cp -p -- "$1" "$1.$2.bak"; rm -f -- "$1"; fi"#;

/// A script run as `sh -c SCRIPT lidguard-wsl`: prints the variables that locate the agents'
/// configs inside the distro, one `NAME=value` per line (empty when unset).
pub const ENV_SCRIPT: &str = r#"for v in HOME XDG_CONFIG_HOME CLAUDE_CONFIG_DIR CODEX_HOME COPILOT_HOME OPENCODE_CONFIG_DIR GEMINI_CLI_HOME QWEN_HOME KILO_CONFIG_DIR CLINE_DIR; do eval "printf '%s=%s\n' $v \"\${$v:-}\""; done"#;

/// A script run as `sh -c SCRIPT lidguard-wsl FILE` with an executable's bytes on stdin: puts
/// it at FILE (folders made as needed), runnable and readable by the user alone, through a
/// temporary file renamed over FILE.
pub const PUT_EXECUTABLE_SCRIPT: &str = r#"set -e
mkdir -p -- "$(dirname -- "$1")"
umask 077
tmp="$1.lidguard-tmp.$$"
cat > "$tmp"
chmod 700 -- "$tmp"
mv -f -- "$tmp" "$1""#;

/// A script run as `sh -c SCRIPT lidguard-wsl FILE`: deletes FILE, and its folder when that is
/// left empty.
pub const REMOVE_EXECUTABLE_SCRIPT: &str =
    r#"rm -f -- "$1" && { rmdir -- "$(dirname -- "$1")" 2>/dev/null || true; }"#;

/// The program `sh` reads on stdin to run `script` with `args` and `input` as its stdin, for a
/// command line that carries nothing but `sh` itself: the arguments are set with `set --`, each
/// single-quoted; the input travels base64-encoded in a here-document (any bytes, never taken
/// for shell code) and is decoded into the script's stdin (`base64 -d`, coreutils and BusyBox).
/// The script runs in a subshell, so its `exit` or a failure under `set -e` ends only it, and its
/// status is the program's.
pub fn stdin_program(script: &str, args: &[&str], input: &[u8]) -> String {
    use base64::Engine;
    let words: Vec<String> = args.iter().map(|a| sh_quote(a)).collect();
    let encoded = base64::engine::general_purpose::STANDARD.encode(input);
    let mut program = String::from("lidguard_input() {\nbase64 -d <<'LIDGUARD_INPUT'\n");
    for chunk in encoded.as_bytes().chunks(76) {
        program.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        program.push('\n');
    }
    program.push_str("LIDGUARD_INPUT\n}\n");
    program.push_str(&format!("set -- {}\n", words.join(" ")));
    program.push_str("lidguard_input | (\n");
    program.push_str(script);
    program.push_str("\n)\n");
    program
}

/// `NAME=value` lines (as [`ENV_SCRIPT`] prints them) as a lookup.
pub fn parse_env(text: &str) -> impl Fn(&str) -> Option<std::ffi::OsString> + '_ {
    move |name: &str| {
        text.lines().find_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key == name && !value.is_empty()).then(|| value.into())
        })
    }
}

/// Why something inside a WSL distro could not be read or changed; the message names the
/// distro (or the agent) and what failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WslError {
    /// `wsl.exe` could not be run, or took too long.
    #[error("{distro}: {source}")]
    Unreachable {
        /// The distro, for messages ("WSL distro NAME").
        distro: String,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
    /// A command inside the distro (or `wsl.exe` itself) failed.
    #[error("{distro}: {what} failed (exit {code}): {stderr}")]
    Failed {
        /// The distro, or `wsl.exe`.
        distro: String,
        /// What was run, in words.
        what: String,
        /// Its exit code (-1: none).
        code: i32,
        /// What it said.
        stderr: String,
    },
    /// What the distro holds cannot be used as it is.
    #[error("{distro}: {problem}")]
    Unusable {
        /// The distro.
        distro: String,
        /// What is wrong.
        problem: String,
    },
    /// The agent has no such config there (or is not lidguard's to manage).
    #[error("{agent}: {problem}")]
    Agent {
        /// The agent's name.
        agent: String,
        /// What is missing.
        problem: String,
    },
    /// An agent's config file there could not be read or edited as planned.
    #[error("{distro} {file}: {source}{}", if *.changed_nothing { "; nothing was changed" } else { "" })]
    Config {
        /// The distro.
        distro: String,
        /// The file.
        file: String,
        /// What is wrong with it.
        #[source]
        source: InstallError,
        /// Whether an edit was refused before it changed anything.
        changed_nothing: bool,
    },
    /// What lidguard changed could not be recorded (so a remove could not give back its bytes).
    #[error("cannot record what lidguard changed in {file}: {source}")]
    Receipt {
        /// The file changed.
        file: String,
        /// Why the receipt was not written.
        #[source]
        source: io::Error,
    },
}

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
fn drain(
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

/// One distro (`None`: the default one), reached through `wsl.exe`, or a Linux host reached
/// through `ssh`.
pub struct Distro<'a> {
    wsl: &'a dyn Wsl,
    side: Side,
}

/// Where a [`Distro`]'s commands run.
enum Side {
    /// A WSL distro (`None`: the default one), through `wsl.exe --exec`.
    Wsl(Option<String>),
    /// A host through the user's `ssh`: its options and destination, and `user@host` for
    /// messages and receipts.
    Ssh { args: Vec<String>, name: String },
}

impl<'a> Distro<'a> {
    /// `name` (empty or `None`: the default distro).
    pub fn new(wsl: &'a dyn Wsl, name: Option<&str>) -> Distro<'a> {
        let name = name
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_owned);
        Distro {
            wsl,
            side: Side::Wsl(name),
        }
    }

    /// The host `ssh_args` (options and destination) reach, `ssh` run by `runner`; `name` is
    /// `user@host`.
    pub fn ssh(runner: &'a dyn Wsl, ssh_args: Vec<String>, name: String) -> Distro<'a> {
        Distro {
            wsl: runner,
            side: Side::Ssh {
                args: ssh_args,
                name,
            },
        }
    }

    /// An agent's config file there that could not be read or edited as planned.
    fn config_error(&self, file: &str, source: InstallError, changed_nothing: bool) -> WslError {
        WslError::Config {
            distro: self.label(),
            file: file.to_owned(),
            source,
            changed_nothing,
        }
    }

    /// Reads `file` there and judges it with `status` (read only: nothing changes).
    fn status_of<T>(
        &self,
        file: &str,
        status: impl FnOnce(Option<&str>) -> Result<T, InstallError>,
    ) -> Result<T, WslError> {
        let existing = self.read(file)?;
        status(existing.as_deref()).map_err(|source| self.config_error(file, source, false))
    }

    /// "WSL distro NAME" or "the default WSL distro", for messages.
    pub fn label(&self) -> String {
        match &self.side {
            Side::Wsl(Some(name)) => format!("WSL distro {name}"),
            Side::Wsl(None) => "the default WSL distro".to_owned(),
            Side::Ssh { name, .. } => format!("{name} (over ssh)"),
        }
    }

    fn exec(&self, program: &str, args: &[&str], stdin: &[u8]) -> Result<Output, WslError> {
        let args = match &self.side {
            Side::Wsl(name) => exec_args(name.as_deref(), program, args),
            Side::Ssh { args: ssh, .. } => {
                let words = std::iter::once(program).chain(args.iter().copied());
                let line = words.map(sh_quote).collect::<Vec<_>>().join(" ");
                let mut all = ssh.clone();
                all.extend(["--".to_owned(), line]);
                all
            }
        };
        self.wsl
            .run(&args, stdin)
            .map_err(|source| WslError::Unreachable {
                distro: self.label(),
                source,
            })
    }

    fn sh(&self, script: &str, args: &[&str], stdin: &[u8]) -> Result<Output, WslError> {
        match &self.side {
            // wsl.exe's own command-line reading never sees the script: it goes on stdin.
            Side::Wsl(_) => self.exec("sh", &[], stdin_program(script, args, stdin).as_bytes()),
            Side::Ssh { .. } => {
                let mut all = vec!["-c", script, "lidguard-wsl"];
                all.extend_from_slice(args);
                self.exec("sh", &all, stdin)
            }
        }
    }

    fn failed(&self, what: &str, out: &Output) -> WslError {
        WslError::Failed {
            distro: self.label(),
            what: what.to_owned(),
            code: out.status.code().unwrap_or(-1),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        }
    }

    fn unusable(&self, problem: String) -> WslError {
        WslError::Unusable {
            distro: self.label(),
            problem,
        }
    }

    /// The Linux path of a Windows path (`wslpath -a -u`).
    pub fn linux_path(&self, windows: &str) -> Result<String, WslError> {
        let out = self.exec("wslpath", &["-a", "-u", windows], b"")?;
        let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if !out.status.success() || path.is_empty() {
            return Err(self.failed(&format!("wslpath of {windows}"), &out));
        }
        Ok(path)
    }

    /// The variables that locate agents' configs there, as a lookup for the agents' `locate`.
    /// Inside the distro the home is `HOME`, so the Windows build's `USERPROFILE` rule is
    /// answered with it too.
    pub fn env(&self) -> Result<DistroEnv, WslError> {
        let out = self.sh(ENV_SCRIPT, &[], b"")?;
        if !out.status.success() {
            return Err(self.failed("reading its environment", &out));
        }
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if parse_env(&text)("HOME").is_none() {
            return Err(self.unusable("HOME is not set there".to_owned()));
        }
        Ok(DistroEnv { text })
    }

    /// The machine's hardware name (`uname -m`: `x86_64`, `aarch64`, …).
    pub fn machine(&self) -> Result<String, WslError> {
        let out = self.exec("uname", &["-m"], b"")?;
        if !out.status.success() {
            return Err(self.failed("uname -m", &out));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// Puts an executable at `file` there (see [`PUT_EXECUTABLE_SCRIPT`]).
    pub fn put_executable(&self, file: &str, bytes: &[u8]) -> Result<(), WslError> {
        self.script(PUT_EXECUTABLE_SCRIPT, &[file], bytes, "writing")
    }

    /// Deletes an executable lidguard put there, and its folder when left empty.
    pub fn remove_executable(&self, file: &str) -> Result<(), WslError> {
        self.script(REMOVE_EXECUTABLE_SCRIPT, &[file], b"", "deleting")
    }

    /// What `program args…` prints there (stdout and stderr), or why it could not run.
    pub fn output_of(&self, program: &str, args: &[&str]) -> Result<String, WslError> {
        let out = self.exec(program, args, b"")?;
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        Ok(text)
    }

    /// Deletes `file` there, keeping no copy.
    fn forget(&self, file: &str) -> Result<(), WslError> {
        self.script(r#"rm -f -- "$1""#, &[file], b"", "deleting")
    }

    /// Deletes the folder `dir` there when it is empty (a folder with anything in it stays).
    pub fn remove_dir_if_empty(&self, dir: &str) -> Result<(), WslError> {
        self.script(
            r#"rmdir -- "$1" 2>/dev/null || true"#,
            &[dir],
            b"",
            "deleting",
        )
    }

    /// The names of the regular files (not links) directly in `dir` there; none when it does
    /// not exist. A name with a line break is left out: no agent runs such a hook file.
    pub fn list(&self, dir: &str) -> Result<Vec<String>, WslError> {
        let out = self.sh(
            r#"[ -d "$1" ] || exit 0
for f in "$1"/* "$1"/.[!.]*; do [ -f "$f" ] && [ ! -L "$f" ] && printf '%s\n' "${f##*/}"; done; exit 0"#,
            &[dir],
            b"",
        )?;
        if !out.status.success() {
            return Err(self.failed("listing", &out));
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect())
    }

    /// Whether `dir` is a directory there.
    pub fn is_dir(&self, dir: &str) -> Result<bool, WslError> {
        Ok(self.sh(r#"test -d "$1""#, &[dir], b"")?.status.success())
    }

    /// The file's text, `None` when it does not exist.
    pub fn read(&self, file: &str) -> Result<Option<String>, WslError> {
        let out = self.sh(READ_SCRIPT, &[file], b"")?;
        match out.status.code() {
            Some(0) if out.stdout.len() > MAX_CONFIG_BYTES => Err(self.unusable(format!(
                "{file} is larger than {} MiB, which no agent's config is; lidguard leaves it \
                 alone",
                MAX_CONFIG_BYTES >> 20
            ))),
            Some(0) => String::from_utf8(out.stdout)
                .map(Some)
                .map_err(|_| self.unusable(format!("{file} is not UTF-8 text"))),
            Some(3) => Ok(None),
            Some(4) => Err(self.unusable(format!(
                "{file} is not a regular file (a device, a folder, a link to one); lidguard \
                 reads and writes agents' configs only as regular files"
            ))),
            _ => Err(self.failed(&format!("reading {file}"), &out)),
        }
    }

    fn write(&self, file: &str, text: &str, stamp: &str) -> Result<(), WslError> {
        self.script(WRITE_SCRIPT, &[file, stamp], text.as_bytes(), "writing")
    }

    fn delete(&self, file: &str, stamp: &str) -> Result<(), WslError> {
        self.script(DELETE_SCRIPT, &[file, stamp], b"", "deleting")
    }

    /// Runs one of the scripts above on `args` (the first is the file), failing with `doing`
    /// the file when the script does.
    fn script(
        &self,
        script: &str,
        args: &[&str],
        stdin: &[u8],
        doing: &str,
    ) -> Result<(), WslError> {
        let out = self.sh(script, args, stdin)?;
        if out.status.success() {
            Ok(())
        } else {
            Err(self.failed(&format!("{doing} {}", args[0]), &out))
        }
    }
}

/// A distro's variables (see [`Distro::env`]).
pub struct DistroEnv {
    text: String,
}

impl DistroEnv {
    /// The value of `name` there (`USERPROFILE` answers with `HOME`).
    pub fn var(&self, name: &str) -> Option<std::ffi::OsString> {
        let name = if name == "USERPROFILE" { "HOME" } else { name };
        parse_env(&self.text)(name)
    }

    /// Where `locate` puts the agent's file there, as a Linux path.
    fn file(&self, locate: fn(Env<'_>) -> Option<Location>) -> Option<String> {
        let var = |name: &str| self.var(name);
        locate(&var).map(|l| linux_path_text(&l.file))
    }
}

/// A path built with the host's separators as the Linux path it stands for.
fn linux_path_text(path: &Path) -> String {
    path.display().to_string().replace('\\', "/")
}

/// What a WSL edit did or would do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edited {
    /// The file inside the distro.
    pub file: String,
    /// What happened.
    pub action: crate::file::Action,
    /// The backup kept next to it (`FILE.STAMP.bak`), when there was a file to keep.
    pub backup: Option<String>,
}

/// How a WSL edit is carried out.
#[derive(Clone, Copy, Debug)]
pub struct How<'a> {
    /// Only report the diff.
    pub dry_run: bool,
    /// The backup suffix (`FILE.STAMP.bak`), e.g. `20261202T081500Z` ([`stamp`]).
    pub stamp: &'a str,
    /// lidguard's places: the receipts of WSL installs are kept on the Windows side, as the
    /// native ones are.
    pub places: &'a lidguard_ipc::Places,
}

/// The name a WSL file's receipt is kept under (distro and path).
fn receipt_key(distro: &Distro<'_>, file: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(match &distro.side {
        Side::Wsl(name) => format!("wsl/{}/{file}", name.as_deref().unwrap_or("(default)")),
        Side::Ssh { name, .. } => format!("ssh/{name}/{file}"),
    })
}

/// `word` single-quoted for a POSIX shell (a `'` inside closes the quote, is escaped, and
/// opens it again).
fn sh_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// Edits `file` inside `distro` as a native install edits a local file (see
/// [`crate::file::apply`]): the same pure edit, a receipt of the file before lidguard's first
/// install so a remove gives back its bytes while nobody touched it, a backup `FILE.STAMP.bak`
/// next to it, and an atomic rename; `dry_run` only reports the diff. `tag` keeps receipts of
/// different entries in one file apart.
pub fn edit(
    distro: &Distro<'_>,
    file: &str,
    tag: &str,
    direction: crate::file::Direction,
    plan: impl Fn(Option<&str>, Option<&str>) -> Result<crate::file::Planned, InstallError>,
    how: How<'_>,
) -> Result<Edited, WslError> {
    use crate::file::{Action, Direction};
    use crate::receipts::{self, Receipt};
    let How {
        dry_run,
        stamp,
        places,
    } = how;
    let key = receipt_key(distro, file);
    let existing = distro.read(file)?;
    let receipt = receipts::load(places, tag, &key);
    let untouched_since = receipt.as_ref().filter(|r| {
        existing
            .as_deref()
            .is_some_and(|t| receipts::digest(t) == r.after)
    });
    let hint = match direction {
        Direction::Remove => receipt.as_ref().and_then(|r| r.before.as_deref()),
        Direction::Install | Direction::Update => None,
    };
    let planned = plan(existing.as_deref(), hint)
        .map_err(|source| distro.config_error(file, source, true))?;
    let (change, _) = crate::file::settle(
        direction,
        existing.as_ref(),
        receipt.as_ref(),
        untouched_since,
        planned.change.clone(),
    );
    let old = existing.as_deref().unwrap_or("");
    let backup = existing.as_ref().map(|_| format!("{file}.{stamp}.bak"));
    let unchanged = || Edited {
        file: file.to_owned(),
        action: Action::Unchanged,
        backup: None,
    };
    let new_text = match &change {
        Change::Unchanged => {
            if direction == Direction::Remove && !dry_run {
                receipts::drop(places, tag, &key);
            }
            return Ok(unchanged());
        }
        Change::Changed { new_text } => Some(new_text.clone()),
        Change::Delete if existing.is_none() => return Ok(unchanged()),
        Change::Delete => None,
    };
    if dry_run {
        return Ok(Edited {
            file: file.to_owned(),
            action: Action::WouldChange {
                diff: crate::file::unified_diff(
                    Path::new(file),
                    old,
                    new_text.as_deref().unwrap_or(""),
                ),
                delete: new_text.is_none(),
            },
            backup: None,
        });
    }
    let action = match &new_text {
        Some(text) => {
            distro.write(file, text, stamp)?;
            Action::Written {
                created: existing.is_none(),
            }
        }
        None => {
            distro.delete(file, stamp)?;
            Action::Deleted { kept: None }
        }
    };
    match direction {
        Direction::Install => {
            let before = crate::file::before_ours(&planned, untouched_since, existing.clone());
            let receipt = Receipt {
                file: key,
                before,
                after: receipts::digest(new_text.as_deref().unwrap_or_default()),
                // Inside the distro; its folders are the agent's own.
                created_dirs: Vec::new(),
            };
            receipts::save(places, tag, &receipt).map_err(|source| WslError::Receipt {
                file: file.to_owned(),
                source,
            })?;
        }
        Direction::Update => {}
        Direction::Remove => receipts::drop(places, tag, &key),
    }
    Ok(Edited {
        file: file.to_owned(),
        action,
        backup,
    })
}

/// Installs or removes lidguard's entries in `file` through [`edit`]: `ours` tells whether a
/// text already holds them, `install` and `remove` are the agent's pure edits (`remove` gets
/// the file before lidguard's install when the receipt knows it).
#[allow(
    clippy::too_many_arguments,
    reason = "the pieces of one edit, named at each call"
)]
fn install_or_remove(
    distro: &Distro<'_>,
    file: &str,
    tag: &str,
    remove: bool,
    how: How<'_>,
    ours: impl Fn(Option<&str>) -> bool,
    install: impl Fn(Option<&str>) -> Result<Change, InstallError>,
    uninstall: impl Fn(&str, Option<&str>) -> Result<Change, InstallError>,
) -> Result<Edited, WslError> {
    use crate::file::{Direction, Planned};
    let direction = if remove {
        Direction::Remove
    } else {
        Direction::Install
    };
    edit(
        distro,
        file,
        tag,
        direction,
        |existing, before| match (existing, remove) {
            (None, true) => Ok(Planned::change(Change::Unchanged)),
            (Some(text), true) => uninstall(text, before).map(Planned::change),
            (existing, false) => {
                install_plan(existing, ours(existing), &install, |t| uninstall(t, None))
            }
        },
        how,
    )
}

/// The plan of an install: the change, and the file without lidguard's entries when it held
/// some (for the receipt).
fn install_plan(
    existing: Option<&str>,
    ours: bool,
    install: impl Fn(Option<&str>) -> Result<Change, InstallError>,
    remove: impl Fn(&str) -> Result<Change, InstallError>,
) -> Result<crate::file::Planned, InstallError> {
    let without_ours = match existing {
        Some(text) if ours => Some(crate::file::left_after(text, remove(text)?)),
        _ => None,
    };
    Ok(crate::file::Planned {
        change: install(existing)?,
        without_ours,
    })
}

/// A backup suffix for now, in UTC (`20261202T081500Z`).
pub fn stamp() -> String {
    jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string()
}

/// What WSL entries run: the Windows executable by its Linux path, through `bash`/`sh`.
pub fn hook_command(linux_exe: &str) -> HookCommand {
    HookCommand {
        program: linux_exe.to_owned(),
        shell: HookShell::Posix,
    }
}

fn agent_of(p: Provider) -> Result<&'static lidguard_providers::agent::Agent, WslError> {
    lidguard_providers::agent(p).ok_or_else(|| WslError::Agent {
        agent: p.to_string(),
        problem: "is not managed by lidguard".to_owned(),
    })
}

fn mcp_of(p: Provider) -> Result<&'static lidguard_providers::agent::McpFile, WslError> {
    agent_of(p)?.mcp.ok_or_else(|| WslError::Agent {
        agent: p.display_name().to_owned(),
        problem: "has no MCP config lidguard manages".to_owned(),
    })
}

/// The agent's hook file inside the distro.
pub fn hook_file(env: &DistroEnv, p: Provider) -> Result<String, WslError> {
    let a = agent_of(p)?;
    env.file(a.hooks.locate).ok_or_else(|| WslError::Agent {
        agent: p.display_name().to_owned(),
        problem: "no home directory to find its hooks in".to_owned(),
    })
}

/// The agent's config directory inside the distro (`all` takes agents whose directory exists).
pub fn agent_root(env: &DistroEnv, p: Provider) -> Option<String> {
    let a = agent_of(p).ok()?;
    let var = |name: &str| env.var(name);
    (a.hooks.locate)(&var).map(|l| linux_path_text(&l.root))
}

/// The agent's MCP file inside the distro.
pub fn mcp_file(env: &DistroEnv, p: Provider) -> Result<String, WslError> {
    env.file(mcp_of(p)?.locate).ok_or_else(|| WslError::Agent {
        agent: p.display_name().to_owned(),
        problem: "no home directory to find its MCP config in".to_owned(),
    })
}

/// `wsl-hook-install` (or remove) for one agent: one edit, or one per event file for an agent
/// whose hooks are a file per event.
pub fn hooks(
    distro: &Distro<'_>,
    env: &DistroEnv,
    p: Provider,
    cmd: &HookCommand,
    timeout: u32,
    remove: bool,
    how: How<'_>,
) -> Result<Vec<Edited>, WslError> {
    let a = agent_of(p)?;
    let file = hook_file(env, p)?;
    if let Some(dir) = event_files::RemoteEventDir::of(distro, a, &file, cmd) {
        return if remove {
            dir.remove(how)
        } else {
            dir.install(how)
        };
    }
    if !remove {
        refuse_silencing(distro, env, a)?;
    }
    install_or_remove(
        distro,
        &file,
        p.as_str(),
        remove,
        how,
        |existing| {
            a.hooks
                .status(existing, cmd, timeout)
                .is_ok_and(|s| s.state != InstallState::Missing)
        },
        |existing| a.hooks.install(existing, cmd, timeout),
        |text, before| a.hooks.remove(text, cmd, before),
    )
    .map(|edited| vec![edited])
}

/// Refuses an install that would make the agent stop running hooks of the user's in another
/// file of the distro ([`lidguard_providers::agent::Shadows`]).
fn refuse_silencing(
    distro: &Distro<'_>,
    env: &DistroEnv,
    a: &lidguard_providers::agent::Agent,
) -> Result<(), WslError> {
    let var = |name: &str| env.var(name);
    let (Some(shadows), Some(location)) = (&a.hooks.shadows, (a.hooks.locate)(&var)) else {
        return Ok(());
    };
    let hooks = distro.read(&linux_path_text(&location.file))?;
    for path in (shadows.files)(&location) {
        let text = distro.read(&linux_path_text(&path))?;
        if let Some(why) = text.and_then(|t| (shadows.check)(hooks.as_deref(), &path, &t)) {
            return Err(WslError::Agent {
                agent: a.provider.display_name().to_owned(),
                problem: format!("{why}; nothing was changed"),
            });
        }
    }
    Ok(())
}

/// `wsl-hook-status` for one agent: the file (or the folder of event files) and what it holds.
pub fn hooks_status(
    distro: &Distro<'_>,
    env: &DistroEnv,
    p: Provider,
    cmd: &HookCommand,
    timeout: u32,
) -> Result<(String, HookStatus), WslError> {
    let a = agent_of(p)?;
    let file = hook_file(env, p)?;
    if let Some(dir) = event_files::RemoteEventDir::of(distro, a, &file, cmd) {
        return Ok((file.clone(), dir.status()?));
    }
    let status = distro.status_of(&file, |existing| a.hooks.status(existing, cmd, timeout))?;
    Ok((file, status))
}

/// `wsl-mcp-install` (or remove) for one agent; `exe` is the Linux path of `lidguard.exe`.
pub fn mcp(
    distro: &Distro<'_>,
    env: &DistroEnv,
    p: Provider,
    exe: &str,
    remove: bool,
    how: How<'_>,
) -> Result<Edited, WslError> {
    let mcp = mcp_of(p)?;
    let file = mcp_file(env, p)?;
    install_or_remove(
        distro,
        &file,
        &format!("mcp-{}", p.as_str()),
        remove,
        how,
        |existing| {
            mcp.status(existing, exe)
                .is_ok_and(|s| s.state != InstallState::Missing && !s.foreign)
        },
        |existing| mcp.install(existing, exe, false),
        |text, before| mcp.remove(text, exe, before),
    )
}

/// `wsl-mcp-status` for one agent.
pub fn mcp_status(
    distro: &Distro<'_>,
    env: &DistroEnv,
    p: Provider,
    exe: &str,
) -> Result<(String, McpStatus), WslError> {
    let mcp = mcp_of(p)?;
    let file = mcp_file(env, p)?;
    let status = distro.status_of(&file, |existing| mcp.status(existing, exe))?;
    Ok((file, status))
}

/// `wsl-provider-mcp-install` (or remove) into a JSON file inside the distro.
pub fn provider_mcp(
    distro: &Distro<'_>,
    file: &str,
    entry: &crate::mcp::ProviderEntry,
    exe: &str,
    remove: bool,
    how: How<'_>,
) -> Result<Edited, WslError> {
    let json = |existing: Option<&str>| crate::mcp::provider_json(entry, existing, exe);
    install_or_remove(
        distro,
        file,
        "provider-mcp",
        remove,
        how,
        |existing| {
            mcp_edits::status_json(existing, &json(existing))
                .is_ok_and(|s| s.state != InstallState::Missing && !s.foreign)
        },
        |existing| mcp_edits::install_json(existing, &json(existing), false),
        |text, before| mcp_edits::remove_json(text, &json(Some(text)), before),
    )
}

/// `wsl-provider-mcp-status` of a JSON file inside the distro.
pub fn provider_mcp_status(
    distro: &Distro<'_>,
    file: &str,
    entry: &crate::mcp::ProviderEntry,
    exe: &str,
) -> Result<McpStatus, WslError> {
    distro.status_of(file, |existing| {
        mcp_edits::status_json(existing, &crate::mcp::provider_json(entry, existing, exe))
    })
}

/// After the managed hook timeout changed to `timeout` seconds: in every installed distro,
/// rewrites the timeouts of lidguard's entries where an agent config already holds them (as
/// native configs are refreshed); agents without lidguard's entries are left alone. Returns a
/// line per change or failure. `windows_hook_exe` is the Windows path the entries run.
pub fn refresh_timeouts(
    places: &lidguard_ipc::Places,
    wsl: &dyn Wsl,
    windows_hook_exe: &str,
    timeout: u32,
) -> Vec<String> {
    let names = match distros(wsl) {
        Ok(names) => names,
        Err(e) => return vec![format!("WSL: cannot list the distros: {e}")],
    };
    let stamp = stamp();
    let how = How {
        dry_run: false,
        stamp: &stamp,
        places,
    };
    let mut lines = Vec::new();
    for name in names {
        let distro = Distro::new(wsl, Some(&name));
        let prepared = distro.env().and_then(|env| {
            let exe = distro.linux_path(windows_hook_exe)?;
            Ok((env, hook_command(&exe)))
        });
        let (env, cmd) = match prepared {
            Ok(prepared) => prepared,
            Err(e) => {
                lines.push(e.to_string());
                continue;
            }
        };
        for a in lidguard_providers::AGENTS
            .iter()
            .filter(|a| a.hooks.timeouts)
        {
            let p = a.provider;
            let Ok(file) = hook_file(&env, p) else {
                continue;
            };
            let Ok(Some(existing)) = distro.read(&file) else {
                continue;
            };
            let holds_ours = a
                .hooks
                .status(Some(&existing), &cmd, timeout)
                .is_ok_and(|s| s.state == InstallState::Drifted);
            if !holds_ours {
                continue;
            }
            match hooks(&distro, &env, p, &cmd, timeout, false, how) {
                Ok(_) => lines.push(format!(
                    "{}: {}: hook timeouts set to {timeout} s in {file}",
                    distro.label(),
                    p.display_name()
                )),
                Err(e) => lines.push(e.to_string()),
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What ssh hands the remote login shell reads back as the same words there, whatever
    /// they hold (checked with each POSIX shell this machine has).
    #[cfg(unix)]
    #[test]
    fn quoted_words_come_back_whole_from_posix_shells() {
        let words = [
            "plain",
            "two words",
            "it's",
            "'",
            "a\\b\\\\c",
            "$HOME `id` $(id) \"q\" ; | & * ? ~ #",
            "line one\nline two",
            "",
            ENV_SCRIPT,
        ];
        let line = words
            .iter()
            .map(|w| sh_quote(w))
            .collect::<Vec<_>>()
            .join(" ");
        let mut tried = 0;
        for shell in [
            "/bin/sh",
            "/bin/bash",
            "/bin/dash",
            "/usr/bin/zsh",
            "/bin/ksh",
        ] {
            if !Path::new(shell).exists() {
                continue;
            }
            tried += 1;
            let out = Command::new(shell)
                .arg("-c")
                .arg(format!("printf '%s\\0' {line}"))
                .output()
                .unwrap();
            assert!(out.status.success(), "{shell}");
            let back: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
            let expected: Vec<&[u8]> = words
                .iter()
                .map(|w| w.as_bytes())
                .chain([&b""[..]])
                .collect();
            assert_eq!(back, expected, "{shell}");
        }
        assert!(tried > 0, "no POSIX shell found");
    }

    #[cfg(unix)]
    #[test]
    fn a_wsl_exe_that_does_not_answer_is_given_up_on_and_named() {
        let started = std::time::Instant::now();
        let wsl = WslExe::at("/bin/sleep").with_timeout(std::time::Duration::from_millis(300));
        let err = wsl.run(&["30".to_owned()], b"").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(
            err.to_string().contains("/bin/sleep did not answer within"),
            "{err}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        // A program that answers is read whole, stdin included.
        let cat = WslExe::at("/bin/cat").run(&[], b"hello").unwrap();
        assert_eq!(cat.stdout, b"hello");
    }

    /// `wsl.exe --list --quiet` as it writes it: UTF-16LE with CRLF line ends (bytes as
    /// microsoft/WSL#4607 shows them).
    fn utf16(text: &str) -> Vec<u8> {
        text.encode_utf16().flat_map(u16::to_le_bytes).collect()
    }

    #[test]
    fn utf16_list_is_decoded_and_cleaned() {
        let bytes = utf16("Ubuntu-24.04\r\ndocker-desktop\r\n\r\n");
        assert!(bytes.contains(&0));
        assert_eq!(
            decode_distro_list(&bytes),
            vec!["Ubuntu-24.04".to_owned(), "docker-desktop".to_owned()]
        );
        let mut with_bom = vec![0xFF, 0xFE];
        with_bom.extend(utf16("Debian\r\n"));
        assert_eq!(decode_distro_list(&with_bom), vec!["Debian".to_owned()]);
    }

    #[test]
    fn utf8_list_with_wsl_utf8_and_stray_nuls() {
        assert_eq!(
            decode_distro_list(b"Ubuntu\r\n  Alpine \n\n"),
            vec!["Ubuntu".to_owned(), "Alpine".to_owned()]
        );
        assert!(decode_distro_list(b"").is_empty());
        assert!(decode_distro_list(&utf16("\r\n")).is_empty());
        // An odd trailing byte does not panic.
        assert_eq!(
            decode_distro_list(&[b'A', 0, b'B']),
            vec!["A\u{42}".to_owned()]
        );
    }

    #[test]
    fn command_lines() {
        assert_eq!(
            exec_args(None, "sh", &["-c", READ_SCRIPT, "lidguard-wsl", "/root/x"]),
            vec!["--exec", "sh", "-c", READ_SCRIPT, "lidguard-wsl", "/root/x"]
        );
        assert_eq!(
            exec_args(Some(" "), "true", &[]),
            vec!["--exec", "true"],
            "an empty name is the default distro"
        );
        assert_eq!(
            wslpath_args(Some("Ubuntu"), r"C:\Program Files\lidguard\lidguard.exe"),
            vec![
                "--distribution",
                "Ubuntu",
                "--exec",
                "wslpath",
                "-a",
                "-u",
                r"C:\Program Files\lidguard\lidguard.exe"
            ]
        );
    }

    #[test]
    fn env_lines_are_a_lookup() {
        let text = "HOME=/home/me\nCODEX_HOME=\nCLAUDE_CONFIG_DIR=/home/me/cc\n";
        let var = parse_env(text);
        assert_eq!(var("HOME"), Some("/home/me".into()));
        assert_eq!(var("CODEX_HOME"), None);
        assert_eq!(var("CLAUDE_CONFIG_DIR"), Some("/home/me/cc".into()));
        assert_eq!(var("NOPE"), None);
    }

    /// `tests/windows/fake-wsl.sh`: wsl.exe's stand-in, whose distro side is this machine with
    /// `home` as HOME.
    #[cfg(unix)]
    fn fake_wsl(home: &std::path::Path) -> WslExe {
        WslExe::at(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/windows/fake-wsl.sh"),
        )
        .with_env("FAKE_WSL_HOME", home)
    }

    /// The far side's files are read only when regular and small: a config that is a link to
    /// `/dev/zero`, a folder, or a 300 MB file is refused quickly, with at most a little more
    /// than the cap read.
    #[cfg(unix)]
    #[test]
    fn what_is_read_from_the_far_side_is_bounded() {
        assert!(READ_SCRIPT.contains(&format!("head -c {} ", MAX_CONFIG_BYTES + 1)));
        let home = tempfile::tempdir().unwrap();
        let wsl = fake_wsl(home.path());
        let distro = Distro::new(&wsl, Some("Ubuntu"));
        let claude = home.path().join(".claude");
        std::fs::create_dir_all(&claude).unwrap();
        let file = claude.join("settings.json");
        let f = file.to_str().unwrap();
        std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
        let started = std::time::Instant::now();
        let err = distro.read(f).unwrap_err().to_string();
        assert!(err.contains("is not a regular file"), "{err}");
        std::fs::remove_file(&file).unwrap();
        std::fs::create_dir(&file).unwrap();
        let err = distro.read(f).unwrap_err().to_string();
        assert!(err.contains("is not a regular file"), "{err}");
        std::fs::remove_dir(&file).unwrap();
        let big = std::fs::File::create(&file).unwrap();
        big.set_len(300 << 20).unwrap();
        let err = distro.read(f).unwrap_err().to_string();
        assert!(err.contains("is larger than 1 MiB"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        std::fs::write(&file, "{}\n").unwrap();
        assert_eq!(distro.read(f).unwrap().as_deref(), Some("{}\n"));
        // A far side that prints without end is cut off, not read whole.
        let endless = WslExe::at("sh");
        let err = endless
            .run(&["-c".into(), "exec cat /dev/zero".into()], b"")
            .unwrap_err()
            .to_string();
        assert!(err.contains("printed more than 2 MiB"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn the_distro_list_and_a_timeout_refresh_through_the_stand_in() {
        // Both fake distros share one home: the first refresh rewrites, the second finds the
        // entries current. A config without lidguard's entries gains none.
        let home = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let places = lidguard_ipc::Places::under(state.path());
        let wsl = fake_wsl(home.path());
        assert_eq!(distros(&wsl).unwrap(), vec!["Ubuntu", "Debian"]);
        std::fs::create_dir_all(home.path().join(".claude")).unwrap();
        std::fs::create_dir_all(home.path().join(".gemini")).unwrap();
        std::fs::write(home.path().join(".gemini/settings.json"), "{}\n").unwrap();
        let distro = Distro::new(&wsl, Some("Ubuntu"));
        let env = distro.env().unwrap();
        let stamp = stamp();
        let how = How {
            dry_run: false,
            stamp: &stamp,
            places: &places,
        };
        let cmd = hook_command("/mnt/c/lg/lidguard-hook.exe");
        let edited = hooks(&distro, &env, Provider::Claude, &cmd, 30, false, how).unwrap();
        assert!(matches!(
            edited[..],
            [Edited {
                action: crate::file::Action::Written { created: true },
                ..
            }]
        ));
        let lines = refresh_timeouts(&places, &wsl, r"C:\lg\lidguard-hook.exe", 600);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with("WSL distro Ubuntu: Claude Code: hook timeouts set to 600 s"),
            "{lines:?}"
        );
        let text = std::fs::read_to_string(home.path().join(".claude/settings.json")).unwrap();
        assert!(
            text.contains("\"timeout\": 600") && !text.contains("\"timeout\": 30"),
            "{text}"
        );
        assert_eq!(
            std::fs::read_to_string(home.path().join(".gemini/settings.json")).unwrap(),
            "{}\n"
        );
    }

    /// The scripts run for real in `sh` here (Linux): read, write with backup and mode kept,
    /// write through a symlink, delete with backup — both as ssh runs them (`sh -c`, input on
    /// stdin) and as a WSL distro gets them (the whole program on stdin, `sh` alone on the
    /// command line).
    #[cfg(unix)]
    #[test]
    fn scripts_behave_in_a_real_shell() {
        for on_stdin in [false, true] {
            scripts_behave(on_stdin);
        }
    }

    #[cfg(unix)]
    fn scripts_behave(on_stdin: bool) {
        use std::io::Write;
        use std::os::unix::fs::PermissionsExt;
        use std::process::{Command, Stdio};
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cfg/settings.json");
        let sh = |script: &str, args: &[&str], stdin: &[u8]| {
            let mut command = Command::new("sh");
            let input = if on_stdin {
                stdin_program(script, args, stdin).into_bytes()
            } else {
                command.args(["-c", script, "lidguard-wsl"]).args(args);
                stdin.to_vec()
            };
            let mut child = command
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(&input).unwrap();
            child.wait_with_output().unwrap()
        };
        let f = file.to_str().unwrap();
        assert_eq!(sh(READ_SCRIPT, &[f], b"").status.code(), Some(3));
        assert!(
            sh(WRITE_SCRIPT, &[f, "20260101000000"], b"one")
                .status
                .success()
        );
        assert_eq!(std::fs::read(&file).unwrap(), b"one");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert!(
            sh(WRITE_SCRIPT, &[f, "20260101000001"], b"two")
                .status
                .success()
        );
        assert_eq!(sh(READ_SCRIPT, &[f], b"").stdout, b"two");
        assert_eq!(
            std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o640
        );
        assert_eq!(
            std::fs::read(dir.path().join("cfg/settings.json.20260101000001.bak")).unwrap(),
            b"one"
        );
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(
            sh(WRITE_SCRIPT, &[link.to_str().unwrap(), "s3"], b"three")
                .status
                .success()
        );
        assert!(link.is_symlink());
        assert_eq!(std::fs::read(&file).unwrap(), b"three");
        assert!(sh(DELETE_SCRIPT, &[f, "s4"], b"").status.success());
        assert!(!file.exists());
        assert_eq!(
            std::fs::read(dir.path().join("cfg/settings.json.s4.bak")).unwrap(),
            b"three"
        );
        let env = sh(ENV_SCRIPT, &[], b"");
        let env = String::from_utf8(env.stdout).unwrap();
        assert!(env.lines().any(|l| l.starts_with("HOME=/")), "{env}");
        assert_eq!(env.lines().count(), 10, "{env}");

        // An executable put there runs, is the user's alone, and goes with its folder.
        let exe = dir.path().join("lib/lidguard/tool");
        let e = exe.to_str().unwrap();
        let bytes = b"#!/bin/sh\necho ran\n";
        assert!(sh(PUT_EXECUTABLE_SCRIPT, &[e], bytes).status.success());
        assert_eq!(std::fs::read(&exe).unwrap(), bytes);
        let mode = std::fs::metadata(&exe).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert_eq!(Command::new(&exe).output().unwrap().stdout, b"ran\n");
        assert!(sh(REMOVE_EXECUTABLE_SCRIPT, &[e], b"").status.success());
        assert!(!exe.exists() && !exe.parent().unwrap().exists());
        assert!(dir.path().join("lib").exists());

        // Paths with spaces, quotes and a newline, and input with every byte value, arrive
        // exactly; a failing script's status is the program's.
        let odd = dir.path().join("odd dir/it's \"a\"\nfile");
        let o = odd.to_str().unwrap();
        let every: Vec<u8> = (0..=255).collect();
        assert!(sh(PUT_EXECUTABLE_SCRIPT, &[o], &every).status.success());
        assert_eq!(std::fs::read(&odd).unwrap(), every);
        assert_eq!(sh("exit 7", &[], b"").status.code(), Some(7));
    }

    /// What a WSL distro's `sh` gets: nothing on the command line but `sh`, the rest a program
    /// on stdin whose input is base64 in a here-document.
    #[test]
    fn a_distro_gets_its_scripts_on_stdin() {
        assert_eq!(
            exec_args(Some("Ubuntu"), "sh", &[]),
            ["--distribution", "Ubuntu", "--exec", "sh"]
        );
        let program = stdin_program(READ_SCRIPT, &["/home/u/a b"], b"hi");
        assert_eq!(
            program,
            format!(
                "lidguard_input() {{\nbase64 -d <<'LIDGUARD_INPUT'\naGk=\nLIDGUARD_INPUT\n}}\n\
                 set -- '/home/u/a b'\nlidguard_input | (\n{READ_SCRIPT}\n)\n"
            )
        );
    }
}
