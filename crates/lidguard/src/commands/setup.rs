//! `lidguard setup` and `lidguard uninstall`: everything lidguard puts on a machine, in one
//! command each way, shown before it is done and confirmed once (`--yes` for scripts).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use std::time::{Duration, Instant};

use lidguard_core::settings::Os;
use lidguard_ipc::client::ClientError;
use lidguard_ipc::protocol::Request;
use lidguard_ipc::{Daemon, Places};

use lidguard_config::mcp::{self, Removed};
use lidguard_config::{Action, Options, Outcome, hooks};
use lidguard_platform::autostart;

use super::session::REQUEST_TIMEOUT;
use super::{daemon_running, doctor, hook_config, mcp_config};
use crate::cli::{AgentArg, EditFlags, HookConfigArgs, McpConfigArgs, SetupArgs};
use crate::{output, prompt};

/// What setup and uninstall say: each line as it happens, or with `--json` one document at the
/// end (the lines left out; a script reads what was done from the document).
struct Said {
    doc: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Said {
    /// `--json` changes files without asking only with `--yes`: a usage error otherwise.
    fn new(args: &SetupArgs) -> anyhow::Result<Said> {
        if args.json && !args.yes {
            return Err(output::Usage(
                "--json changes files without asking anything: add --yes".to_owned(),
            )
            .into());
        }
        Ok(Said {
            doc: args.json.then(serde_json::Map::new),
        })
    }

    fn json(&self) -> bool {
        self.doc.is_some()
    }

    fn line(&self, text: &str) -> anyhow::Result<()> {
        if self.doc.is_none() {
            output::line(text)?;
        }
        Ok(())
    }

    fn set(&mut self, key: &str, value: serde_json::Value) {
        if let Some(doc) = &mut self.doc {
            doc.insert(key.to_owned(), value);
        }
    }

    /// Prints the document (with `ok`) and gives the exit code.
    fn finish(self, ok: bool) -> anyhow::Result<ExitCode> {
        if let Some(mut doc) = self.doc {
            doc.insert("ok".to_owned(), ok.into());
            output::json(&doc)?;
        }
        Ok(if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        })
    }
}

/// `setup`: hooks (and, with `--mcp`, the MCP server) for every agent found here, then the
/// doctor's checks. Exits 1 when no agent is found or a check fails.
pub(crate) fn setup(places: &Places, args: &SetupArgs) -> anyhow::Result<ExitCode> {
    let mut said = Said::new(args)?;
    let (found, missing) = agents()?;
    said.set("agentsFound", found.clone().into());
    if found.is_empty() {
        said.set("configFoldersMissing", missing.clone().into());
        said.line(&format!(
            "No agent found: none of {} exists.\nInstall an agent (Claude Code, Codex, Copilot \
             CLI, OpenCode, Gemini CLI, Cursor, Qwen Code, Kilo CLI, Cline CLI, Factory Droid), run it once so it \
             creates its config folder, then run `lidguard setup` again.",
            missing.join(", ")
        ))?;
        return said.finish(false);
    }
    let tray = !args.no_tray && autostart::wanted();
    if !said.json() {
        output::line(&format!(
            "lidguard will add its hooks for {} next to your own entries (each file is backed up \
             first; `lidguard hook-install --provider all --dry-run` shows every line):",
            found.join(", ")
        ))?;
        plan(places, false, args.mcp)?;
        if args.hook_new_agents {
            output::line(
                "and hook an agent you install later when its config folder appears (checked \
                 each time the daemon starts; `lidguard hook-remove` for an agent keeps it out)",
            )?;
        }
        if tray {
            output::line(&format!(
                "and start the tray icon at login: {} (--no-tray leaves it out)",
                autostart::place()?
            ))?;
        }
    }
    if !confirmed(args.yes, "Go ahead?")? {
        output::line("Nothing was changed.")?;
        return Ok(ExitCode::FAILURE);
    }
    let hooks = hook_config::edit(places, &hooks_args(said.json()), false, false)?;
    said.set("hooks", hooks.into());
    if tray {
        let exe = std::env::current_exe().context("cannot find the lidguard executable")?;
        let entry = autostart::install(&exe)?;
        said.set("trayLoginEntry", entry.to_string().into());
        said.line(&format!(
            "wrote {entry}: the tray starts at your next login (`lidguard tray` starts it now)"
        ))?;
    }
    if args.mcp {
        let mcp = mcp_config::edit(places, &mcp_args(said.json()), false, false)?;
        said.set("mcp", mcp.into());
    }
    if args.hook_new_agents {
        NewAgents::now_present()?.save(places)?;
    }
    said.set("hookNewAgents", args.hook_new_agents.into());
    if said.json() {
        let (doctor, healthy) = doctor::json_report(places);
        said.set("doctor", doctor);
        return said.finish(healthy);
    }
    output::line("\nChecking this machine (lidguard doctor):")?;
    doctor::run(places, false)
}

