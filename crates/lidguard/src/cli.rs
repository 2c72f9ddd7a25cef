//! The command line, defined once: `--help`, `help <command>` and the `help` overview all come
//! from these definitions.
// Dispatch on agents is exhaustive: a new agent must be a compile error here, never a fallback.
#![deny(clippy::wildcard_enum_match_arm)]

use std::path::PathBuf;
use std::process::ExitCode;

use clap::builder::TypedValueParser;
use clap::{ArgAction, ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use lidguard_core::provider::Provider;
use lidguard_core::settings::FIELDS;
use lidguard_core::settings::Os;
use lidguard_providers::AGENTS;
use lidguard_providers::agent::Agent;

/// The OS this build is for: commands of another OS are left out of the help (they still parse
/// and say where they run).
const HOST: Os = Os::current();

/// Keeps a laptop awake, lid closed included, exactly while AI coding agents work.
#[derive(Debug, Parser)]
#[command(
    name = "lidguard",
    version,
    disable_help_subcommand = true,
    arg_required_else_help = false
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Start (or update) a session and keep the machine awake while it works.
    #[command(
        long_about = "Start (or update) a session and keep the machine awake while it works.\n\n\
        Starts the lidguard daemon when it is not running. Without --session, the session id is \
        derived from the provider and the working directory (e.g. claude:/home/me/project), so \
        `start` and `stop` run in the same directory name the same session."
    )]
    Start(StartArgs),
    /// End a session; protection is released when no other session is working.
    Stop(StopArgs),
    /// Remove sessions by hand (all, or by id).
    RemoveSession(RemoveArgs),
    /// Show sessions, protection, lid and displays, and the daemon's state.
    Status(StatusArgs),
    /// Check everything lidguard needs here, one ✓/✗ line each with what to do: its executables,
    /// each agent's hooks, the daemon, the power backend (a test lock, never a suspend), lid,
    /// displays and battery. Exits 1 when a check fails.
    Doctor(JsonArgs),
    /// Hook lidguard into every agent found here (shown first, confirmed once), then run the
    /// doctor's checks.
    #[command(long_about = SETUP_ABOUT)]
    Setup(SetupArgs),
    /// Take everything lidguard wrote away: its entries in the agents' configs (your bytes
    /// back), the user service, its settings, state, logs and backups; the daemon is stopped.
    Uninstall(SetupArgs),
    /// Pause protection for a while, or until `lidguard resume`: sleep and the lid act as they
    /// would without lidguard. Sessions go on being tracked.
    Pause(PauseArgs),
    /// Take protection back before a pause ends.
    Resume(JsonArgs),
    /// Cancel the suspend lidguard has on its way (an agent's work ended with the lid closed);
    /// the OS still handles the closed lid as it is set to.
    CancelSuspend(JsonArgs),
    /// Stop the daemon: it releases what it holds and puts back what it changed first (it
    /// starts again on the next hook event or command).
    DaemonStop(JsonArgs),
    /// Your own `ssh` with a relay to this machine's daemon: an agent working on the other side
    /// (with lidguard's hooks installed there) keeps this machine awake while it works.
    Ssh(SshArgs),
    /// Your container engine's `run` with a relay to this machine's daemon mounted in the
    /// container: an agent in it (with the static lidguard-hook and lidguard's hooks) keeps this
    /// machine awake while it works; the container stopped, its sessions end.
    Container(ContainerArgs),
    /// End every session whose watched agent process is gone.
    CleanupOrphans(JsonArgs),
    /// Show or change settings (interactive on a terminal when given no flags).
    #[command(long_about = "Show or change settings.\n\n\
        With no flags on a terminal, opens an interactive editor; otherwise prints the settings. \
        Each --flag sets one field; several may be given at once and are saved together. \
        Booleans accept true/false, yes/no, on/off, 1/0; fields that can be turned off accept \
        `off`. A running daemon picks up the change at once.")]
    Settings(SettingsArgs),
    /// Show the hook events lidguard received, newest last, in local time.
    HookEvents(HookEventsArgs),
    /// The event stream: what agents reported, what lidguard decided and who was told, as it
    /// happens (`--follow`), after a replay of recent events.
    #[command(long_about = EVENTS_ABOUT)]
    Events(EventsArgs),
    /// A terminal dashboard: sessions, protection, lid and displays, a pending suspend with
    /// its countdown, ask before sleep and the last events, redrawn as events happen.
    #[command(long_about = LIVE_STATUS_ABOUT)]
    LiveStatus(LiveStatusArgs),
    /// An icon in the desktop's tray or menu bar: its colour says whether agents work,
    /// wait for you, or protection failed; its menu pauses protection, cancels a pending
    /// suspend and sets the closed-lid decision.
    Tray,
    /// Add lidguard's hooks to an agent's config, next to the user's own entries.
    HookInstall(HookConfigArgs),
    /// Check lidguard's hooks in an agent's config and which events have arrived.
    #[command(
        long_about = "Check lidguard's hooks in an agent's config and which events have arrived.\n\n\
        Reports per agent whether the entries are installed, missing or drifted (another binary, \
        a missing event, a wrong timeout), other tools' hooks that can block or answer where \
        lidguard does, and for each required event when it last arrived. Exits 1 when anything \
        is missing or drifted."
    )]
    HookStatus(HookStatusArgs),
    /// Remove lidguard's hooks from an agent's config, leaving everything else as it was.
    #[command(alias = "hook-uninstall")]
    HookRemove(HookConfigArgs),
    /// Register lidguard's MCP server with an agent, next to the user's own servers.
    McpInstall(McpConfigArgs),
    /// Check lidguard's MCP server entry in an agent's MCP config.
    McpStatus(McpStatusArgs),
    /// Remove lidguard's MCP server entry from an agent's MCP config.
    #[command(alias = "mcp-uninstall")]
    McpRemove(McpConfigArgs),
    /// Add a Provider MCP server entry (`provider-mcp-server`) to any JSON MCP config.
    ProviderMcpInstall(ProviderMcpArgs),
    /// Check a Provider MCP server entry in a JSON MCP config.
    ProviderMcpStatus(ProviderMcpArgs),
    /// Remove a Provider MCP server entry from a JSON MCP config.
    #[command(alias = "provider-mcp-uninstall")]
    ProviderMcpRemove(ProviderMcpArgs),
    /// Turn the PreSuspend webhook off (same as `settings --pre-suspend-webhook-url off`).
    RemovePreSuspendWebhook,
    /// Turn the PostSessionEnd webhook off.
    RemovePostSessionEndWebhook,
    /// Turn the ask-before-sleep webhook off.
    RemoveClosedLidStopFollowUpWebhook,
    /// The suspend requests lidguard made (newest last), in local time.
    SuspendHistory(SuspendHistoryArgs),
    /// The webhooks lidguard sent (newest last): type, reason, receiver host, result, duration.
    WebhookHistory(SuspendHistoryArgs),
    /// The lid as lidguard reads it: Open, Closed or Unknown.
    CurrentLidState(JsonArgs),
    /// Connected displays, and how many of them are external (the suspend decision's count).
    CurrentMonitorCount(JsonArgs),
    /// The temperature the emergency-hibernation guard reads.
    CurrentTemperature(TemperatureArgs),
    /// Play a system sound (Asterisk, Beep, Exclamation, Hand, Question) as the suspend flow
    /// would.
    PreviewSystemSound(PreviewSoundArgs),
    /// Play the configured post-stop suspend sound with its volume override.
    PreviewCurrentSound,
    /// Linux: whether this user may keep the machine awake and suspend it, and the polkit
    /// rule that allows it without a password.
    #[command(
        long_about = "Linux: whether this user may keep the machine awake and suspend it, and \
        the polkit rule that allows it without a password.\n\n\
        status: the rule's state and logind's CanSuspend/CanHibernate. check: takes and releases \
        a test inhibitor for sleep, idle and the lid switch (never suspends); exits 1 when \
        refused. install: writes /etc/polkit-1/rules.d/49-lidguard.rules for --user (default: \
        the user who ran sudo), allowing only suspend, hibernate, the three block inhibitors and the sleep delay inhibitor; \
        needs root. remove: deletes it. A file of that name that lidguard did not write is never \
        overwritten or deleted."
    )]
    LinuxPermission(PermissionArgs),
    /// macOS: whether lidguard may disable sleep for a closed lid, the sudoers rule that allows
    /// it and the launchd job that puts sleep back.
    #[command(long_about = MACOS_PERMISSION_ABOUT)]
    #[command(hide = HOST != Os::MacOs)]
    MacosPermission(MacosPermissionArgs),
    /// Put back power settings a stopped daemon left changed (macOS SleepDisabled, the Windows
    /// lid-close action).
    #[command(long_about = POWER_RESTORE_ABOUT)]
    #[command(hide = HOST == Os::Linux)]
    PowerRestore(PowerRestoreArgs),
    /// Windows: add lidguard's hooks to agents' configs inside a WSL distro.
    #[command(long_about = WSL_HOOK_ABOUT)]
    #[command(hide = HOST != Os::Windows)]
    WslHookInstall(WslHookArgs),
    /// Windows: check lidguard's hooks inside a WSL distro.
    #[command(hide = HOST != Os::Windows)]
    WslHookStatus(WslHookArgs),
    /// Windows: remove lidguard's hooks from agents' configs inside a WSL distro.
    #[command(hide = HOST != Os::Windows)]
    WslHookRemove(WslHookArgs),
    /// Windows: register lidguard's MCP server with an agent inside a WSL distro.
    #[command(hide = HOST != Os::Windows)]
    WslMcpInstall(WslMcpArgs),
    /// Windows: check lidguard's MCP server entry inside a WSL distro.
    #[command(hide = HOST != Os::Windows)]
    WslMcpStatus(WslMcpArgs),
    /// Windows: remove lidguard's MCP server entry inside a WSL distro.
    #[command(hide = HOST != Os::Windows)]
    WslMcpRemove(WslMcpArgs),
    /// Windows: add a Provider MCP entry to a JSON MCP config inside a WSL distro.
    #[command(hide = HOST != Os::Windows)]
    WslProviderMcpInstall(WslProviderMcpArgs),
    /// Windows: check a Provider MCP entry inside a WSL distro.
    #[command(hide = HOST != Os::Windows)]
    WslProviderMcpStatus(WslProviderMcpArgs),
    /// Windows: remove a Provider MCP entry inside a WSL distro.
    #[command(hide = HOST != Os::Windows)]
    WslProviderMcpRemove(WslProviderMcpArgs),
    /// Serve lidguard's sessions and settings to an MCP client over stdio.
    #[command(
        long_about = "Serve lidguard's sessions and settings to an MCP client over stdio.\n\n\
        Tools: get_settings_status, list_sessions, update_settings, remove_session, \
        set_session_soft_lock, clear_session_soft_lock. It never starts the daemon. Settings that \
        decide what happens without the user (closed-lid permission answers, webhook URLs, \
        emergency hibernation) are refused here; change them with `lidguard settings`. Register \
        it with `lidguard mcp-install`."
    )]
    McpServer,
    /// Serve the Provider MCP tools over stdio: a model reports its own session (best effort).
    #[command(
        long_about = "Serve the Provider MCP tools over stdio: a model reports its own session.\n\n\
        Tools: provider_start_session, provider_stop_session, provider_set_soft_lock, \
        provider_clear_soft_lock. Sessions are keyed by provider `mcp`, the session id and \
        --provider-name. Best effort: it works only as well as the model calls the tools; \
        ask-before-sleep continuation is not available here."
    )]
    ProviderMcpServer(ProviderMcpServerArgs),
    /// Keep the machine awake while a command runs, as a lidguard session: `run -- CMD ARGS…`.
    #[command(long_about = RUN_ABOUT)]
    Run(RunArgs),
    /// Linux: run the daemon as a systemd user service, started through socket activation.
    #[command(long_about = SERVICE_ABOUT)]
    Service(ServiceArgs),
    /// Run the per-user daemon in the foreground (started on demand; rarely run by hand).
    RunServer(RunServerArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    #[command(
        long_about = "Print a shell completion script (bash, zsh, fish, powershell, elvish).\n\n\
        bash: `lidguard completions bash > ~/.local/share/bash-completion/completions/lidguard`; \
        zsh: into a directory on $fpath as `_lidguard`; fish: \
        `lidguard completions fish > ~/.config/fish/completions/lidguard.fish`; PowerShell: \
        `lidguard completions powershell | Out-String | Invoke-Expression` in $PROFILE."
    )]
    Completions(CompletionsArgs),
    /// Print lidguard's manual page (roff; read it with `lidguard man | man -l -`).
    Man,
    /// Show the command overview, or help for one command.
    Help {
        /// The command to explain.
        command: Option<String>,
    },
    /// `<agent>-hook`: one hook invocation of an agent (the subcommands come from the agent
    /// table, see [`command`]).
    #[command(skip)]
    Hook {
        agent: &'static Agent,
        event: Option<String>,
    },
    /// `wsl-<agent>-hooks`: print what `wsl-hook-install` writes for an agent.
    #[command(skip)]
    WslSnippet {
        agent: &'static Agent,
        distro: Option<String>,
    },
    /// `<agent>-hooks <format>`: print what `hook-install` writes for an agent.
    #[command(skip)]
    Snippet {
        agent: &'static Agent,
        format: String,
    },
}

