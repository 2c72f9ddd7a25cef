//! One module per command family; [`run`] dispatches.

mod config_edit;
mod doctor;
mod events;
mod hand;
mod hook_config;
mod hook_events;
mod live_status;
mod machine;
mod macos_permission;
mod mcp;
mod mcp_config;
mod permission;
// The far side needs Unix sockets on this side; elsewhere its commands say so.
#[cfg_attr(not(unix), path = "remote/unsupported.rs")]
mod remote;
mod run;
mod server;
mod service;
mod session;
mod settings;
mod setup;
mod status;
mod wsl;

use std::process::ExitCode;

use lidguard_ipc::Places;

use crate::cli::{Cli, Command};
use crate::{help, logging};
use mcp_config::ProviderAction as Act;

/// Opens the database for reading, after asking a running daemon to write what it gathered
/// (it writes a few milliseconds after each hook; a ping makes it write now). Never starts one.
pub(crate) fn open_store(
    places: &Places,
) -> Result<lidguard_store::Store, lidguard_store::StoreError> {
    let _ = lidguard_ipc::Daemon::new(places)
        .with_timeout(std::time::Duration::from_secs(2))
        .send(&lidguard_ipc::protocol::Request::Ping);
    lidguard_store::Store::open(&places.database())
}

/// Runs the parsed command line.
pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let Some(command) = cli.command else {
        help::run(None)?;
        return Ok(ExitCode::SUCCESS);
    };
    if let Command::Help { command } = &command {
        help::run(command.as_deref())?;
        return Ok(ExitCode::SUCCESS);
    }
    // Hooks run on every tool call of every agent: they skip everything else here and never
    // fail the agent (see `hook`).
    if let Command::Hook { agent, event } = &command {
        return Ok(lidguard::hook::run(agent.provider, event.as_deref()));
    }
    let places = Places::from_env()?;
    // The root-only commands write system files; lidguard's own places may be the caller's
    // (sudo keeps HOME on macOS, `sudo -E`), so they neither log there nor tighten anything.
    let root_only = matches!(
        command,
        Command::LinuxPermission(_) | Command::MacosPermission(_)
    );
    if !root_only {
        if let Some((path, uid)) = places.someone_elses() {
            anyhow::bail!(
                "lidguard runs as root, but {} belongs to user {uid}: as root it would make that \
                 user's lidguard files root's. Run it as that user (without sudo); only \
                 `linux-permission` and `macos-permission` need root",
                path.display()
            );
        }
        let long_running = matches!(
            command,
            Command::RunServer(_) | Command::McpServer | Command::ProviderMcpServer(_)
        );
        // `uninstall` deletes the log: it must not hold it open (Windows cannot delete an open
        // file).
        if !matches!(command, Command::Uninstall(_)) {
            logging::init(&places, long_running);
        }
        for tightened in places.tighten_existing() {
            tracing::warn!("{tightened}");
        }
    }
    // A daemon that died with the Windows lid-close action or macOS's SleepDisabled changed
    // left a backup: any command puts the user's values back (the daemon itself does so when
    // it starts). Linux changes no such policy.
    if (lidguard_core::settings::Os::current() != lidguard_core::settings::Os::Linux
        || lidguard_files::environment::var(lidguard_platform::sources::SYS_ROOT_ENV).is_some())
        && !matches!(command, Command::RunServer(_) | Command::PowerRestore(_))
        && let Some(line) = lidguard_daemon::restore_left_changed(&places)
    {
        crate::output::warn(&line);
    }
    match command {
        Command::Start(args) => session::start(&places, args),
        Command::Stop(args) => session::stop(&places, args),
        Command::RemoveSession(args) => session::remove(&places, args),
        Command::CleanupOrphans(args) => session::cleanup_orphans(&places, args.json),
        Command::Doctor(args) => doctor::run(&places, args.json),
        Command::Setup(args) => setup::setup(&places, &args),
        Command::Uninstall(args) => setup::uninstall(&places, &args),
        Command::DaemonStop(args) => setup::daemon_stop(&places, args.json),
        Command::Pause(args) => hand::pause(&places, args.length, args.json),
        Command::Resume(args) => {
            hand::send(&places, &lidguard_ipc::protocol::Request::Resume, args.json)
        }
        Command::CancelSuspend(args) => hand::send(
            &places,
            &lidguard_ipc::protocol::Request::CancelSuspend,
            args.json,
        ),
        Command::Ssh(args) => remote::ssh(&places, &args),
        Command::Container(args) => remote::container(&places, &args),
        Command::Status(args) => status::run(&places, args.json, args.check, args.verbose),
        Command::Settings(args) => settings::run(&places, &args),
        Command::HookEvents(args) => hook_events::run(&places, &args),
        Command::Events(args) => events::run(&places, &args),
        Command::LiveStatus(args) => live_status::run(&places, live_status::colour_on(args.color)),
        Command::Tray => lidguard_tray::run(&places),
        Command::HookInstall(args) => hook_config::apply(&places, &args, false, true),
        Command::HookRemove(args) => {
            if args.trust_codex_hooks {
                anyhow::bail!("--trust-codex-hooks goes with hook-install");
            }
            hook_config::apply(&places, &args, true, true)
        }
        Command::HookStatus(args) => {
            hook_config::status(&places, args.provider.as_deref(), args.json)
        }
        Command::Snippet { agent, format } => hook_config::snippet(&places, agent, &format),
        Command::RemovePreSuspendWebhook => clear(&places, "pre-suspend-webhook-url"),
        Command::RemovePostSessionEndWebhook => clear(&places, "post-session-end-webhook-url"),
        Command::RemoveClosedLidStopFollowUpWebhook => {
            clear(&places, "closed-lid-stop-follow-up-webhook-url")
        }
        Command::SuspendHistory(args) => machine::suspend_history(&places, args.count, args.json),
        Command::WebhookHistory(args) => machine::webhook_history(&places, args.count, args.json),
        Command::CurrentLidState(args) => machine::lid_state(args.json),
        Command::CurrentMonitorCount(args) => machine::monitor_count(args.json),
        Command::CurrentTemperature(args) => machine::temperature(
            &places,
            args.temperature_mode.as_deref().or(args.mode.as_deref()),
            args.json,
        ),
        Command::PreviewSystemSound(args) => machine::preview_system_sound(&args.name, args.volume),
        Command::PreviewCurrentSound => machine::preview_current_sound(&places),
        Command::LinuxPermission(args) => permission::run(&args),
        Command::MacosPermission(args) => macos_permission::run(&places, &args),
        Command::PowerRestore(args) => power_restore(&places, args.wait_for_daemon),
        Command::WslHookInstall(args) => wsl::hooks(&places, &args, Act::Install),
        Command::WslHookStatus(args) => wsl::hooks(&places, &args, Act::Status),
        Command::WslHookRemove(args) => wsl::hooks(&places, &args, Act::Remove),
        Command::WslMcpInstall(args) => wsl::mcp(&places, &args, Act::Install),
        Command::WslMcpStatus(args) => wsl::mcp(&places, &args, Act::Status),
        Command::WslMcpRemove(args) => wsl::mcp(&places, &args, Act::Remove),
        Command::WslProviderMcpInstall(args) => wsl::provider_mcp(&places, &args, Act::Install),
        Command::WslProviderMcpStatus(args) => wsl::provider_mcp(&places, &args, Act::Status),
        Command::WslProviderMcpRemove(args) => wsl::provider_mcp(&places, &args, Act::Remove),
        Command::WslSnippet { agent, distro } => wsl::snippet(&places, agent, distro.as_deref()),
        Command::McpInstall(args) => mcp_config::apply(&places, &args, false, true),
        Command::McpRemove(args) => mcp_config::apply(&places, &args, true, true),
        Command::McpStatus(args) => mcp_config::status(&args),
        Command::ProviderMcpInstall(args) => mcp_config::provider(&places, &args, Act::Install),
        Command::ProviderMcpStatus(args) => mcp_config::provider(&places, &args, Act::Status),
        Command::ProviderMcpRemove(args) => mcp_config::provider(&places, &args, Act::Remove),
        Command::McpServer => mcp::serve_control(places),
        Command::ProviderMcpServer(args) => mcp::serve_provider(places, &args.provider_name),
        Command::Run(args) => run::run(&places, args),
        Command::Service(args) => service::run(&places, &args),
        Command::RunServer(args) => server::run(places, args.report_start),
        Command::Completions(args) => {
            let mut out = Vec::new();
            clap_complete::generate(args.shell, &mut crate::cli::command(), "lidguard", &mut out);
            crate::output::raw(&out)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            crate::output::raw(&crate::manual::render()?)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Help { .. } | Command::Hook { .. } => unreachable!("handled above"),
    }
}