/// `uninstall`: lidguard's hook and MCP entries out of every agent's config (your bytes back),
/// the user service, the daemon stopped, the power policy restored, and lidguard's settings,
/// state, logs and backups deleted. Exits 1 when something stays (a root-owned rule).
pub(crate) fn uninstall(places: &Places, args: &SetupArgs) -> anyhow::Result<ExitCode> {
    let mut said = Said::new(args)?;
    let dirs: Vec<&PathBuf> = [&places.config_dir, &places.state_dir, &places.runtime_dir]
        .into_iter()
        .filter(|d| d.exists())
        .collect();
    let units = super::service::installed_units()?;
    if !said.json() {
        output::line(
            "lidguard will take its hooks and MCP entries out of every agent's config (your own \
             bytes come back):",
        )?;
        plan(places, true, true)?;
        if autostart::installed()? {
            output::line(&format!(
                "  the tray's login entry: {}",
                autostart::place()?
            ))?;
        }
        for unit in &units {
            output::line(&format!(
                "  the user service: {} (lidguard service remove)",
                unit.display()
            ))?;
        }
        output::line(
            "stop a running tray and the daemon (it puts back the power policy it changed), \
             then delete:",
        )?;
        for d in &dirs {
            output::line(&format!(
                "  {} (settings, state, logs, backups)",
                d.display()
            ))?;
        }
    }
    if !confirmed(args.yes, "Remove all of this?")? {
        output::line("Nothing was changed.")?;
        return Ok(ExitCode::FAILURE);
    }
    // The reverse of setup's order: a file holding both (Gemini's, Qwen's settings.json) is
    // then each time exactly what the later edit found, and comes back byte for byte.
    let mcp = mcp_config::edit(places, &mcp_args(said.json()), true, false)?;
    said.set("mcp", mcp.into());
    let hooks = hook_config::edit(places, &hooks_args(said.json()), true, false)?;
    said.set("hooks", hooks.into());
    if !units.is_empty() {
        let removed = super::service::remove_units()?;
        for unit in &removed {
            said.line(&format!("removed {}", unit.display()))?;
        }
        said.set("serviceUnitsRemoved", serde_json::json!(removed));
    }
    if let Some(entry) = autostart::remove()? {
        said.line(&format!("removed {entry} (the tray's login entry)"))?;
        said.set("trayLoginEntryRemoved", entry.into());
    }
    if let Some(line) = lidguard_tray::stop(places)? {
        said.line(&line)?;
        said.set("tray", line.into());
    }
    if let Some(line) = stop_daemon(places)? {
        said.line(&line)?;
        said.set("daemon", line.into());
    }
    if let Some(line) = lidguard_daemon::restore_left_changed(places) {
        said.line(&line)?;
        said.set("restored", line.into());
    }
    for d in &dirs {
        remove_dir(d)?;
        said.line(&format!("removed {}", d.display()))?;
    }
    said.set("removed", serde_json::json!(dirs));
    // What the edits above made of lidguard's own (their lock files), with no folder before.
    for d in [&places.config_dir, &places.state_dir, &places.runtime_dir] {
        if !dirs.contains(&d) && d.exists() {
            remove_dir(d)?;
        }
    }
    let left = left_behind();
    for line in &left {
        said.line(line)?;
    }
    said.set("leftBehind", left.clone().into());
    if left.is_empty() {
        said.line(
            "lidguard is gone from this account; delete the lidguard executables to finish.",
        )?;
    }
    said.finish(left.is_empty())
}

/// The agents whose config folders exist (display names), and where the others would be.
fn agents() -> anyhow::Result<(Vec<String>, Vec<String>)> {
    let mut found = Vec::new();
    let mut missing = Vec::new();
    for (p, location, skipped) in hook_config::targets(Some("all"))? {
        match skipped {
            None => found.push(p.display_name().to_owned()),
            Some(_) => missing.push(location.root.display().to_string()),
        }
    }
    Ok((found, missing))
}