/// Arguments of `run-server`.
#[derive(Debug, Args)]
pub(crate) struct RunServerArgs {
    /// How a client starts the daemon: a failed start is said on stderr, which is closed once
    /// the daemon listens (`lidguard_ipc::client::REPORT_START`).
    #[arg(long, hide = true)]
    pub(crate) report_start: bool,
}

/// Arguments of `provider-mcp-server`.
#[derive(Debug, Args)]
pub(crate) struct ProviderMcpServerArgs {
    /// The name sessions of this server are keyed by, e.g. the agent's name (`gemini`).
    #[arg(long, value_name = "NAME")]
    pub(crate) provider_name: String,
}

/// Identifies a session on the command line.
#[derive(Debug, Args)]
pub(crate) struct SessionArgs {
    /// The agent, `custom` or `mcp` (asked on a terminal when missing).
    #[arg(long, value_name = "PROVIDER", value_parser = any_provider())]
    pub(crate) provider: Option<Provider>,
    /// The session id (default: derived from the provider and the working directory).
    #[arg(long = "session", visible_alias = "session-id", value_name = "ID")]
    pub(crate) session: Option<String>,
    /// For mcp sessions: the provider name given to `provider-mcp-server`.
    #[arg(long, value_name = "NAME")]
    pub(crate) provider_name: Option<String>,
    /// The working directory (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) cwd: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct StartArgs {
    #[command(flatten)]
    pub(crate) session: SessionArgs,
    /// The agent process to watch: when it exits, the session ends.
    #[arg(long, value_name = "PID")]
    pub(crate) parent_pid: Option<u32>,
    /// The agent's transcript file (JSONL).
    #[arg(long, value_name = "PATH")]
    pub(crate) transcript: Option<PathBuf>,
    /// Print the daemon's answer as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct StopArgs {
    #[command(flatten)]
    pub(crate) session: SessionArgs,
    /// Why the session ended (recorded in the log).
    #[arg(long, value_name = "TEXT")]
    pub(crate) end_reason: Option<String>,
    /// Print the daemon's answer as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("target").required(true).args(["all", "session"])))]
pub(crate) struct RemoveArgs {
    /// Remove every session.
    #[arg(long)]
    pub(crate) all: bool,
    /// Remove the sessions with this id.
    #[arg(long = "session", visible_alias = "session-id", value_name = "ID")]
    pub(crate) session: Option<String>,
    /// Only sessions of this provider.
    #[arg(long, value_name = "PROVIDER", requires = "session")]
    pub(crate) provider: Option<Provider>,
    /// Only sessions with this provider name (mcp).
    #[arg(long, value_name = "NAME", requires = "session")]
    pub(crate) provider_name: Option<String>,
    /// Print the daemon's answer as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct HookEventsArgs {
    /// Only this provider's events.
    #[arg(long, value_name = "PROVIDER", value_parser = any_provider())]
    pub(crate) provider: Option<Provider>,
    /// How many events to show.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub(crate) count: usize,
    /// Show the receipts instead: per provider and event, how many arrived and when last.
    #[arg(long)]
    pub(crate) receipts: bool,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// How a config edit is made.
#[derive(Debug, Default, Args)]
pub(crate) struct EditFlags {
    /// Print the file and the diff that would be applied, and change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Edit a read-only file (it stays read-only), or take over an entry of lidguard's name
    /// that lidguard did not write (its other keys stay; remove puts it back).
    #[arg(long)]
    pub(crate) force: bool,
}

impl EditFlags {
    pub(crate) fn options(&self) -> lidguard_config::Options {
        lidguard_config::Options {
            dry_run: self.dry_run,
            force: self.force,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct HookConfigArgs {
    /// The agent, or `all` (the agents whose config directory exists).
    #[arg(long, value_name = "PROVIDER", value_parser = agent_or_all())]
    pub(crate) provider: Option<String>,
    #[command(flatten)]
    pub(crate) edit: EditFlags,
    /// Codex only, install only: also record lidguard's hooks as trusted in Codex's
    /// config.toml, as trusting them in Codex's /hooks would (review the diff with --dry-run).
    #[arg(long)]
    pub(crate) trust_codex_hooks: bool,
    /// Print what was done (or, with --dry-run, would be) as JSON: one object per agent.
    #[arg(long)]
    pub(crate) json: bool,
}

/// What the `wsl-*` commands do, shown in their long help.
const WSL_HOOK_ABOUT: &str = "Windows: add lidguard's hooks to agents' configs inside a WSL \
    distro.\n\n\
    The configs inside the distro (the default one, or --distro) are edited as native installs \
    are: the user's entries kept, a backup FILE.<time>.bak next to the file, an atomic rename. \
    The entries run this lidguard.exe (its lidguard-hook.exe) through its wslpath path, with \
    bash as the shell; the hook reaches the Windows daemon over the named pipe through WSL \
    interop. --dry-run prints the diff that would be written inside the distro.";

#[derive(Debug, Args)]
pub(crate) struct WslHookArgs {
    /// The agent, or `all` (the agents whose config directory exists in the distro).
    #[arg(long, value_name = "PROVIDER", value_parser = agent_or_all())]
    pub(crate) provider: Option<String>,
    /// The WSL distro (default: WSL's default distro).
    #[arg(long, value_name = "NAME")]
    pub(crate) distro: Option<String>,
    /// Install/remove: print the file and the diff that would be written inside the distro,
    /// and change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

#[derive(Debug, Args)]
pub(crate) struct WslMcpArgs {
    /// The agent, or `all` (the agents whose config directory exists in the distro).
    #[arg(value_name = "AGENT", value_parser = agent_or_all())]
    pub(crate) agent: Option<String>,
    /// The WSL distro (default: WSL's default distro).
    #[arg(long, value_name = "NAME")]
    pub(crate) distro: Option<String>,
    /// Install/remove: print the diff that would be written inside the distro, change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

#[derive(Debug, Args)]
pub(crate) struct WslProviderMcpArgs {
    /// The JSON file holding the agent's `mcpServers`, as a path inside the distro.
    #[arg(long, value_name = "PATH")]
    pub(crate) config: String,
    /// The name the model's sessions are keyed by (required for install).
    #[arg(long, value_name = "NAME")]
    pub(crate) provider_name: Option<String>,
    /// The entry's name under `mcpServers` (default `lidguard-provider`).
    #[arg(long, value_name = "NAME")]
    pub(crate) server_name: Option<String>,
    /// The WSL distro (default: WSL's default distro).
    #[arg(long, value_name = "NAME")]
    pub(crate) distro: Option<String>,
    /// Install/remove: print the diff that would be written inside the distro, change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

#[derive(Debug, Args)]
pub(crate) struct HookStatusArgs {
    /// The agent, or `all` (the agents whose config directory exists).
    #[arg(long, value_name = "PROVIDER", value_parser = agent_or_all())]
    pub(crate) provider: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct SuspendHistoryArgs {
    /// How many entries to show (newest).
    #[arg(value_name = "COUNT", default_value_t = 10)]
    pub(crate) count: usize,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct PreviewSoundArgs {
    /// The system sound's name.
    #[arg(value_name = "NAME")]
    pub(crate) name: String,
    /// Play it at this volume (1 to 100 percent), restoring the volume afterwards.
    #[arg(long, value_name = "PERCENT")]
    pub(crate) volume: Option<u8>,
}

const SETUP_ABOUT: &str = "Hook lidguard into every agent found on this machine, then check \
the machine.\n\n\
Shows the plan first — each agent's file and the entries lidguard adds next to yours — and asks \
once (--yes for scripts). With --mcp it also registers lidguard's MCP server with them. Then \
runs the `doctor` checks. With no agent found it says where it looked and exits 1: install an \
agent, run it once, then run setup again. `lidguard service install` (Linux socket activation) \
and `sudo lidguard linux-permission install` stay separate: the daemon starts on demand \
without the first, and the second is root's.";

#[derive(Debug, Args)]
pub(crate) struct SetupArgs {
    /// Do it without asking (for scripts).
    #[arg(long, short = 'y')]
    pub(crate) yes: bool,
    /// Setup: also register lidguard's MCP server with every agent found (uninstall always
    /// removes it).
    #[arg(long)]
    pub(crate) mcp: bool,
    /// Setup: also hook an agent installed later, once, when the daemon starts and finds its
    /// config folder (an agent you unhook with hook-remove stays unhooked).
    #[arg(long)]
    pub(crate) hook_new_agents: bool,
    /// Setup: do not start the tray icon at login (where a desktop session runs: Linux, and
    /// always on Windows and macOS).
    #[arg(long)]
    pub(crate) no_tray: bool,
    /// What was done as one JSON document at the end (with --yes: nothing is asked).
    #[arg(long)]
    pub(crate) json: bool,
}

/// What `linux-permission` does.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum PermissionAction {
    /// The rule's state and what the system allows.
    Status,
    /// Try what lidguard needs, changing nothing.
    Check,
    /// Write the rule (root).
    Install,
    /// Delete the rule (root).
    Remove,
}

const MACOS_PERMISSION_ABOUT: &str = "macOS: whether lidguard may disable sleep for a closed \
lid, the sudoers rule that allows it and the launchd job that puts sleep back.\n\n\
status: the rule, the launchd job, SleepDisabled now and any pending backup. check: asks sudo \
whether the pmset invocations are allowed without a password (sudo -n -l) and reads pmset -g; \
changes nothing; exits 1 when something is missing. install (run with sudo): writes \
/private/etc/sudoers.d/lidguard for --user (default: the user who ran sudo), allowing exactly \
`/usr/bin/pmset -a disablesleep 1|0`, `/usr/bin/pmset -a hibernatemode 25` and \
`/usr/bin/pmset -b|-c hibernatemode 0|3|25` (the user's modes put back per power source), checked \
with visudo -cf first; and ~/Library/LaunchAgents/dev.lidguard.power-restore.plist, which runs \
`lidguard power-restore --wait-for-daemon` at login and when the daemon disables sleep. \
--dry-run prints both files and writes nothing. remove: deletes both. Files lidguard did not \
write are never overwritten or deleted.";

const POWER_RESTORE_ABOUT: &str = "Put back power settings a stopped daemon left changed \
(macOS SleepDisabled, the Windows lid-close action).\n\n\
Without a daemon running it restores what is pending from lidguard's store (every lidguard \
command does this too). --wait-for-daemon: waits, blocked, until the running daemon ends \
(however it ends) and restores then; a second waiter leaves at once. The daemon starts one when \
it disables sleep on macOS (through the launchd job of `macos-permission install` when it is \
installed).";

#[derive(Debug, Args)]
pub(crate) struct MacosPermissionArgs {
    /// status, check, install or remove.
    #[arg(value_enum, value_name = "ACTION")]
    pub(crate) action: PermissionAction,
    /// Install: the user the rule is for (default: $SUDO_USER, else the current user).
    #[arg(long, value_name = "NAME")]
    pub(crate) user: Option<String>,
    /// The sudoers drop-in directory (default /private/etc/sudoers.d).
    #[arg(long, value_name = "DIR")]
    pub(crate) sudoers_dir: Option<PathBuf>,
    /// The user's home, for the launchd job (default: that user's home directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) home: Option<PathBuf>,
    /// Install and remove: print what would be written or deleted, change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Status and check: print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct PowerRestoreArgs {
    /// Wait until the running daemon ends, then restore.
    #[arg(long)]
    pub(crate) wait_for_daemon: bool,
}

#[derive(Debug, Args)]
pub(crate) struct PermissionArgs {
    /// status, check, install or remove.
    #[arg(value_enum, value_name = "ACTION")]
    pub(crate) action: PermissionAction,
    /// Install: the user the rule is for (default: $SUDO_USER, else the current user).
    #[arg(long, value_name = "NAME")]
    pub(crate) user: Option<String>,
    /// The polkit rules directory (default /etc/polkit-1/rules.d).
    #[arg(long, value_name = "DIR")]
    pub(crate) rules_dir: Option<PathBuf>,
    /// Status and check: print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

const RUN_ABOUT: &str = "Keep the machine awake while a command runs, as a lidguard session: \
`lidguard run [--reason TEXT] [--command-only] -- CMD [ARGS…]`.\n\n\
Like systemd-inhibit or caffeinate -w, but the command is a session (provider custom, named by \
--reason or the command's name, lidguard's own process watched), so the closed-lid policy, \
status, the webhooks and the suspend once it ends apply as they do to agents. The session is \
taken, and protection held, before the command starts; it lasts as long as the work, whatever \
the inactivity timeout. On Linux lidguard also waits for what the command left running in the \
background (`cmd &`, `nohup`, a shell that exits early): it adopts those processes as they are \
orphaned and ends the session when the last one of its process group exits (--command-only: \
when the command itself exits; a signal while it waits does the same). Its stdin, stdout and \
stderr are left alone; lidguard exits with the command's exit code (128 + N after signal N). \
SIGTERM and SIGHUP are passed on to the command, and SIGINT and SIGQUIT too unless lidguard runs \
in the terminal's foreground (the terminal sends those to the command itself). If the daemon \
cannot be reached, or holds nothing, the command still runs, with a warning on stderr.";

const LIVE_STATUS_ABOUT: &str = "A terminal dashboard: sessions with their state and reasons, \
protection and why, the lid and displays, a pending suspend with its countdown and phase, ask \
before sleep, and the last events.\n\n\
Fed by the event stream (`lidguard events`): it redraws when something happens, and once a \
second only while a suspend countdown is shown. Starts the daemon when it is not running. \
Coloured by state (green held, red wanted but not held, yellow paused or waiting, blue a \
suspend on its way) unless NO_COLOR is set or --color never. Keys: q or Esc quits, ↑/↓ (or \
k/j) select, Tab moves between the sessions and the events, Enter shows the selected event \
whole, d (or Delete) removes the selected session after asking, c cancels a pending suspend, r \
reconnects after the daemon stopped. Needs a terminal; scripts use `lidguard events --follow \
--json`.";

const EVENTS_ABOUT: &str = "The event stream: what agents reported, what lidguard decided and who \
was told, as it happens.\n\n\
Prints recent events (the last 20, or those since --since), then with --follow every new one \
as the daemon sees it — no polling; the stream ends when the daemon stops. With --follow the \
daemon is started when it is not running, and it does not exit for idleness while someone \
follows. --json prints one object per line with three parts: observation (id, time, source, \
kind, provider, session, hook event, tool, cwd, payload digest), authority (none, allow, deny, \
cancel, soft-lock or continue, and the setting, lid and displays it was decided from) and \
visibility (what the agent was told on stdout, whether it was logged, which webhooks went \
out); the schema is schema/events.schema.json in lidguard's repository. Hook events and \
daemon events (sessions, protection taken and released, suspend scheduled, canceled and \
requested, ask before sleep, lid and display changes, webhooks) share one numbering. \
--provider and --session keep only that provider's or session's events; events about no \
session (the lid, protection, a suspend) are always shown.";

#[derive(Debug, Args)]
pub(crate) struct EventsArgs {
    /// Keep printing new events as they happen.
    #[arg(long, short = 'f')]
    pub(crate) follow: bool,
    /// One JSON object per line (schema/events.schema.json).
    #[arg(long)]
    pub(crate) json: bool,
    /// Only this provider's sessions.
    #[arg(long, value_name = "PROVIDER", value_parser = any_provider())]
    pub(crate) provider: Option<Provider>,
    /// Only this session id.
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// Replay from: `now` (nothing), `all` (the last 1,000 kept), a duration back (90s, 10m,
    /// 2h, 1d) or a time (2026-12-02T10:00:00Z). Default: the last 20 events.
    #[arg(long, value_name = "WHEN", allow_hyphen_values = false)]
    pub(crate) since: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// What the session is called in `status` (default: the command's name).
    #[arg(long, value_name = "TEXT")]
    pub(crate) reason: Option<String>,
    /// End the session when the command itself exits, even if processes it started in the
    /// background still run. By default (Linux) lidguard waits for those too: it adopts them as
    /// they are orphaned and holds until the last one of the command's process group exits.
    #[arg(long)]
    pub(crate) command_only: bool,
    /// The command and its arguments, after `--`. lidguard's own flags come before it, so a
    /// mistyped flag is an error rather than a program to run.
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    pub(crate) command: Vec<std::ffi::OsString>,
}

const SERVICE_ABOUT: &str = "Linux: run the daemon as a systemd user service, started through \
socket activation.\n\n\
install: writes lidguard.socket (lidguard's socket, mode 0600 in a 0700 directory) and \
lidguard.service (`lidguard run-server`, with the LIDGUARD_HOME and XDG_* values of the \
installing shell) to ~/.config/systemd/user/, then enables the socket with `systemctl --user`: \
systemd starts the daemon on the first request and again after its idle exit. status: the \
units and what systemd says of the socket. remove: disables and deletes them. Without the \
service lidguard starts its daemon on demand, as before. Files lidguard did not write are \
never overwritten or deleted.";

#[derive(Debug, Args)]
pub(crate) struct ServiceArgs {
    /// install, status or remove.
    #[arg(value_enum, value_name = "ACTION")]
    pub(crate) action: ServiceAction,
    /// Install and remove: print what would be written or deleted, change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Status: print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum ServiceAction {
    /// Write and enable the units.
    Install,
    /// The units' state.
    Status,
    /// Disable and delete the units.
    Remove,
}

#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum, value_name = "SHELL")]
    pub(crate) shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub(crate) struct TemperatureArgs {
    /// How thermal zones are combined: default (the setting), low, average or high.
    #[arg(long, value_name = "MODE")]
    pub(crate) temperature_mode: Option<String>,
    /// The same as --temperature-mode, as the reference spells it (`current-temperature high`).
    #[arg(value_name = "MODE", conflicts_with = "temperature_mode")]
    pub(crate) mode: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

/// The agent of an `mcp-*` command: `--provider`, as on `hook-install`, or the positional
/// argument it had first.
#[derive(Debug, Args)]
pub(crate) struct AgentArg {
    /// The agent, or `all` (the agents whose config directory exists).
    #[arg(long = "provider", value_name = "PROVIDER", value_parser = agent_or_all())]
    provider: Option<String>,
    /// The agent, as a positional argument (the earlier spelling; `--provider` is preferred).
    #[arg(value_name = "AGENT", value_parser = agent_or_all(), conflicts_with = "provider", hide = true)]
    positional: Option<String>,
}

impl AgentArg {
    /// All agents (what `setup` and `uninstall` name).
    pub(crate) fn all() -> AgentArg {
        AgentArg {
            provider: Some("all".to_owned()),
            positional: None,
        }
    }

    /// The agent named either way.
    pub(crate) fn get(&self) -> Option<&str> {
        self.provider.as_deref().or(self.positional.as_deref())
    }
}

#[derive(Debug, Args)]
pub(crate) struct McpConfigArgs {
    #[command(flatten)]
    pub(crate) agent: AgentArg,
    #[command(flatten)]
    pub(crate) edit: EditFlags,
    /// Print what was done (or, with --dry-run, would be) as JSON: one object per agent.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct McpStatusArgs {
    #[command(flatten)]
    pub(crate) agent: AgentArg,
    /// Print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ProviderMcpArgs {
    /// The JSON file holding the agent's `mcpServers`.
    #[arg(long, value_name = "PATH")]
    pub(crate) config: PathBuf,
    /// The name the model's sessions are keyed by (required for install).
    #[arg(long, value_name = "NAME")]
    pub(crate) provider_name: Option<String>,
    /// The entry's name under `mcpServers` (default `lidguard-provider`).
    #[arg(long, value_name = "NAME")]
    pub(crate) server_name: Option<String>,
    #[command(flatten)]
    pub(crate) edit: EditFlags,
    /// Status: print JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct SshArgs {
    /// Put the static `lidguard-hook` and lidguard's hook entries on DESTINATION (a Linux
    /// host) for the agents found there, then exit: `lidguard ssh --install [SSH OPTIONS…]
    /// DESTINATION`. The entries are edited as local installs are (receipt, backup, atomic).
    #[arg(long, conflicts_with = "remove")]
    pub(crate) install: bool,
    /// Take them away again: lidguard's entries (the files' bytes back while nobody else
    /// changed them) and the hook.
    #[arg(long)]
    pub(crate) remove: bool,
    /// With --install: the static Linux `lidguard-hook` to put there (default: the one next
    /// to this lidguard, when it is a static build for the remote machine).
    #[arg(long, value_name = "PATH", requires = "install")]
    pub(crate) hook: Option<std::path::PathBuf>,
    /// Everything ssh takes, as you would pass it: options, DESTINATION, a command. lidguard
    /// adds `-R /tmp/lidguard-relay-<remote user>-<connection>.sock:<relay>` with
    /// `ExitOnForwardFailure=yes`; your config, keys and agent are ssh's own.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "SSH ARGS"
    )]
    pub(crate) ssh_args: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ContainerArgs {
    /// The engine and its run command as you would type them: `podman run [OPTIONS…] IMAGE
    /// [COMMAND…]` (or `docker run …`). lidguard adds `-v <relay>:/run/lidguard-relay.sock -e
    /// LIDGUARD_RELAY=/run/lidguard-relay.sock` after `run`; a detached `-d` run is refused.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ENGINE RUN ARGS"
    )]
    pub(crate) engine_args: Vec<String>,
    /// Reach the relay over TCP instead of a bind-mounted socket, for a container in a VM no
    /// socket crosses (Docker Desktop): HOST is how the container names this machine
    /// (`host.docker.internal`). lidguard then adds `-e LIDGUARD_RELAY=tcp://HOST:PORT -e
    /// LIDGUARD_RELAY_SECRET`, the secret passed through the engine's environment, never its
    /// command line.
    #[arg(long, value_name = "HOST")]
    pub(crate) tcp: Option<String>,
    /// Watch the container named NAME instead of running one, for a tool that starts it
    /// itself (a devcontainer's `initializeCommand`): the relay's socket goes in a folder the
    /// container bind-mounts, and its lease lasts until that container stops. Returns at once;
    /// the watch goes on in the background. ENGINE RUN ARGS are then the engine and its global
    /// options (`podman --runtime runc`).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["tcp", "devcontainer"])]
    pub(crate) watch: Option<String>,
    /// Print what a `devcontainer.json` needs so the container named NAME keeps this machine
    /// awake while its agents work: the watch as `initializeCommand`, the name, the mount and
    /// the environment. ENGINE RUN ARGS are then the engine and its global options.
    #[arg(long, value_name = "NAME", conflicts_with = "tcp")]
    pub(crate) devcontainer: Option<String>,
    /// Where the TCP relay listens (a free port when 0); only with --tcp.
    #[arg(
        long,
        value_name = "ADDRESS",
        default_value = "127.0.0.1:0",
        requires = "tcp"
    )]
    pub(crate) tcp_listen: std::net::SocketAddr,
}

#[derive(Debug, Args)]
pub(crate) struct LiveStatusArgs {
    /// Colour by state: auto (unless NO_COLOR is set), always or never.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub(crate) color: clap::ColorChoice,
}

#[derive(Debug, Args)]
pub(crate) struct PauseArgs {
    /// How long, e.g. `90s`, `30m`, `1h30m`, `2d` (whole minutes, rounded up; at most 30 days;
    /// default: until `lidguard resume`).
    #[arg(long = "for", value_name = "DURATION", value_parser = parse_pause)]
    pub(crate) length: Option<PauseLength>,
    /// Print JSON (a stable contract; see docs/reference.md).
    #[arg(long)]
    pub(crate) json: bool,
}

/// How long a pause lasts, in whole minutes, and whether what was typed was rounded up to them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PauseLength {
    pub(crate) minutes: u32,
    pub(crate) rounded: bool,
}

/// The longest pause `--for` takes; longer is a pause until `lidguard resume`.
pub(crate) const LONGEST_PAUSE_DAYS: u32 = 30;

/// A duration as people write it (`90s`, `30m`, `1h30m`, `2d`, `90 minutes`), in whole
/// minutes rounded up (a day is 24 hours).
fn parse_pause(text: &str) -> Result<PauseLength, String> {
    let span: jiff::Span = text
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a duration: write e.g. 90s, 30m, 1h30m or 2d"))?;
    let seconds = span
        .total(jiff::SpanTotal::from(jiff::Unit::Second).days_are_24_hours())
        .map_err(|_| format!("`{text}` is not a duration: write e.g. 90s, 30m, 1h30m or 2d"))?;
    if seconds <= 0.0 {
        return Err(format!("`{text}`: a pause lasts at least a minute"));
    }
    let minutes = (seconds / 60.0).ceil();
    if minutes > f64::from(LONGEST_PAUSE_DAYS * 24 * 60) {
        return Err(format!(
            "`{text}` is longer than the longest pause, {LONGEST_PAUSE_DAYS} days: leave out \
             --for to pause until `lidguard resume`"
        ));
    }
    Ok(PauseLength {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "checked above: 1 ..= 43,200 whole minutes"
        )]
        minutes: minutes as u32,
        rounded: seconds % 60.0 != 0.0,
    })
}

#[derive(Debug, Args)]
pub(crate) struct JsonArgs {
    /// Print JSON (a stable contract; see docs/reference.md).
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// Print JSON (a stable contract; see docs/reference.md).
    #[arg(long)]
    pub(crate) json: bool,
    /// For scripts: exit 3 when sessions want the machine kept awake but nothing is held (the
    /// reason on stderr), 0 otherwise (held, or nothing wanted, or no daemon); prints nothing
    /// else unless --verbose.
    #[arg(long)]
    pub(crate) check: bool,
    /// With --check: print the status too.
    #[arg(long, short, requires = "check")]
    pub(crate) verbose: bool,
}

/// `settings` flags come from the core's field table, so the CLI, the interactive editor and
/// validation never disagree about names.
#[derive(Debug)]
pub(crate) struct SettingsArgs {
    pub(crate) json: bool,
    /// (flag, value) in command-line order.
    pub(crate) changes: Vec<(&'static str, String)>,
}

impl FromArgMatches for SettingsArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut changes: Vec<(usize, &'static str, String)> = Vec::new();
        for spec in FIELDS {
            if let (Some(value), Some(index)) =
                (m.get_one::<String>(spec.flag), m.index_of(spec.flag))
            {
                changes.push((index, spec.flag, value.clone()));
            }
        }
        changes.sort_by_key(|(i, _, _)| *i);
        Ok(SettingsArgs {
            json: m.get_flag("json"),
            changes: changes.into_iter().map(|(_, f, v)| (f, v)).collect(),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = SettingsArgs::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for SettingsArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let os = Os::current();
        let cmd = cmd.arg(
            clap::Arg::new("json")
                .long("json")
                .action(ArgAction::SetTrue)
                .help("Print the settings as JSON"),
        );
        FIELDS.iter().fold(cmd, |cmd, spec| {
            let hint = spec
                .value_hint
                .trim_start_matches('<')
                .trim_end_matches('>');
            cmd.arg(
                clap::Arg::new(spec.flag)
                    .long(spec.flag)
                    .aliases(spec.aliases.iter().copied())
                    .value_name(hint)
                    .help(spec.help)
                    .help_heading(spec.category.label())
                    .allow_hyphen_values(true)
                    .value_parser(Offered(spec.offered_values()))
                    .hide_possible_values(true)
                    .action(ArgAction::Set)
                    // Other platforms' fields are still parsed, to answer with a clear message.
                    .hide(!spec.applies_to(os)),
            )
        })
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// A setting's value as typed (the settings table checks it, with its own messages), with the
/// values completions offer.
#[derive(Clone)]
struct Offered(&'static [&'static str]);

impl TypedValueParser for Offered {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        (!self.0.is_empty()).then(|| {
            Box::new(self.0.iter().map(|v| clap::builder::PossibleValue::new(*v)))
                as Box<dyn Iterator<Item = _>>
        })
    }
}

/// `--provider` of sessions: every provider, with its other spellings.
fn any_provider() -> impl clap::builder::TypedValueParser<Value = Provider> {
    let values = Provider::ALL.iter().map(|p| {
        clap::builder::PossibleValue::new(p.as_str()).aliases(p.aliases().iter().copied())
    });
    clap::builder::PossibleValuesParser::new(values)
        .map(|name| name.parse::<Provider>().expect("a listed name"))
}

/// The agent of a config command: an agent in the table (or one of its other spellings), or
/// `all`.
fn agent_or_all() -> clap::builder::PossibleValuesParser {
    let agents = AGENTS.iter().map(|a| {
        clap::builder::PossibleValue::new(a.provider.as_str())
            .aliases(a.provider.aliases().iter().copied())
    });
    clap::builder::PossibleValuesParser::new(
        agents.chain([clap::builder::PossibleValue::new("all")]),
    )
}

/// Parses the command line; on `--help`, `--version` or a usage error, prints and returns the
/// exit code.
pub(crate) fn parse() -> Result<Cli, ExitCode> {
    let report = |e: clap::Error| {
        let code = e.exit_code();
        let _ = e.print();
        ExitCode::from(u8::try_from(code).unwrap_or(2))
    };
    let matches = command().try_get_matches().map_err(report)?;
    if let Some((name, sub)) = matches.subcommand() {
        for &agent in AGENTS {
            if name == agent.hook_command {
                let event = sub.get_one::<String>("event").cloned();
                return Ok(Cli {
                    command: Some(Command::Hook { agent, event }),
                });
            }
            if name == agent.snippet_command {
                let format = sub.get_one::<String>("format").cloned().unwrap_or_default();
                return Ok(Cli {
                    command: Some(Command::Snippet { agent, format }),
                });
            }
            let distro = || sub.get_one::<String>("distro").cloned();
            if name == wsl_snippet_name(agent) {
                return Ok(Cli {
                    command: Some(Command::WslSnippet {
                        agent,
                        distro: distro(),
                    }),
                });
            }
            for (op, _) in WSL_MCP_OPS {
                if name == wsl_mcp_name(agent, op) {
                    let args = WslMcpArgs {
                        agent: Some(agent.provider.as_str().to_owned()),
                        distro: distro(),
                        dry_run: sub.get_flag("dry-run"),
                    };
                    let command = match *op {
                        "install" => Command::WslMcpInstall(args),
                        "status" => Command::WslMcpStatus(args),
                        _ => Command::WslMcpRemove(args),
                    };
                    return Ok(Cli {
                        command: Some(command),
                    });
                }
            }
        }
    }
    Cli::from_arg_matches(&matches).map_err(report)
}

/// The per-agent `wsl-<agent>-mcp-<op>` aliases, with their help.
const WSL_MCP_OPS: &[(&str, &str)] = &[
    (
        "install",
        "register lidguard's MCP server with it inside a WSL distro",
    ),
    (
        "status",
        "check lidguard's MCP server entry inside a WSL distro",
    ),
    (
        "remove",
        "remove lidguard's MCP server entry inside a WSL distro",
    ),
];

/// `wsl-<agent>-hooks` (`wsl-claude-hooks`).
fn wsl_snippet_name(agent: &Agent) -> String {
    format!("wsl-{}", agent.snippet_command)
}

/// `wsl-<agent>-mcp-<op>` (`wsl-codex-mcp-install`).
fn wsl_mcp_name(agent: &Agent, op: &str) -> String {
    format!("wsl-{}-mcp-{op}", agent.provider.as_str())
}

/// The per-agent WSL commands (Windows; hidden elsewhere).
fn wsl_commands(agent: &Agent) -> Vec<clap::Command> {
    let name = agent.provider.display_name();
    let distro = clap::Arg::new("distro")
        .long("distro")
        .value_name("NAME")
        .help("The WSL distro (default: WSL's default distro)");
    // clap wants 'static names; a CLI process builds these once or twice.
    let leak = |name: String| -> &'static str { Box::leak(name.into_boxed_str()) };
    let mut out = vec![
        clap::Command::new(leak(wsl_snippet_name(agent)))
            .about(format!(
                "Windows: print the {name} hook configuration `wsl-hook-install` writes in WSL"
            ))
            .arg(distro.clone())
            .hide(HOST != Os::Windows),
    ];
    if agent.mcp.is_some() {
        out.extend(WSL_MCP_OPS.iter().map(|(op, help)| {
            clap::Command::new(leak(wsl_mcp_name(agent, op)))
                .about(format!("Windows: {name}: {help}"))
                .arg(distro.clone())
                .arg(
                    clap::Arg::new("dry-run")
                        .long("dry-run")
                        .action(ArgAction::SetTrue)
                        .help("Print the diff that would be written inside the distro"),
                )
                .hide(HOST != Os::Windows)
        }));
    }
    out
}

/// The clap definition, for parsing and help rendering: the fixed commands, and for each agent
/// in the table its hook subcommand and its snippet printer.
pub(crate) fn command() -> clap::Command {
    let cmd = AGENTS.iter().fold(Cli::command(), |cmd, agent| {
        cmd.subcommand(hook_command(agent))
            .subcommand(snippet_command(agent))
            .subcommands(wsl_commands(agent))
    });
    crate::examples::with_examples(cmd)
}

/// `<agent>-hook`, with `--event` for agents whose payloads do not name it.
fn hook_command(agent: &Agent) -> clap::Command {
    let cmd = clap::Command::new(agent.hook_command).about(agent.hook_help());
    if !agent.event_on_command_line {
        return cmd;
    }
    cmd.arg(
        clap::Arg::new("event")
            .long("event")
            .visible_alias("event-name")
            .value_name("EVENT")
            .required(true)
            .help("The event name, as configured in the agent (its payloads do not name it)"),
    )
}

/// `<agent>-hooks <format>`: the formats come from the agent's entry.
fn snippet_command(agent: &Agent) -> clap::Command {
    let formats = agent
        .snippets
        .iter()
        .map(|s| clap::builder::PossibleValue::new(s.format).help(s.help));
    let name = agent.provider.display_name();
    clap::Command::new(agent.snippet_command)
        .about(format!(
            "Print the {name} hook configuration `hook-install` writes"
        ))
        .arg(
            clap::Arg::new("format")
                .value_name("FORMAT")
                .required(true)
                .value_parser(clap::builder::PossibleValuesParser::new(formats))
                .help("What to print"),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fast(args: &[&str]) -> Option<(Provider, Option<String>)> {
        lidguard::hook::parse_args(args.iter().map(std::ffi::OsString::from))
    }

    #[test]
    fn only_exact_hook_invocations_take_the_fast_path() {
        assert_eq!(fast(&["claude-hook"]), Some((Provider::Claude, None)));
        assert_eq!(fast(&["codex-hook"]), Some((Provider::Codex, None)));
        assert_eq!(
            fast(&["copilot-hook", "--event", "agentStop"]),
            Some((Provider::Copilot, Some("agentStop".into())))
        );
        assert_eq!(
            fast(&["opencode-hook", "--event=session.idle"]),
            Some((Provider::OpenCode, Some("session.idle".into())))
        );
        for slow in [
            &["claude-hook", "--help"][..],
            &["copilot-hook"],
            &["copilot-hook", "--event"],
            &["copilot-hook", "--event", "--help"],
            &["claude-hook", "--event", "x"],
            &["status"],
            &[],
        ] {
            assert_eq!(fast(slow), None, "{slow:?}");
        }
    }
}
