//! `lidguard linux-permission status|check|install|remove`: whether this user may take
//! logind's block inhibitors and suspend, and the polkit rule that allows it without a
//! password.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use lidguard_core::protection::{Inhibit, ProtectionPlan};
use lidguard_core::settings::Os;

/// The OS whose remedies are given.
const OS: Os = Os::current();
use lidguard_platform::polkit::{self, InstallOutcome, RemoveOutcome, RuleState};
use lidguard_platform::power::PowerError;
use serde_json::json;

use crate::cli::{PermissionAction, PermissionArgs};
use crate::output;

pub(crate) fn run(args: &PermissionArgs) -> anyhow::Result<ExitCode> {
    let dir = args
        .rules_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(polkit::RULES_DIR));
    match args.action {
        PermissionAction::Status => status(&dir, args.json),
        PermissionAction::Check => check(args.json),
        PermissionAction::Install => {
            let user = target_user(args.user.as_deref())?;
            let outcome = polkit::install(&dir, &user).map_err(anyhow::Error::new)?;
            let path = polkit::rule_path(&dir);
            output::line(&match outcome {
                InstallOutcome::Installed => format!("installed {} for {user}", path.display()),
                InstallOutcome::Replaced { previous_user } => format!(
                    "replaced {} (was for {}); now for {user}",
                    path.display(),
                    previous_user.as_deref().unwrap_or("an unreadable user")
                ),
                InstallOutcome::Unchanged => {
                    format!("{} is already installed for {user}", path.display())
                }
            })?;
            Ok(ExitCode::SUCCESS)
        }
        PermissionAction::Remove => {
            let path = polkit::rule_path(&dir);
            match polkit::remove(&dir).map_err(anyhow::Error::new)? {
                RemoveOutcome::Removed => output::line(&format!("removed {}", path.display()))?,
                RemoveOutcome::NothingToRemove => {
                    output::line(&format!(
                        "nothing to remove ({} is not there)",
                        path.display()
                    ))?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The user the rule is for: `--user`, else the user who ran `sudo`, else this user.
fn target_user(given: Option<&str>) -> anyhow::Result<String> {
    if let Some(user) = given {
        return Ok(user.to_owned());
    }
    if let Some(user) =
        lidguard_files::environment::text("SUDO_USER").filter(|u| !u.is_empty() && u != "root")
    {
        return Ok(user);
    }
    current_user().context("cannot tell which user the rule is for; pass --user NAME")
}

pub(crate) fn current_user() -> Option<String> {
    lidguard_files::environment::text("USER")
        .or_else(|| lidguard_files::environment::text("LOGNAME"))
        .filter(|u| !u.is_empty())
}

pub(crate) fn rule_state_text(state: &RuleState) -> String {
    match state {
        RuleState::NotInstalled => "not installed".to_owned(),
        RuleState::Foreign => "present but not managed by lidguard (left alone)".to_owned(),
        RuleState::InstalledFor(user) => format!("installed for {user}"),
        RuleState::Unreadable(why) => format!("cannot be inspected: {why}"),
    }
}

fn status(dir: &std::path::Path, as_json: bool) -> anyhow::Result<ExitCode> {
    let state = polkit::status(dir);
    let (can_suspend, can_hibernate, backend) = capabilities();
    let user = current_user();
    if as_json {
        let rule = match &state {
            RuleState::NotInstalled => json!({"state": "notInstalled"}),
            RuleState::Foreign => json!({"state": "foreign"}),
            RuleState::InstalledFor(u) => json!({"state": "installed", "user": u}),
            RuleState::Unreadable(why) => json!({"state": "unreadable", "error": why}),
        };
        output::json(&json!({
            "user": user,
            "rulesFile": polkit::rule_path(dir),
            "rule": rule,
            "canSuspend": can_suspend,
            "canHibernate": can_hibernate,
            "backend": backend.as_ref().ok(),
            "backendError": backend.as_ref().err(),
        }))?;
    } else {
        output::line(&format!("user: {}", user.as_deref().unwrap_or("?")))?;
        output::line(&format!(
            "polkit rule {}: {}",
            polkit::rule_path(dir).display(),
            rule_state_text(&state)
        ))?;
        match backend {
            Ok(backend) => {
                output::line(&format!("backend: {backend}"))?;
                output::line(&format!(
                    "CanSuspend: {} · CanHibernate: {}",
                    can_suspend.as_deref().unwrap_or("?"),
                    can_hibernate.as_deref().unwrap_or("?")
                ))?;
            }
            Err(why) => output::line(&format!("backend: unavailable ({why})"))?,
        }
    }
    Ok(ExitCode::SUCCESS)
}

type Capabilities = (Option<String>, Option<String>, Result<String, String>);

fn capabilities() -> Capabilities {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return (None, None, Err(e.to_string())),
    };
    runtime.block_on(async {
        match lidguard_platform::power::connect().await {
            Ok(power) => {
                let (s, h) = power.capabilities().await;
                (s, h, Ok(power.describe()))
            }
            Err(e) => (None, None, Err(e.to_string())),
        }
    })
}

/// What the power test found: the backend, the locks granted and released, sleep in delay
/// mode (or why not), and `CanSuspend` / `CanHibernate`.
pub(crate) struct PowerCheck {
    pub(crate) backend: String,
    pub(crate) locks: String,
    pub(crate) delay: Result<String, String>,
    pub(crate) can_suspend: Option<String>,
    pub(crate) can_hibernate: Option<String>,
    /// The closed-lid lock was refused (the others were granted): why.
    pub(crate) lid_refused: Option<PowerFailure>,
    /// Which of the locks the OS's own list lacked while they were held (empty: all there);
    /// `None` where the OS cannot be asked.
    pub(crate) os_shows: Option<Vec<String>>,
}

/// Why the power test failed, each with its own remedy.
pub(crate) enum PowerFailure {
    /// No backend to talk to (no system bus, no logind): no rule can help.
    Unavailable(String),
    /// The OS refused this user the lock: the permission rule allows it.
    Refused(String),
    /// Anything else the backend said.
    Other(String),
}

impl PowerFailure {
    pub(crate) fn message(&self) -> &str {
        match self {
            PowerFailure::Unavailable(m) | PowerFailure::Refused(m) | PowerFailure::Other(m) => m,
        }
    }

    /// What to do about it.
    pub(crate) fn fix(&self) -> String {
        match self {
            PowerFailure::Unavailable(_) if OS == Os::Linux => {
                "lidguard keeps a Linux machine awake through systemd-logind on the D-Bus system \
                 bus: run it where both run (a desktop or laptop session; in a container or WSL \
                 without systemd nothing can be held)"
                    .to_owned()
            }
            PowerFailure::Unavailable(_) => {
                "the OS power interface did not answer; `lidguard doctor` again after a restart, \
                 and report the line above if it stays"
                    .to_owned()
            }
            PowerFailure::Refused(_) if OS == Os::Linux => format!(
                "`sudo lidguard linux-permission install --user {}` installs a polkit rule that \
                 allows it",
                current_user().unwrap_or_else(|| "NAME".to_owned())
            ),
            PowerFailure::Refused(_) if OS == Os::MacOs => {
                "`sudo lidguard macos-permission install` installs the rule that lets lidguard \
                 disable sleep for a closed lid"
                    .to_owned()
            }
            PowerFailure::Refused(_) => {
                "Windows did not let lidguard read or change the lid-close action (Power Options): \
                 keep-awake still holds, but with the lid closed Windows does what its own lid \
                 setting says; run lidguard in your own user session, and report the line above \
                 if it stays"
                    .to_owned()
            }
            PowerFailure::Other(_) => "the backend's own message above says what failed".to_owned(),
        }
    }
}

/// Takes and releases a test inhibitor for every lock lidguard uses, and asks whether the
/// system can suspend and hibernate. Never suspends.
pub(crate) fn power_check() -> Result<PowerCheck, PowerFailure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| PowerFailure::Other(e.to_string()))?;
    runtime.block_on(async {
        let power = lidguard_platform::power::connect()
            .await
            .map_err(|e| PowerFailure::Unavailable(e.to_string()))?;
        let plan = ProtectionPlan {
            keep_awake: vec![Inhibit::Sleep, Inhibit::Idle],
            lid_switch: true,
            who: "lidguard".to_owned(),
            why: "lidguard linux-permission check".to_owned(),
            ..ProtectionPlan::default()
        };
        let failure = |e: PowerError| match e {
            PowerError::Refused { .. } => PowerFailure::Refused(e.to_string()),
            _ => PowerFailure::Other(e.to_string()),
        };
        // The closed-lid lock apart: the others can hold while it is refused (so does the daemon).
        let (held, lid_refused) = match power.hold(&plan).await {
            Ok(held) => (held, None),
            Err(e @ PowerError::Refused { .. }) if is_lid(&e) => {
                let without_lid = ProtectionPlan {
                    lid_switch: false,
                    ..plan.clone()
                };
                let held = power.hold(&without_lid).await.map_err(failure)?;
                (held, Some(failure(e)))
            }
            Err(e) => return Err(failure(e)),
        };
        let held_locks: Vec<&str> = held.inhibits().iter().map(|i| i.as_str()).collect();
        let locks = held_locks.join(":");
        // What the OS lists while the locks are held: each one must be there.
        let os_shows = power.os_view().await.map(|listed| {
            held_locks
                .iter()
                .filter(|l| !listed.iter().any(|x| x == *l))
                .map(|l| (*l).to_owned())
                .collect::<Vec<_>>()
        });
        drop(held);
        // Sleep in delay mode, as held while the lid is open (a refusal is not fatal: the
        // daemon then blocks sleep instead).
        let giving_way = ProtectionPlan {
            keep_awake: vec![Inhibit::Sleep],
            sleep_gives_way: true,
            ..plan.clone()
        };
        let delay = match power.hold(&giving_way).await {
            Ok(held) => Ok(held
                .giving_way()
                .iter()
                .map(|i| i.as_str())
                .collect::<Vec<_>>()
                .join(":")),
            Err(e) => Err(e.to_string()),
        };
        let (can_suspend, can_hibernate) = power.capabilities().await;
        Ok(PowerCheck {
            backend: power.describe(),
            locks,
            delay,
            can_suspend,
            can_hibernate,
            lid_refused,
            os_shows,
        })
    })
}

/// Whether a refusal is of the closed-lid lock.
fn is_lid(e: &PowerError) -> bool {
    matches!(e, PowerError::Refused { what, .. } if what == Inhibit::HandleLidSwitch.as_str())
}

/// `linux-permission check`: the power test. Exits 1 when a lock is refused.
fn check(as_json: bool) -> anyhow::Result<ExitCode> {
    let result = power_check().and_then(|c| match c.lid_refused {
        Some(refused) => Err(refused),
        None => Ok((c.backend, c.locks, c.delay, c.can_suspend, c.can_hibernate)),
    });
    match result {
        Ok((backend, locks, delay, can_suspend, can_hibernate)) => {
            if as_json {
                output::json(&json!({"ok": true, "backend": backend, "inhibitors": locks,
                        "delayInhibitors": delay.as_ref().ok(), "delayError": delay.as_ref().err(),
                        "canSuspend": can_suspend, "canHibernate": can_hibernate}))?;
            } else {
                output::line(&format!("ok: {backend} granted and released {locks}"))?;
                match &delay {
                    Ok(delayed) => output::line(&format!(
                        "ok: {delayed} in delay mode too (with the lid open a suspend you ask for \
                         goes through)"
                    ))?,
                    Err(why) => output::line(&format!(
                        "sleep in delay mode was refused ({why}): the daemon blocks sleep \
                         instead, so a suspend you ask for is refused while agents work"
                    ))?,
                }
                output::line(&format!(
                    "CanSuspend: {} · CanHibernate: {}",
                    can_suspend.as_deref().unwrap_or("?"),
                    can_hibernate.as_deref().unwrap_or("?")
                ))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(failure) => {
            if as_json {
                output::json(&json!({"ok": false, "error": failure.message()}))?;
                return Ok(ExitCode::FAILURE);
            }
            // Each failure with its own remedy: a polkit rule cannot bring a missing bus back.
            bail!("{}\n{}.", failure.message(), failure.fix())
        }
    }
}
