//! `lidguard macos-permission status|check|install|remove`: the sudoers drop-in that lets
//! lidguard run exactly the `pmset` invocations it needs, and the launchd job that puts
//! `SleepDisabled` back when lidguard cannot.
//!
//! The files are plain text written the same way on every system, so the command also runs
//! (hidden) on Linux, where the tests use it with `--sudoers-dir` and `--home`; `launchctl` and
//! `pmset` are only run on macOS.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use lidguard_core::settings::Os;
use lidguard_ipc::Places;
use lidguard_platform::sudoers::{self, Installed, RuleState};
use lidguard_platform::{account, launchd, pmset};
use serde_json::json;

use crate::cli::{MacosPermissionArgs, PermissionAction};
use crate::output;

/// Whether this is the Mac the rule is for (elsewhere the files are written for tests, nothing
/// is loaded or asked).
const ON_MAC: bool = matches!(Os::current(), Os::MacOs);

/// The user the rule and the job are for, with their home and ids.
struct Target {
    name: String,
    home: PathBuf,
    /// `(uid, gid)` when the account exists here.
    ids: Option<(u32, u32)>,
}

pub(crate) fn run(places: &Places, args: &MacosPermissionArgs) -> anyhow::Result<ExitCode> {
    let dir = args
        .sudoers_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(sudoers::SUDOERS_DIR));
    let target = target(args)?;
    match args.action {
        PermissionAction::Status => status(places, &dir, &target, args.json),
        PermissionAction::Check => check(args.json),
        PermissionAction::Install => install(&dir, &target, args.dry_run),
        PermissionAction::Remove => remove(&dir, &target, args.dry_run),
    }
}

/// `--user`, else the user who ran `sudo`, else this user; the home from `--home` or the
/// account.
fn target(args: &MacosPermissionArgs) -> anyhow::Result<Target> {
    let name = match &args.user {
        Some(user) => user.clone(),
        None => lidguard_files::environment::text("SUDO_USER")
            .filter(|u| !u.is_empty() && u != "root")
            .or_else(|| lidguard_files::environment::text("USER").filter(|u| !u.is_empty()))
            .context("cannot tell which user the rule is for; pass --user NAME")?,
    };
    let account = account::by_name(&name);
    let home = match (&args.home, &account) {
        (Some(home), _) => home.clone(),
        (None, Some(account)) => account.home.clone(),
        (None, None) => bail!("there is no user {name:?} here; pass --user NAME (and --home DIR)"),
    };
    Ok(Target {
        name,
        home,
        ids: account.map(|a| (a.uid, a.gid)),
    })
}

fn rule_text(state: &RuleState) -> String {
    match state {
        RuleState::NotInstalled => "not installed".to_owned(),
        RuleState::Foreign => "present but not written by lidguard (left alone)".to_owned(),
        RuleState::InstalledFor {
            user,
            current: true,
        } => format!("installed for {user}"),
        RuleState::InstalledFor {
            user,
            current: false,
        } => format!("installed for {user}, but older than this lidguard's: run install again"),
        RuleState::Unreadable(why) => format!("cannot be inspected: {why}"),
    }
}

/// The launchd job: `None` missing, `Some(true)` lidguard's, `Some(false)` someone else's (or
/// a link, which lidguard never follows in a user's home).
fn job_state(home: &Path) -> Option<bool> {
    match launchd::job::read(home) {
        Ok(Some(text)) => Some(launchd::is_ours(&text)),
        Ok(None) => None,
        Err(_) => launchd::agent_path(home)
            .symlink_metadata()
            .is_ok()
            .then_some(false),
    }
}

