//! `lidguard service install|status|remove`: the daemon as a systemd user service (Linux), started
//! through socket activation: systemd holds lidguard's socket and starts `lidguard run-server`
//! on the first request, hands it the listening socket, and starts it again after an idle exit.
//! On-demand start by the CLI and the hooks keeps working without it.
//!
//! Facts (`man systemd.socket`, `man systemd.service`, `man sd_listen_fds`): a `.socket` unit's
//! `ListenStream=` names the socket path, `SocketMode=` and `DirectoryMode=` its permissions;
//! the service started for it receives the socket as descriptor 3 with `LISTEN_PID`/`LISTEN_FDS`;
//! user units live in `$XDG_CONFIG_HOME/systemd/user/`; `%` starts a specifier in unit files, so
//! a literal one is written `%%`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use lidguard_core::settings::Os;
use lidguard_ipc::Places;

use crate::cli::{ServiceAction, ServiceArgs};
use crate::output;

/// The first line of both units: only files carrying it are lidguard's.
const MARKER: &str = "# Managed by lidguard (service). Do not edit by hand.";

const SOCKET_UNIT: &str = "lidguard.socket";
const SERVICE_UNIT: &str = "lidguard.service";

/// The variables that decide where lidguard keeps its files: the service gets the values the
/// installing shell has, so both find the same socket, settings and database.
const PLACE_VARS: [&str; 4] = [
    "LIDGUARD_HOME",
    "XDG_CONFIG_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
];

pub(crate) fn run(places: &Places, args: &ServiceArgs) -> anyhow::Result<ExitCode> {
    let dir = unit_dir()?;
    match args.action {
        ServiceAction::Install => install(places, &dir, args.dry_run),
        ServiceAction::Status => status(&dir, args.json),
        ServiceAction::Remove => remove(&dir, args.dry_run),
    }
}

/// `$XDG_CONFIG_HOME/systemd/user`, else `~/.config/systemd/user`.
fn unit_dir() -> anyhow::Result<PathBuf> {
    Ok(super::config_home()?.join("systemd").join("user"))
}

