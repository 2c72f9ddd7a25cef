//! `lidguard doctor [--json]`: one ✓/✗ list of what lidguard needs on this machine, each ✗
//! with what to do about it, and each line a report a user can paste into an issue.

use std::process::ExitCode;

use lidguard_core::settings::Os;
use lidguard_ipc::client::ClientError;
use lidguard_ipc::{Daemon, Places};
use lidguard_platform::autostart;
use lidguard_platform::sources::{self, Roots};
use serde::Serialize;

use super::hook_config;
use super::permission;
use super::status::{battery_text, current_lid};
use crate::output;

/// One line of the report.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Check {
    /// What was checked: `executables`, `hooks: Claude Code`, `daemon`, `power`, …
    area: String,
    ok: bool,
    /// Something lidguard cannot check: the user's to do (shown with `!`, not a failure).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    unchecked: bool,
    /// What was found.
    detail: String,
    /// What to do, for a ✗.
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

impl Check {
    fn ok(area: impl Into<String>, detail: impl Into<String>) -> Check {
        Check {
            area: area.into(),
            ok: true,
            unchecked: false,
            detail: detail.into(),
            fix: None,
        }
    }

    fn failed(area: impl Into<String>, detail: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            area: area.into(),
            ok: false,
            unchecked: false,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    /// The check as `doctor` prints it: `✓`, `✗` or, for what lidguard cannot see, `!`; then
    /// what to do.
    fn lines(&self) -> Vec<String> {
        let (mark, then) = match (self.ok, self.unchecked) {
            (true, true) => ("!", "make sure"),
            (true, false) => ("✓", "fix"),
            (false, _) => ("✗", "fix"),
        };
        let mut lines = vec![format!("{mark} {}: {}", self.area, self.detail)];
        lines.extend(self.fix.as_ref().map(|fix| format!("    {then}: {fix}")));
        lines
    }

    /// What lidguard cannot see for itself, with what the user should make sure of.
    fn unchecked(area: impl Into<String>, detail: impl Into<String>, to_do: &str) -> Check {
        Check {
            area: area.into(),
            ok: true,
            unchecked: true,
            detail: detail.into(),
            fix: Some(to_do.to_owned()),
        }
    }
}

pub(crate) fn run(places: &Places, json: bool) -> anyhow::Result<ExitCode> {
    let checks = checks(places);
    let healthy = checks.iter().all(|c| c.ok);
    if json {
        output::json(&report_json(&checks))?;
    } else {
        for line in checks.iter().flat_map(Check::lines) {
            output::marked_line(&line)?;
        }
    }
    Ok(if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `doctor --json`'s document: `ok` and the checks. Whether all passed, with it.
pub(crate) fn json_report(places: &Places) -> (serde_json::Value, bool) {
    let checks = checks(places);
    (report_json(&checks), checks.iter().all(|c| c.ok))
}

fn report_json(checks: &[Check]) -> serde_json::Value {
    serde_json::json!({"ok": checks.iter().all(|c| c.ok), "checks": checks})
}

/// Every check, in the order they are shown.
fn checks(places: &Places) -> Vec<Check> {
    let mut checks = vec![executables()];
    let reports = hook_config::reports(places, Some("all"));
    checks.extend(hooks(places, &reports));
    checks.extend(agents_keep_awake(&reports));
    checks.push(daemon(places));
    checks.extend(power());
    // Linux's own: the polkit rule root installs, the user units.
    if Os::current() == Os::Linux {
        checks.push(permission_rule());
        checks.push(service());
    }
    checks.push(tray());
    checks.push(phone(places));
    checks.extend(notices());
    checks.extend(machine());
    checks
}

/// The agents that keep the machine awake by themselves (Codex's `prevent_idle_sleep`, Qwen
/// Code's `preventSystemSleep`, Copilot's `keepAlive`, Claude Code's `caffeinate` on macOS):
/// named, with what they cover. Each holds off idle sleep only; none keeps a closed lid awake
/// (macOS sleeps on a closed lid whatever the idle assertions; Windows' SetThreadExecutionState
/// "cannot be used to prevent the user from putting the computer to sleep"; logind's lid switch
/// ignores sleep locks by default, `LidSwitchIgnoreInhibited=yes`). Information, never a failure.
fn agents_keep_awake(reports: &Reports) -> Vec<Check> {
    let Ok(reports) = reports else {
        return Vec::new();
    };
    reports
        .iter()
        .filter(|r| r.skipped.is_none())
        .filter_map(|r| {
            let setting = r.agent_keep_awake.as_ref()?;
            let name = r.display_name();
            Some(Check::ok(
                format!("own keep-awake: {name}"),
                format!(
                    "{name} keeps the machine from idle sleep itself while it works ({setting}); \
                     not with the lid closed: lidguard holds the lid"
                ),
            ))
        })
        .collect()
}

/// This executable and the hook executable the agents' entries run.
fn executables() -> Check {
    let area = "executables";
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            return Check::failed(area, format!("cannot find lidguard itself: {e}"), REINSTALL);
        }
    };
    match hook_config::hook_exe() {
        Ok(hook) if hook.is_file() => {
            Check::ok(area, format!("{} and {}", exe.display(), hook.display()))
        }
        Ok(hook) => Check::failed(area, format!("{} is missing", hook.display()), REINSTALL),
        Err(e) => Check::failed(area, format!("{e:#}"), REINSTALL),
    }
}

const REINSTALL: &str = "install lidguard again (`cargo install --path crates/lidguard` puts \
                         lidguard and lidguard-hook side by side)";

type Reports = anyhow::Result<Vec<lidguard_config::hooks::Report>>;

/// Each agent found on this machine: lidguard's entries as its status reads them.
fn hooks(places: &Places, reports: &Reports) -> Vec<Check> {
    let reports = match reports {
        Ok(reports) => reports,
        Err(e) => {
            return vec![Check::failed(
                "hooks",
                format!("{e:#}"),
                "see the line above",
            )];
        }
    };
    let found: Vec<_> = reports.iter().filter(|r| r.skipped.is_none()).collect();
    let unhooked = lidguard_config::choices::unhooked(places);
    if found.is_empty() {
        return vec![Check::failed(
            "hooks",
            "no agent found (no agent's config folder exists), so no agent tells lidguard it works",
            "install an agent, run it once, then `lidguard hook-install --provider all`",
        )];
    }
    found
        .into_iter()
        .map(|r| {
            let name = r.display_name();
            let area = format!("hooks: {name}");
            let state = r.state.unwrap_or("unknown");
            let file = r
                .file
                .as_ref()
                .map_or_else(String::new, |f| format!(" ({})", f.display()));
            if r.healthy {
                return Check::ok(area, format!("{state}{file}"));
            }
            let chosen = r.provider.parse().is_ok_and(|p| unhooked.contains(&p));
            if chosen && state == "missing" {
                return Check::ok(
                    area,
                    format!(
                        "unhooked, as you chose (`lidguard hook-remove`){file}: lidguard does not \
                         hear this agent; `lidguard hook-install --provider {}` hooks it again",
                        r.provider
                    ),
                );
            }
            let gone = r
                .gone_programs
                .iter()
                .map(|g| format!("the program its entries run is gone: {g}"));
            let why = r
                .error
                .iter()
                .cloned()
                .chain(gone)
                .chain(r.drift.iter().cloned())
                .chain(r.warnings.iter().cloned())
                .next()
                .or_else(|| {
                    (!r.missing_events.is_empty())
                        .then(|| format!("missing {}", r.missing_events.join(", ")))
                })
                .unwrap_or_default();
            let detail = if why.is_empty() {
                format!("{state}{file}")
            } else {
                format!("{state}{file}: {why}")
            };
            Check::failed(
                area,
                detail,
                format!(
                    "`lidguard hook-install --provider {}` (then `lidguard hook-status --provider \
                     {}` shows every detail)",
                    r.provider, r.provider
                ),
            )
        })
        .collect()
}

/// The daemon, if it runs: its version, and what it says about protection.
fn daemon(places: &Places) -> Check {
    let area = "daemon";
    match Daemon::new(places).status() {
        Ok(status) => {
            let mine = env!("CARGO_PKG_VERSION");
            if status.daemon_version != mine {
                return Check::failed(
                    area,
                    format!(
                        "pid {} runs version {}, this lidguard is {mine}",
                        status.daemon_pid, status.daemon_version
                    ),
                    "end the old daemon (`kill` that pid); the next hook or command starts \
                     this version",
                );
            }
            match &status.protection.unavailable_reason {
                Some(why) => Check::failed(
                    area,
                    format!("pid {}: protection unavailable: {why}", status.daemon_pid),
                    "see the power line below",
                ),
                None => Check::ok(area, format!("pid {}, version {mine}", status.daemon_pid)),
            }
        }
        Err(ClientError::Refused(why) | ClientError::Protocol(why)) => Check::failed(
            area,
            format!("it did not return a status: {why}"),
            "see lidguard's log (`lidguard status` names it)",
        ),
        Err(ClientError::NotRunning { .. }) => Check::ok(
            area,
            "not running; the first hook event or command starts it",
        ),
        Err(e) => Check::failed(
            area,
            e.to_string(),
            "see lidguard's log (`lidguard status` names it)",
        ),
    }
}

/// The OS backend: a test lock taken and released (never a suspend).
fn power() -> Vec<Check> {
    let area = "power";
    match permission::power_check() {
        Ok(c) => {
            let lid = match &c.lid_refused {
                None => Check::ok("closed lid", "the lid-switch lock was granted and released"),
                Some(refused) => Check::failed("closed lid", refused.message(), refused.fix()),
            };
            let delay = match &c.delay {
                Ok(d) => format!("; {d} in delay mode"),
                Err(why) => format!("; delay mode refused ({why}): sleep is blocked instead"),
            };
            let detail = format!(
                "{} granted and released {}{delay}; CanSuspend {}",
                c.backend,
                c.locks,
                c.can_suspend.as_deref().unwrap_or("?")
            );
            let held = match &c.os_shows {
                Some(missing) if !missing.is_empty() => Check::failed(
                    area,
                    format!(
                        "{detail}; but the OS's own list of held locks lacks {}",
                        missing.join(", ")
                    ),
                    "the backend answered yet nothing is held: report this line (with `lidguard \
                     doctor --json`)",
                ),
                Some(_) => Check::ok(area, format!("{detail}; the OS listed each while held")),
                None => Check::ok(area, detail),
            };
            vec![held, lid]
        }
        Err(failure) => vec![Check::failed(area, failure.message(), failure.fix())],
    }
}

/// The polkit rule: only needed when logind refuses a lock (the power line says so); a rule
/// written for another user is a ✗, since it lets that user, not this one.
fn permission_rule() -> Check {
    use lidguard_platform::polkit::{self, RuleState};
    let dir = std::path::Path::new(polkit::RULES_DIR);
    let state = polkit::status(dir);
    let text = format!(
        "{}: {}",
        polkit::rule_path(dir).display(),
        permission::rule_state_text(&state)
    );
    match (&state, permission::current_user()) {
        (RuleState::InstalledFor(owner), Some(me)) if *owner != me => Check::failed(
            "permission rule",
            text,
            format!("`sudo lidguard linux-permission install --user {me}` writes it for you"),
        ),
        (RuleState::Unreadable(_), _) => Check::failed(
            "permission rule",
            text,
            "`sudo lidguard linux-permission status` says more; `sudo lidguard linux-permission \
             remove` takes lidguard's rule away",
        ),
        (RuleState::NotInstalled, _) => Check::ok(
            "permission rule",
            format!("{text} (needed only when the power line says a lock was refused)"),
        ),
        _ => Check::ok("permission rule", text),
    }
}

/// The systemd user service: optional (the daemon starts on demand without it).
fn service() -> Check {
    match super::service::installed_units() {
        Ok(units) if units.is_empty() => Check::ok(
            "service",
            "not installed; the daemon starts on demand (`lidguard service install` adds socket \
             activation)",
        ),
        Ok(units) => Check::ok(
            "service",
            format!(
                "{} (`lidguard service status` says what systemd makes of them)",
                units
                    .iter()
                    .map(|u| u.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        Err(e) => Check::failed(
            "service",
            format!("{e:#}"),
            "set HOME (or XDG_CONFIG_HOME) so the user units can be found",
        ),
    }
}

/// The tray: started at login by its entry, or how to have it.
fn tray() -> Check {
    if autostart::foreign().unwrap_or(false) {
        let place = autostart::place().unwrap_or_default();
        return Check::failed(
            "tray",
            format!(
                "{place} is there and lidguard did not write it: lidguard left it as it is, and \
                 its tray does not start at login"
            ),
            "move that entry away if it is not yours on purpose, then `lidguard setup`",
        );
    }
    match autostart::installed() {
        Ok(true) => Check::ok(
            "tray",
            format!(
                "starts at login ({})",
                autostart::place().unwrap_or_default()
            ),
        ),
        Ok(false) if autostart::wanted() => Check::ok(
            "tray",
            "not started at login (`lidguard setup` adds it; `lidguard tray` starts it now)",
        ),
        Ok(false) => Check::ok("tray", "no desktop session here"),
        Err(e) => Check::failed("tray", e.to_string(), autostart::FIND_IT),
    }
}

/// The phone: off, or which ntfy server it is set to (never the topic or token, which are
/// secrets in a report pasted into an issue).
fn phone(places: &Places) -> Check {
    use lidguard_core::settings::ClosedLidPermissionRequestDecision as Decision;
    let settings = match lidguard_ipc::settings_file::load_or_default(
        &places.settings_file(),
        lidguard_core::settings::Os::current(),
    ) {
        Ok(settings) => settings,
        Err(e) => {
            return Check::failed(
                "phone",
                format!("the settings file cannot be read: {e}"),
                "`lidguard settings` says what is wrong with it",
            );
        }
    };
    let remote = settings.closed_lid_permission_request_decision == Decision::Remote;
    let server = settings
        .ntfy_url
        .split('/')
        .take(3)
        .collect::<Vec<_>>()
        .join("/");
    match lidguard_daemon::probe_phone(&settings) {
        None if remote => Check::failed(
            "phone",
            format!(
                "closed-lid permission requests go to your phone (`remote`), but no phone is \
                 set: every one falls back to `{}`",
                settings.remote_decision_fallback.as_str()
            ),
            "set the phone (`lidguard settings --ntfy-url https://ntfy.sh/<your topic>`), or \
             choose another decision (`lidguard settings \
             --closed-lid-permission-request-decision deny`)",
        ),
        None => Check::ok("phone", "off (`lidguard settings --ntfy-url` turns it on)"),
        Some(Ok(())) => Check::ok(
            "phone",
            format!("ntfy through {server}: the server answers and the reply topic can be read"),
        ),
        Some(Err(e)) => Check::failed(
            "phone",
            format!("ntfy through {server} cannot be used: {e}"),
            "check the address and that the server is up (`lidguard settings --ntfy-url`), and \
             for a protected topic the token (`lidguard settings --ntfy-token`); until then \
             nothing reaches your phone and remote decisions fall back",
        ),
    }
}

/// Where desktop notices go, when the OS asks the user to allow them first (macOS): lidguard
/// cannot see that setting, so it is shown as the user's to make sure of.
fn notices() -> Option<Check> {
    lidguard_platform::notify::PERMISSION.map(|to_do| {
        Check::unchecked(
            "desktop notices",
            "posted through osascript (Notification Center lists them under Script Editor)",
            to_do,
        )
    })
}

/// The lid, displays and battery as the daemon reads them.
fn machine() -> Vec<Check> {
    let roots = Roots::from_env();
    let lid = match current_lid(&roots) {
        Ok(lid) => Check::ok("lid", lid.to_string()),
        Err(e) => Check::failed(
            "lid",
            format!("{e:#}"),
            "without a lid reading lidguard treats the lid as open",
        ),
    };
    let visible = sources::visible_displays(&roots, false);
    let external = sources::visible_displays(&roots, true);
    let displays = Check::ok(
        "displays",
        format!("{visible} connected ({external} external)"),
    );
    let battery = match sources::battery(&roots) {
        Some(b) => Check::ok(
            "battery",
            battery_text(Some(&b)).trim_start_matches(" · ").to_owned(),
        ),
        None => Check::ok("battery", "none found (the battery floor does not apply)"),
    };
    vec![lid, displays, battery]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What lidguard cannot see is neither a ✓ nor a ✗: marked `!`, with what to make sure of,
    /// and it does not fail `doctor`.
    #[test]
    fn a_check_lidguard_cannot_make_is_shown_as_the_users_to_do() {
        let notices = Check::unchecked(
            "desktop notices",
            "posted through osascript (Notification Center lists them under Script Editor)",
            lidguard_platform::notify::MACOS_PERMISSION,
        );
        assert!(notices.ok);
        let lines = notices.lines();
        assert_eq!(
            lines[0],
            "! desktop notices: posted through osascript (Notification Center lists them under \
             Script Editor)"
        );
        assert!(
            lines[1].starts_with(
                "    make sure: macOS shows lidguard's notices only once Script \
                                  Editor may post notifications"
            ) && lines[1]
                .ends_with("System Settings → Notifications → Script Editor → Allow notifications"),
            "{lines:?}"
        );
        let json = serde_json::to_value(&notices).unwrap();
        assert_eq!(json["unchecked"], true);
        assert_eq!(Check::ok("lid", "Open").lines(), ["✓ lid: Open".to_owned()]);
        let failed = Check::failed("daemon", "not answering", "lidguard start");
        assert_eq!(
            failed.lines(),
            ["✗ daemon: not answering", "    fix: lidguard start"]
        );
        assert!(
            serde_json::to_value(&failed)
                .unwrap()
                .get("unchecked")
                .is_none()
        );
    }
}