/// The user's configuration folder: `$XDG_CONFIG_HOME` when absolute, else `~/.config`
/// (where the user units and the autostart entry go).
pub(crate) fn config_home() -> anyhow::Result<std::path::PathBuf> {
    use anyhow::Context;
    lidguard_files::environment::config_home()
        .context("cannot find the home directory (HOME is unset)")
}

/// Whether a daemon holds the instance lock (trying it takes and drops the lock when free).
pub(crate) fn daemon_running(places: &Places) -> bool {
    places.lock_file().exists()
        && matches!(
            lidguard_daemon::InstanceLock::acquire(&places.lock_file()),
            Err(lidguard_daemon::DaemonError::AlreadyRunning(_))
        )
}

/// `power-restore`: puts back what a stopped daemon left changed (now, or once the running
/// daemon ends).
fn power_restore(places: &Places, wait_for_daemon: bool) -> anyhow::Result<ExitCode> {
    let line = if wait_for_daemon {
        lidguard_daemon::restore_after_daemon(places).map_err(anyhow::Error::msg)?
    } else if places.database().exists()
        && places.ensure_runtime_dir().is_ok()
        && daemon_running(places)
    {
        anyhow::bail!(
            "a daemon is running; it puts back what it changed itself (use --wait-for-daemon to \
             restore after it ends)"
        );
    } else {
        lidguard_daemon::restore_left_changed(places)
    };
    match line {
        Some(line) if line.starts_with("restored") => crate::output::line(&line)?,
        Some(line) => anyhow::bail!(line),
        None => crate::output::line("nothing to restore")?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `remove-*-webhook`: sets the URL to `off` through the settings command.
fn clear(places: &Places, flag: &'static str) -> anyhow::Result<ExitCode> {
    let args = crate::cli::SettingsArgs {
        json: false,
        changes: vec![(flag, "off".to_owned())],
    };
    settings::run(places, &args)
}