/// A value as systemd reads it: `%` doubled, and quoted (with `\` and `"` escaped) when it holds
/// anything but plain path characters.
fn unit_value(text: &str) -> String {
    let text = text.replace('%', "%%");
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:=@,".contains(c))
    {
        text
    } else {
        format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// The socket unit for lidguard's socket at `socket`.
fn socket_text(socket: &Path) -> String {
    format!(
        "{MARKER}\n\
         [Unit]\n\
         Description=lidguard daemon socket (keeps the machine awake while AI coding agents work)\n\
         \n\
         [Socket]\n\
         ListenStream={}\n\
         SocketMode=0600\n\
         DirectoryMode=0700\n\
         \n\
         [Install]\n\
         WantedBy=sockets.target\n",
        socket.display().to_string().replace('%', "%%")
    )
}

/// The service unit running `exe run-server` with the installing shell's place variables
/// (`vars`: name and value, `None` when unset there).
fn service_text(exe: &Path, vars: &[(&str, Option<OsString>)]) -> String {
    let mut env = String::new();
    for (name, value) in vars {
        match value {
            Some(value) => env.push_str(&format!(
                "Environment={}\n",
                unit_value(&format!("{name}={}", value.to_string_lossy()))
            )),
            None => env.push_str(&format!("UnsetEnvironment={name}\n")),
        }
    }
    format!(
        "{MARKER}\n\
         [Unit]\n\
         Description=lidguard daemon (keeps the machine awake while AI coding agents work)\n\
         Requires={SOCKET_UNIT}\n\
         After={SOCKET_UNIT}\n\
         \n\
         [Service]\n\
         ExecStart={} run-server\n\
         {env}\
         Restart=on-failure\n",
        unit_value(&exe.display().to_string())
    )
}

fn place_vars() -> Vec<(&'static str, Option<OsString>)> {
    PLACE_VARS
        .iter()
        .map(|name| {
            (
                *name,
                lidguard_files::environment::var(name).filter(|v| !v.is_empty()),
            )
        })
        .collect()
}

/// Whether the unit file is lidguard's (`None`: not there).
fn ours(path: &Path) -> Option<bool> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(text.lines().next() == Some(MARKER))
}

fn systemctl(args: &[&str]) -> Result<String, String> {
    let out = std::process::Command::new("systemctl")
        .arg("--user")
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run systemctl: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if out.status.success() {
        Ok(text)
    } else {
        Err(format!(
            "{}{}",
            text,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Writes `text` to `path` through a temporary file renamed over it, readable by the user alone.
fn write_unit(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = path.parent().context("a unit file has a directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // Readable by the user alone, replaced atomically (systemd never reads half a unit).
    lidguard_files::atomic::write(path, text.as_bytes(), 0o600)
        .with_context(|| format!("cannot write {}", path.display()))
}

fn install(places: &Places, dir: &Path, dry_run: bool) -> anyhow::Result<ExitCode> {
    if Os::current() != Os::Linux {
        bail!("`lidguard service` writes systemd user units, which only Linux has");
    }
    let exe = std::env::current_exe().context("cannot find this lidguard executable")?;
    let units = [
        (dir.join(SOCKET_UNIT), socket_text(&places.socket())),
        (dir.join(SERVICE_UNIT), service_text(&exe, &place_vars())),
    ];
    for (path, _) in &units {
        if ours(path) == Some(false) {
            bail!(
                "{} exists but was not written by lidguard, so it was left untouched; move it \
                 away and run the command again",
                path.display()
            );
        }
    }
    if dry_run {
        for (path, text) in &units {
            output::line(&format!("would write {}:", path.display()))?;
            output::line(text.trim_end())?;
        }
        output::line("would run: systemctl --user daemon-reload")?;
        output::line("would run: systemctl --user enable --now lidguard.socket")?;
        return Ok(ExitCode::SUCCESS);
    }
    for (path, text) in &units {
        write_unit(path, text)?;
        output::line(&format!("wrote {}", path.display()))?;
    }
    let enabled =
        systemctl(&["daemon-reload"]).and_then(|_| systemctl(&["enable", "--now", SOCKET_UNIT]));
    match enabled {
        Ok(_) => {
            output::line("enabled lidguard.socket: systemd starts the daemon on the first request")?
        }
        Err(e) => output::warn(&format!(
            "the units are written but systemd's user manager did not take them ({e}); run \
             `systemctl --user daemon-reload && systemctl --user enable --now lidguard.socket` \
             in your session"
        )),
    }
    Ok(ExitCode::SUCCESS)
}

fn status(dir: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let mut installed = true;
    let mut units = Vec::new();
    for name in [SOCKET_UNIT, SERVICE_UNIT] {
        let path = dir.join(name);
        let state = match ours(&path) {
            None => {
                installed = false;
                "not installed"
            }
            Some(true) => "installed",
            Some(false) => "present but not written by lidguard (left alone)",
        };
        units.push((path, state));
    }
    let socket = installed.then(|| {
        (
            systemctl(&["is-enabled", SOCKET_UNIT]).unwrap_or_else(|e| e),
            systemctl(&["is-active", SOCKET_UNIT]).unwrap_or_else(|e| e),
        )
    });
    if json {
        output::json(&serde_json::json!({
            "installed": installed,
            "units": units
                .iter()
                .map(|(path, state)| serde_json::json!({"file": path, "state": state}))
                .collect::<Vec<_>>(),
            "socket": socket
                .as_ref()
                .map(|(enabled, active)| serde_json::json!({"enabled": enabled, "active": active})),
        }))?;
    } else {
        for (path, state) in &units {
            output::line(&format!("{}: {state}", path.display()))?;
        }
        if let Some((enabled, active)) = &socket {
            output::line(&format!("lidguard.socket: {enabled}, {active}"))?;
        }
    }
    Ok(if installed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// lidguard's unit files in the user's unit folder (what `uninstall` removes; none but on
/// Linux).
pub(crate) fn installed_units() -> anyhow::Result<Vec<PathBuf>> {
    if Os::current() != Os::Linux {
        return Ok(Vec::new());
    }
    Ok(units_in(&unit_dir()?))
}

fn units_in(dir: &Path) -> Vec<PathBuf> {
    [SOCKET_UNIT, SERVICE_UNIT]
        .iter()
        .map(|name| dir.join(name))
        .filter(|path| ours(path) == Some(true))
        .collect()
}

fn remove(dir: &Path, dry_run: bool) -> anyhow::Result<ExitCode> {
    if dry_run {
        for path in &units_in(dir) {
            output::line(&format!("would delete {}", path.display()))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let removed = remove_in(dir)?;
    for path in &removed {
        output::line(&format!("removed {}", path.display()))?;
    }
    if removed.is_empty() {
        output::line("nothing to remove")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `service remove` without a word: the units disabled, stopped and deleted; returns them.
pub(crate) fn remove_units() -> anyhow::Result<Vec<PathBuf>> {
    remove_in(&unit_dir()?)
}

fn remove_in(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let paths = units_in(dir);
    if !paths.is_empty() {
        let _ = systemctl(&["disable", "--now", SOCKET_UNIT, SERVICE_UNIT]);
    }
    for path in &paths {
        std::fs::remove_file(path).with_context(|| format!("cannot delete {}", path.display()))?;
    }
    if !paths.is_empty() {
        let _ = systemctl(&["daemon-reload"]);
    }
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_escaped_for_systemd() {
        assert_eq!(unit_value("/usr/bin/lidguard"), "/usr/bin/lidguard");
        assert_eq!(
            unit_value("/home/a b/100%/lidguard"),
            "\"/home/a b/100%%/lidguard\""
        );
        assert_eq!(unit_value("X=\"q\""), "\"X=\\\"q\\\"\"");
    }

    #[test]
    fn the_service_carries_the_installing_places() {
        let text = service_text(
            Path::new("/opt/lg/lidguard"),
            &[
                ("LIDGUARD_HOME", Some("/tmp/h".into())),
                ("XDG_RUNTIME_DIR", None),
            ],
        );
        assert!(text.starts_with(MARKER));
        assert!(text.contains("ExecStart=/opt/lg/lidguard run-server\n"));
        assert!(text.contains("Environment=LIDGUARD_HOME=/tmp/h\n"));
        assert!(text.contains("UnsetEnvironment=XDG_RUNTIME_DIR\n"));
        assert!(
            socket_text(Path::new("/run/user/1000/lidguard/lidguard.sock"))
                .contains("ListenStream=/run/user/1000/lidguard/lidguard.sock\n")
        );
    }
}