fn status(places: &Places, dir: &Path, target: &Target, as_json: bool) -> anyhow::Result<ExitCode> {
    let rule = sudoers::status(dir);
    let job = job_state(&target.home);
    let sleep_disabled = ON_MAC
        .then(|| pmset::Pmset::new(0).settings())
        .map(|read| read.map(|text| pmset::sleep_disabled(&text)));
    // As root, the user's database is theirs to open (SQLite would make its journal root's).
    let pending = if places.someone_elses().is_some() {
        Err("run `lidguard macos-permission status` without sudo to see it".to_owned())
    } else if places.database().exists() {
        lidguard_daemon::StoreBackups::open(places)
            .and_then(|b| lidguard_platform::sleep_disabled::pending(&b))
            .map_err(|e| e.to_string())
    } else {
        Ok(false)
    };
    if as_json {
        output::json(&json!({
            "user": target.name,
            "sudoersFile": sudoers::rule_path(dir),
            "rule": rule_text(&rule),
            "launchdJob": launchd::agent_path(&target.home),
            "launchdJobInstalled": job == Some(true),
            "sleepDisabled": sleep_disabled.as_ref().and_then(|r| r.as_ref().ok()),
            "backupPending": pending.as_ref().ok(),
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    output::line(&format!("user: {}", target.name))?;
    output::line(&format!(
        "sudoers rule {}: {}",
        sudoers::rule_path(dir).display(),
        rule_text(&rule)
    ))?;
    output::line(&format!(
        "launchd job {}: {}",
        launchd::agent_path(&target.home).display(),
        match job {
            None => "not installed",
            Some(true) => "installed",
            Some(false) => "present but not written by lidguard (left alone)",
        }
    ))?;
    match sleep_disabled {
        Some(Ok(value)) => output::line(&format!("SleepDisabled now: {}", u8::from(value)))?,
        Some(Err(e)) => output::line(&format!("SleepDisabled now: unknown ({e})"))?,
        None => {}
    }
    match pending {
        Ok(true) => output::line(
            "a backup of SleepDisabled is pending (a daemon holds the change, or one died \
             with it: any lidguard command restores it when no daemon runs)",
        )?,
        Ok(false) => output::line("no SleepDisabled backup pending")?,
        Err(e) => output::line(&format!("backups: cannot be read ({e})"))?,
    }
    Ok(ExitCode::SUCCESS)
}

/// What works, without changing anything: `sudo -n -l` for each invocation, `pmset -g`.
fn check(as_json: bool) -> anyhow::Result<ExitCode> {
    if !ON_MAC {
        bail!("`macos-permission check` asks macOS's sudo and pmset; run it on a Mac");
    }
    let mut results = Vec::new();
    for args in sudoers::allowed_invocations() {
        let mut line = vec![pmset::SUDO.to_owned(), "-n".into(), "-l".into()];
        line.push(pmset::PMSET.to_owned());
        line.extend(args.iter().cloned());
        let allowed = std::process::Command::new(&line[0])
            .args(&line[1..])
            .stdin(std::process::Stdio::null())
            .output()
            .is_ok_and(|o| o.status.success());
        results.push((format!("{} {}", pmset::PMSET, args.join(" ")), allowed));
    }
    let read = pmset::Pmset::new(0).settings();
    let ok = read.is_ok() && results.iter().all(|(_, allowed)| *allowed);
    if as_json {
        output::json(&json!({
            "ok": ok,
            "pmsetReadable": read.is_ok(),
            "allowedWithoutPassword": results.iter().map(|(c, a)| json!({"command": c, "allowed": a})).collect::<Vec<_>>(),
        }))?;
    } else {
        for (command, allowed) in &results {
            output::line(&format!(
                "{}: sudo -n {command}",
                if *allowed { "ok" } else { "missing" }
            ))?;
        }
        output::line(&match &read {
            Ok(text) => format!(
                "ok: pmset -g (SleepDisabled {})",
                u8::from(pmset::sleep_disabled(text))
            ),
            Err(e) => format!("missing: pmset -g ({e})"),
        })?;
        if !ok {
            output::line("run `sudo lidguard macos-permission install` to allow what is missing")?;
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn install(dir: &Path, target: &Target, dry_run: bool) -> anyhow::Result<ExitCode> {
    let exe = std::env::current_exe().context("cannot find this lidguard executable")?;
    let plist = launchd::agent_path(&target.home);
    let plist_text = launchd::agent_plist(&exe);
    if job_state(&target.home) == Some(false) {
        bail!(
            "{} exists but was not written by lidguard, so it was left untouched; move it away \
             and run the command again",
            plist.display()
        );
    }
    let rule_path = sudoers::rule_path(dir);
    // The rule first: it is checked by visudo and refuses foreign files before anything is
    // written.
    let outcome = sudoers::install(dir, &target.name, Path::new(sudoers::VISUDO), dry_run)
        .map_err(anyhow::Error::msg)?;
    if dry_run {
        output::line(&format!(
            "would write {} (mode 0440, accepted by visudo -cf):",
            rule_path.display()
        ))?;
        output::line(sudoers::rule_text(&target.name).trim_end())?;
        output::line(&format!("would write {}:", plist.display()))?;
        output::line(plist_text.trim_end())?;
        if let Some((uid, _)) = target.ids {
            output::line(&format!(
                "would run: launchctl {}",
                launchd::bootstrap_args(uid, &plist).join(" ")
            ))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    output::line(&match outcome {
        Installed::Installed => format!("installed {} for {}", rule_path.display(), target.name),
        Installed::Replaced { previous_user } => format!(
            "replaced {} (was for {}); now for {}",
            rule_path.display(),
            previous_user.as_deref().unwrap_or("an unreadable user"),
            target.name
        ),
        Installed::Unchanged => format!(
            "{} is already installed for {}",
            rule_path.display(),
            target.name
        ),
    })?;
    write_job(&plist, &plist_text, target)?;
    output::line(&format!("installed {}", plist.display()))?;
    if ON_MAC && let Some((uid, _)) = target.ids {
        // Reload so a changed job takes effect; a job that was not loaded makes bootout fail.
        let _ = launchctl(&launchd::bootout_args(uid));
        if let Err(e) = launchctl(&launchd::bootstrap_args(uid, &plist)) {
            output::warn(&format!(
                "the launchd job is written but could not be loaded now ({e}); it loads at the \
                 next login"
            ));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the job file as the user's own.
fn write_job(plist: &Path, text: &str, target: &Target) -> anyhow::Result<()> {
    launchd::job::write(&target.home, text, target.ids)
        .with_context(|| format!("cannot write {}", plist.display()))
}

fn launchctl(args: &[String]) -> Result<(), String> {
    let out = std::process::Command::new("/bin/launchctl")
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run launchctl: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

fn remove(dir: &Path, target: &Target, dry_run: bool) -> anyhow::Result<ExitCode> {
    let plist = launchd::agent_path(&target.home);
    let rule_path = sudoers::rule_path(dir);
    if dry_run {
        if matches!(sudoers::status(dir), RuleState::InstalledFor { .. }) {
            output::line(&format!("would delete {}", rule_path.display()))?;
        }
        if job_state(&target.home) == Some(true) {
            output::line(&format!("would delete {}", plist.display()))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    match job_state(&target.home) {
        Some(true) => {
            if ON_MAC && let Some((uid, _)) = target.ids {
                let _ = launchctl(&launchd::bootout_args(uid));
            }
            launchd::job::remove(&target.home)
                .with_context(|| format!("cannot delete {}", plist.display()))?;
            output::line(&format!("removed {}", plist.display()))?;
        }
        Some(false) => output::warn(&format!(
            "{} was not written by lidguard; left alone",
            plist.display()
        )),
        None => {}
    }
    if sudoers::remove(dir).map_err(anyhow::Error::msg)? {
        output::line(&format!("removed {}", rule_path.display()))?;
    } else {
        output::line(&format!(
            "nothing to remove ({} is not there)",
            rule_path.display()
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}
