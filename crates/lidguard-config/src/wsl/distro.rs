//! One distro as the edits see it: where its agents keep their files, read and written by small
//! `sh` scripts through `wsl.exe` or over ssh.

use std::path::Path;
use std::process::Output;

use lidguard_providers::agent::Env;
use lidguard_providers::install::InstallError;

use super::WslError;
use super::command::{
    DELETE_SCRIPT, ENV_SCRIPT, MAX_CONFIG_BYTES, PUT_EXECUTABLE_SCRIPT, READ_SCRIPT,
    REMOVE_EXECUTABLE_SCRIPT, WRITE_SCRIPT, exec_args, parse_env, sh_quote, stdin_program,
};
use super::exe::Wsl;
use crate::agents::Location;

/// One distro (`None`: the default one), reached through `wsl.exe`, or a Linux host reached
/// through `ssh`.
pub struct Distro<'a> {
    wsl: &'a dyn Wsl,
    pub(super) side: Side,
}

/// Where a [`Distro`]'s commands run.
pub(super) enum Side {
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
    pub(super) fn config_error(
        &self,
        file: &str,
        source: InstallError,
        changed_nothing: bool,
    ) -> WslError {
        WslError::Config {
            distro: self.label(),
            file: file.to_owned(),
            source,
            changed_nothing,
        }
    }

    /// Reads `file` there and judges it with `status` (read only: nothing changes).
    pub(super) fn status_of<T>(
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

    pub(super) fn exec(
        &self,
        program: &str,
        args: &[&str],
        stdin: &[u8],
    ) -> Result<Output, WslError> {
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

    pub(super) fn sh(&self, script: &str, args: &[&str], stdin: &[u8]) -> Result<Output, WslError> {
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

    pub(super) fn failed(&self, what: &str, out: &Output) -> WslError {
        WslError::Failed {
            distro: self.label(),
            what: what.to_owned(),
            code: out.status.code().unwrap_or(-1),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        }
    }

    pub(super) fn unusable(&self, problem: String) -> WslError {
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
    pub(super) fn forget(&self, file: &str) -> Result<(), WslError> {
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

    pub(super) fn write(&self, file: &str, text: &str, stamp: &str) -> Result<(), WslError> {
        self.script(WRITE_SCRIPT, &[file, stamp], text.as_bytes(), "writing")
    }

    pub(super) fn delete(&self, file: &str, stamp: &str) -> Result<(), WslError> {
        self.script(DELETE_SCRIPT, &[file, stamp], b"", "deleting")
    }

    /// Runs one of the scripts above on `args` (the first is the file), failing with `doing`
    /// the file when the script does.
    pub(super) fn script(
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
    pub(super) fn file(&self, locate: fn(Env<'_>) -> Option<Location>) -> Option<String> {
        let var = |name: &str| self.var(name);
        locate(&var).map(|l| linux_path_text(&l.file))
    }
}

/// A path built with the host's separators as the Linux path it stands for.
pub(super) fn linux_path_text(path: &Path) -> String {
    path.display().to_string().replace('\\', "/")
}
