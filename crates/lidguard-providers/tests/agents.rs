//! Every agent in the table is complete: a hook subcommand of its own, an installer whose
//! install → status → remove round trip holds, snippet printers, captured (or, for Cursor,
//! documented) fixtures for every event its hook status watches, a folder README whose cited
//! fixtures exist, and rows in the project README's hook and install tables.
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use lidguard_providers::agent::{Agent, EventFiles};
use lidguard_providers::install::{Change, HookCommand, HookShell, InstallState};
use lidguard_providers::{AGENTS, agent};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cmd() -> HookCommand {
    HookCommand {
        program: "/usr/local/bin/lidguard-hook".into(),
        shell: HookShell::Posix,
    }
}

#[test]
fn hook_and_snippet_commands_are_unique_and_found() {
    let mut seen = HashSet::new();
    for a in AGENTS {
        assert!(a.hook_command.ends_with("-hook"), "{a:?}");
        assert_eq!(a.snippet_command, format!("{}s", a.hook_command));
        assert!(seen.insert(a.hook_command), "{} twice", a.hook_command);
        assert!(
            seen.insert(a.snippet_command),
            "{} twice",
            a.snippet_command
        );
        assert_eq!(
            lidguard_providers::by_hook_command(a.hook_command).map(|x| x.provider),
            Some(a.provider)
        );
        assert_eq!(
            agent(a.provider).map(|x| x.hook_command),
            Some(a.hook_command)
        );
        assert!(!a.snippets.is_empty(), "{a:?} prints no snippet");
        for s in a.snippets {
            assert!(
                !a.snippet(s.format, &cmd(), 30)
                    .unwrap_or_default()
                    .trim()
                    .is_empty(),
                "{a:?} {}",
                s.format
            );
        }
    }
}

#[test]
fn every_installer_round_trips_on_a_missing_file() {
    for a in AGENTS {
        if let Some(files) = a.hooks.event_files() {
            event_files_round_trip(a, files);
            continue;
        }
        let Change::Changed { new_text } = a.hooks.install(None, &cmd(), 30).unwrap() else {
            panic!("{a:?}: install into a missing file changes nothing");
        };
        let status = a.hooks.status(Some(&new_text), &cmd(), 30).unwrap();
        assert_eq!(status.state, InstallState::Installed, "{a:?}: {status:?}");
        assert_eq!(
            a.hooks.install(Some(&new_text), &cmd(), 30).unwrap(),
            Change::Unchanged,
            "{a:?}: installing twice changes the file"
        );
        let removed = a.hooks.remove(&new_text, &cmd(), None).unwrap();
        match removed {
            Change::Delete => {}
            Change::Changed { new_text } => assert!(
                lidguard_providers::install::is_empty_config(&new_text),
                "{a:?}: remove leaves {new_text}"
            ),
            Change::Unchanged => panic!("{a:?}: remove found nothing"),
        }
        if let Some(mcp) = a.mcp {
            let Change::Changed { new_text } = mcp.install(None, "/bin/lidguard", false).unwrap()
            else {
                panic!("{a:?}: MCP install into a missing file changes nothing");
            };
            let status = mcp.status(Some(&new_text), "/bin/lidguard").unwrap();
            assert_eq!(status.state, InstallState::Installed, "{a:?}");
        }
    }
}

/// A directory of per-event hook files: each file written, recognized, kept, and taken away;
/// a file of the user's by an event's name refused and never taken away.
fn event_files_round_trip(a: &Agent, files: &EventFiles) {
    event_files_round_trip_with(a, files, &cmd());
    // A program whose path has a space (Cline then runs it from a `#!/bin/sh` file).
    if cfg!(unix) {
        event_files_round_trip_with(
            a,
            files,
            &HookCommand {
                program: "/opt/my tools/lidguard-hook".into(),
                shell: HookShell::Posix,
            },
        );
    }
}

fn event_files_round_trip_with(a: &Agent, files: &EventFiles, cmd: &HookCommand) {
    let cmd = || cmd.clone();
    let sub = a.hook_command;
    let mut dir = Vec::new();
    for event in files.events {
        let Change::Changed { new_text } = files.install(None, &cmd(), sub, event).unwrap() else {
            panic!("{a:?}: install of {event} into a missing file changes nothing");
        };
        assert_eq!(
            files.install(Some(&new_text), &cmd(), sub, event).unwrap(),
            Change::Unchanged,
            "{a:?}: installing {event} twice changes it"
        );
        assert_eq!(
            files.remove(&new_text, &cmd(), sub),
            Change::Delete,
            "{a:?}"
        );
        dir.push(((*event).to_owned(), new_text));
    }
    let status = files.status(&dir, &cmd(), sub).unwrap();
    assert_eq!(status.state, InstallState::Installed, "{a:?}: {status:?}");
    let users = "#!/bin/sh\necho mine\n";
    assert!(
        files
            .install(Some(users), &cmd(), sub, files.events[0])
            .is_err()
    );
    assert_eq!(files.remove(users, &cmd(), sub), Change::Unchanged);
    dir[0].1 = users.to_owned();
    let status = files.status(&dir, &cmd(), sub).unwrap();
    assert_eq!(status.state, InstallState::Drifted, "{a:?}: {status:?}");
    assert_eq!(status.missing_events, [files.events[0]], "{a:?}");
}

/// (event, file name) of every fixture of `provider`.
fn fixtures(provider: &str) -> Vec<(String, String)> {
    let dir = repo().join("tests/fixtures").join(provider);
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let fixture: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(fixture["provider"], provider, "{}", path.display());
        assert!(
            fixture.get("expect").is_some(),
            "{}: no expect",
            path.display()
        );
        out.push((
            fixture["event"].as_str().unwrap().to_owned(),
            path.file_name().unwrap().to_string_lossy().into_owned(),
        ));
    }
    out
}

#[test]
fn every_watched_event_has_a_fixture() {
    for a in AGENTS {
        let name = a.provider.as_str();
        let have: HashSet<String> = fixtures(name).into_iter().map(|(e, _)| e).collect();
        for event in a.hooks.evidence {
            assert!(have.contains(*event), "{name}: no fixture for {event}");
        }
    }
}

#[test]
fn every_agent_has_a_readme_whose_fixtures_exist() {
    for a in AGENTS {
        let name = a.provider.as_str();
        let path = repo()
            .join("crates/lidguard-providers/src/agents")
            .join(name)
            .join("README.md");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let files: HashSet<String> = fixtures(name).into_iter().map(|(_, f)| f).collect();
        let cited: Vec<&str> = text
            .split('`')
            .filter(|w| w.ends_with(".json") && w.contains("__") && !w.contains(['/', '<', '*']))
            .collect();
        assert!(!cited.is_empty(), "{name}: its README cites no fixture");
        for file in cited {
            assert!(
                files.contains(file),
                "{name}: README cites {file}, which is missing"
            );
        }
    }
}

#[test]
fn every_agent_has_rows_in_the_agents_guide() {
    let readme = std::fs::read_to_string(repo().join("docs/agents.md")).unwrap();
    for a in AGENTS {
        let display = a.provider.display_name();
        let rows: Vec<&str> = readme
            .lines()
            .filter(|l| l.starts_with(&format!("| {display} |")))
            .collect();
        assert!(
            rows.iter()
                .any(|r| r.contains(&format!("`lidguard {}", a.hook_command))),
            "docs/agents.md: no hook command row for {display}"
        );
        assert!(
            rows.len() >= 3,
            "docs/agents.md: {display} needs rows in the hook, install and MCP tables: {rows:?}"
        );
    }
}