/// One line per agent file: what install (or remove) would do to it, and the MCP entries when
/// `mcp`.
fn plan(places: &Places, remove: bool, mcp: bool) -> anyhow::Result<()> {
    let options = Options {
        dry_run: true,
        force: false,
    };
    let setup = hook_config::setup(places)?;
    for (p, location, skipped) in hook_config::targets(Some("all"))? {
        if skipped.is_some() {
            continue;
        }
        let mut lines = Vec::new();
        if remove {
            let trust_file = lidguard_providers::agent(p)
                .and_then(|a| a.hooks.trust.as_ref())
                .map(|records| (records.file)(&location));
            for o in hooks::remove(places, p, &location, &setup.cmd, options)? {
                let what = if trust_file.as_ref() == Some(&o.file) {
                    "trust records of its hooks"
                } else {
                    "hooks"
                };
                lines.push(summary(&o, what));
            }
        } else {
            let installed = hooks::install(places, p, &location, &setup, options, false)?;
            for o in &installed.outcomes {
                lines.push(summary(o, "hooks"));
            }
            if let Some(records) = lidguard_providers::agent(p).and_then(|a| a.hooks.trust.as_ref())
            {
                lines.push(format!(
                    "{}: a record that you trust lidguard's hooks (the agent runs only hooks \
                     you trusted)",
                    (records.file)(&location).display()
                ));
            }
        }
        for line in lines {
            output::line(&format!("  {}: {line}", p.display_name()))?;
        }
    }
    if !mcp {
        return Ok(());
    }
    let exe = mcp_config::server_program()?;
    for (p, location, skipped) in mcp_config::targets(Some("all"), "setup")? {
        if skipped.is_some() {
            continue;
        }
        let line = if remove {
            match mcp::remove(places, p, &location, &exe, options)? {
                Removed::Done(o) => summary(&o, "MCP server"),
                Removed::LeftAlone { file, reason } => format!("{}: {reason}", file.display()),
            }
        } else {
            summary(
                &mcp::install(places, p, &location, &exe, options)?,
                "MCP server",
            )
        };
        output::line(&format!("  {}: {line}", p.display_name()))?;
    }
    Ok(())
}

/// `<file>: adds lidguard's hooks (+N lines)` and the like, from a dry run's outcome.
fn summary(o: &Outcome, what: &str) -> String {
    let file = o.file.display();
    match &o.action {
        Action::Unchanged => format!("{file}: nothing to change"),
        Action::WouldChange { delete: true, .. } => format!("{file}: deleted (lidguard's own)"),
        Action::WouldChange { diff, .. } => {
            let count = |sign: char| {
                diff.lines()
                    .filter(|l| {
                        l.starts_with(sign) && !l.starts_with("+++") && !l.starts_with("---")
                    })
                    .count()
            };
            format!(
                "{file}: lidguard's {what} (+{} −{} lines)",
                count('+'),
                count('-')
            )
        }
        Action::Written { .. } | Action::Deleted { .. } => format!("{file}: done"),
    }
}

/// `setup --hook-new-agents`: the agents whose config folder existed when the user opted in;
/// any other that appears later is hooked once, when the daemon starts, and joins the list (so
/// an agent the user unhooked stays unhooked).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
struct NewAgents {
    known: Vec<String>,
}

impl NewAgents {
    fn file(places: &Places) -> PathBuf {
        places.state_dir.join("hook-new-agents.json")
    }

    fn now_present() -> anyhow::Result<NewAgents> {
        let known = hook_config::targets(Some("all"))?
            .into_iter()
            .filter(|(_, _, skipped)| skipped.is_none())
            .map(|(p, _, _)| p.as_str().to_owned())
            .collect();
        Ok(NewAgents { known })
    }

    fn load(places: &Places) -> Option<NewAgents> {
        let text = std::fs::read_to_string(Self::file(places)).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn save(&self, places: &Places) -> anyhow::Result<()> {
        lidguard_files::private::ensure_dir(&places.state_dir)?;
        lidguard_files::private::write(&Self::file(places), &serde_json::to_vec_pretty(self)?)?;
        Ok(())
    }
}

/// When the user opted in (`setup --hook-new-agents`): hooks each agent whose config folder
/// appeared since, once, and logs what it did. Run by the daemon's process as it starts; never
/// fails it.
pub(crate) fn hook_new_agents(places: &Places) {
    let Some(mut state) = NewAgents::load(places) else {
        return;
    };
    let (Ok(setup), Ok(targets)) = (
        hook_config::setup(places),
        hook_config::targets(Some("all")),
    ) else {
        return;
    };
    let mut changed = false;
    for (p, location, skipped) in targets {
        if skipped.is_some() || state.known.iter().any(|k| k == p.as_str()) {
            continue;
        }
        let options = Options::default();
        match hooks::install(places, p, &location, &setup, options, true) {
            Ok(_) => tracing::info!(
                agent = p.as_str(),
                file = %location.file.display(),
                "hooked an agent installed after setup (setup --hook-new-agents)"
            ),
            Err(e) => tracing::warn!(
                agent = p.as_str(),
                error = %e,
                "could not hook an agent installed after setup; run `lidguard setup` to see why"
            ),
        }
        // Once either way: a refusal is the user's file to fix, and is not retried each start.
        state.known.push(p.as_str().to_owned());
        changed = true;
    }
    if changed && let Err(e) = state.save(places) {
        tracing::warn!(error = %e, "cannot record the agents hooked after setup");
    }
}

/// `hook-install`/`hook-remove` for every agent found, as setup and uninstall run them.
fn hooks_args(json: bool) -> HookConfigArgs {
    HookConfigArgs {
        provider: Some("all".to_owned()),
        edit: EditFlags::default(),
        // Setup says so in its plan: Codex runs only hooks the user trusted.
        trust_codex_hooks: true,
        json,
    }
}

/// `mcp-install`/`mcp-remove` for every agent found.
fn mcp_args(json: bool) -> McpConfigArgs {
    McpConfigArgs {
        agent: AgentArg::all(),
        edit: EditFlags::default(),
        json,
    }
}

/// `--yes`, or a "y" typed at the terminal; without a terminal and without `--yes`, an error
/// that says so (a script must say it means it).
fn confirmed(yes: bool, question: &str) -> anyhow::Result<bool> {
    if yes {
        return Ok(true);
    }
    if !prompt::interactive() {
        bail!("this changes files: run it on a terminal to confirm, or pass --yes");
    }
    output::prompt(&format!("{question} [y/N] "))?;
    Ok(prompt::read_line()?.is_some_and(|a| matches!(a.trim(), "y" | "Y" | "yes")))
}

/// `daemon-stop`: asks a running daemon to end and waits until it has.
pub(crate) fn daemon_stop(places: &Places, json: bool) -> anyhow::Result<ExitCode> {
    let stopped = stop_daemon(places)?;
    let line = stopped
        .clone()
        .unwrap_or_else(|| "no lidguard daemon is running".to_owned());
    if json {
        output::json(&serde_json::json!({"stopped": stopped.is_some(), "message": line}))?;
    } else {
        output::line(&line)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Asks a running daemon to end (it releases what it holds and puts back what it changed on
/// the way out, as on SIGTERM) and waits until its lock is free; `None` when none runs.
fn stop_daemon(places: &Places) -> anyhow::Result<Option<String>> {
    if !daemon_running(places) {
        return Ok(None);
    }
    let pid = std::fs::read_to_string(places.lock_file())
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok());
    let shown = pid.map_or_else(String::new, |p| format!(" (pid {p})"));
    match Daemon::new(places).ask(&Request::Shutdown) {
        Ok(_) => {}
        Err(ClientError::Refused(message)) => bail!("the daemon{shown} refused to stop: {message}"),
        Err(ClientError::NotRunning { .. }) if !daemon_running(places) => return Ok(None),
        Err(e) => bail!("cannot ask the daemon{shown} to stop: {e}"),
    }
    let deadline = Instant::now() + REQUEST_TIMEOUT;
    while daemon_running(places) {
        if Instant::now() > deadline {
            bail!("the daemon{shown} did not end within {REQUEST_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(Some(format!("stopped the daemon{shown}")))
}

/// Deletes `dir` and everything in it. The daemon's process ends just after it frees its lock,
/// and until then (on Windows) its open log cannot be deleted: a few tries over 5 s.
fn remove_dir(dir: &std::path::Path) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match std::fs::remove_dir_all(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(100)),
            Err(e) => bail!("cannot delete {}: {e}", dir.display()),
        }
    }
}

/// What only root can take away, each with the command that does (the macOS sudoers rule is
/// listed by `macos-permission status`).
fn left_behind() -> Vec<String> {
    if Os::current() != Os::Linux {
        return Vec::new();
    }
    let rule = lidguard_platform::polkit::rule_path(std::path::Path::new(
        lidguard_platform::polkit::RULES_DIR,
    ));
    if !rule.exists() {
        return Vec::new();
    }
    vec![format!(
        "left: the polkit rule {} (root's): remove it with `sudo lidguard linux-permission remove`",
        rule.display()
    )]
}
