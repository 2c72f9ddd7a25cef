//! `lidguard settings`: print, set with flags, or edit interactively on a terminal.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use anyhow::Context;
use lidguard_config::settings::Changes;
use lidguard_core::settings::{FieldKind, FieldSpec, fields_for};
use lidguard_core::settings::{Os, Settings};
use lidguard_ipc::{Places, settings_file};

use crate::cli::SettingsArgs;
use crate::{output, prompt};

pub(crate) fn run(places: &Places, args: &SettingsArgs) -> anyhow::Result<ExitCode> {
    let os = Os::current();
    let path = places.settings_file();
    // A file that does not parse stops here, untouched, with a message naming it.
    let current = settings_file::load_or_default(&path, os)?;

    if args.changes.is_empty() {
        if !args.json && prompt::interactive() {
            let stdin = std::io::stdin();
            let edited = edit(&current, os, &mut stdin.lock(), &mut std::io::stdout())?;
            if let Some(draft) = edited {
                // Only the fields edited here: another writer may have changed others meanwhile.
                let edits: Vec<(&'static str, String)> = current
                    .changed_fields(&draft, os)
                    .into_iter()
                    .map(|spec| (spec.flag, draft.get_field(spec.flag).unwrap_or_default()))
                    .collect();
                save_and_push(places, &edits)?;
            }
            return Ok(ExitCode::SUCCESS);
        }
        if args.json {
            output::json(&current.redacted_json())?;
        } else {
            output::prompt(&render(&current, os, &path.display().to_string()))?;
        }
        return Ok(ExitCode::SUCCESS);
    }

    let new = save_and_push(places, &args.changes)?;
    if args.json {
        output::json(&new.redacted_json())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Applies `changes` (flag, value) through the one settings path (`lidguard_config::settings`)
/// and reports what changed, what the running daemon did, and the hook timeouts refreshed.
fn save_and_push(places: &Places, changes: &[(&'static str, String)]) -> anyhow::Result<Settings> {
    let os = Os::current();
    let changes = Changes {
        reset: false,
        fields: changes.to_vec(),
    };
    let applied = lidguard_config::settings::apply(
        places,
        os,
        &changes,
        lidguard_config::hook_command,
        &lidguard_files::environment::var,
    )
    .map_err(|e| match e {
        // A value the flag does not take is a mistake in what was typed.
        lidguard_config::settings::Rejected::Field { .. } => {
            anyhow::Error::new(output::Usage(e.to_string()))
        }
        other => other.into(),
    })?;
    if applied.changed.is_empty() {
        output::line("No change.")?;
        return Ok(applied.new);
    }
    for spec in &applied.changed {
        output::line(&format!(
            "{}: {} -> {}",
            spec.flag,
            applied.old.shown_value(spec),
            applied.new.shown_value(spec)
        ))?;
    }
    output::line(&format!("Saved to {}.", places.settings_file().display()))?;
    let lines = applied
        .pushed
        .line()
        .into_iter()
        .chain(applied.hooks.lines());
    for line in lines {
        if line.warning {
            output::warn(&line.text);
        } else {
            output::line(&line.text)?;
        }
    }
    Ok(applied.new)
}

/// What the phone (ntfy) settings come to, in one line.
fn phone_line(settings: &Settings) -> String {
    use lidguard_core::settings::ClosedLidPermissionRequestDecision as Policy;
    let remote = settings.closed_lid_permission_request_decision == Policy::Remote;
    let Some(topic) = settings.ntfy() else {
        return if remote {
            format!(
                "off — the closed-lid policy is remote but --ntfy-url is off, so permission \
                 requests get the fallback ({}) at once",
                settings.remote_decision_fallback
            )
        } else {
            "off".to_owned()
        };
    };
    // The topic's name is its password on a public server: never printed.
    let mut parts = vec![format!(
        "notifications to your topic on {}, replies read from its -reply topic",
        topic.server
    )];
    if remote {
        parts.push(format!(
            "closed-lid permission requests wait {} s for the phone, then {}",
            settings.remote_decision_timeout_seconds, settings.remote_decision_fallback
        ));
    }
    parts.push(format!(
        "ask before sleep {}",
        match (settings.ntfy_ask_before_sleep, settings.follow_up_state()) {
            (false, _) => "off".to_owned(),
            (true, lidguard_core::settings::FollowUpState::On) => "on".to_owned(),
            (true, state) => format!("set, but {state}"),
        }
    ));
    parts.push(format!(
        "needs-you {}, works-again {}",
        if settings.ntfy_needs_you { "on" } else { "off" },
        if settings.ntfy_resumed { "on" } else { "off" }
    ));
    parts.join("; ")
}

fn render(settings: &Settings, os: Os, path: &str) -> String {
    let mut out = format!("Settings ({path}):\n");
    let width = fields_for(os).map(|s| s.flag.len()).max().unwrap_or(0);
    let mut category = None;
    for spec in fields_for(os) {
        if category != Some(spec.category) {
            category = Some(spec.category);
            out.push_str(&format!("\n  {}\n", spec.category.label()));
        }
        let value = settings.shown_value(spec);
        out.push_str(&format!("    {:<width$}  {value}\n", spec.flag));
    }
    out.push_str(&format!(
        "\nAsk before sleep: {} (hooks wait up to {} s)\n",
        settings.follow_up_state(),
        settings.managed_hook_timeout_seconds()
    ));
    out.push_str(&format!("Phone: {}\n", phone_line(settings)));
    out.push_str("\nChange one with `lidguard settings --<name> <value>`; `lidguard settings --help` explains each.\n");
    out
}

/// The interactive editor. Returns the new settings to save, or `None` to leave them as they
/// were. Generic over its input and output so it is tested without a terminal.
fn edit(
    current: &Settings,
    os: Os,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> anyhow::Result<Option<Settings>> {
    let specs: Vec<&FieldSpec> = fields_for(os).collect();
    let mut draft = current.clone();
    let mut read = |out: &mut dyn Write, question: &str| -> anyhow::Result<Option<String>> {
        write!(out, "{question}")?;
        out.flush()?;
        let mut line = String::new();
        if input
            .read_line(&mut line)
            .context("cannot read the answer")?
            == 0
        {
            return Ok(None);
        }
        Ok(Some(line.trim().to_owned()))
    };
    // What the last answer came to (a value refused, an unknown name): shown under the list,
    // right above the next question, so a redrawn list never scrolls it away.
    let mut notice: Option<String> = None;
    loop {
        writeln!(out)?;
        let mut category = None;
        for (i, spec) in specs.iter().enumerate() {
            if category != Some(spec.category) {
                category = Some(spec.category);
                writeln!(out, "  {}", spec.category.label())?;
            }
            let value = draft.shown_value(spec);
            let mark = if draft.get_field(spec.flag) == current.get_field(spec.flag) {
                " "
            } else {
                "*"
            };
            writeln!(out, "  {mark}{:>3}. {:<58} {value}", i + 1, spec.flag)?;
        }
        if let Some(notice) = notice.take() {
            writeln!(out, "\n{notice}")?;
        }
        let Some(answer) = read(
            out,
            "\nNumber or name to change, s = save and quit, q = quit without saving: ",
        )?
        else {
            return Ok(None);
        };
        match answer.as_str() {
            "s" | "S" => return Ok(Some(draft)),
            "q" | "Q" => {
                let unsaved: Vec<&str> = current
                    .changed_fields(&draft, os)
                    .iter()
                    .map(|spec| spec.flag)
                    .collect();
                if unsaved.is_empty() {
                    return Ok(None);
                }
                let question = format!(
                    "Quit and drop {} unsaved change{} ({})? [y/N] ",
                    unsaved.len(),
                    if unsaved.len() == 1 { "" } else { "s" },
                    unsaved.join(", ")
                );
                match read(out, &question)?.as_deref() {
                    None | Some("y" | "Y" | "yes") => return Ok(None),
                    Some(_) => {
                        notice = Some("Not quit: s saves the changes marked *.".to_owned());
                        continue;
                    }
                }
            }
            _ => {}
        }
        let by_number = answer
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| specs.get(i));
        let by_name = || specs.iter().find(|spec| spec.matches(&answer));
        let Some(spec) = by_number.or_else(by_name) else {
            notice = Some(format!("`{answer}` is not a setting number or name."));
            continue;
        };
        writeln!(out, "\n{} — {}", spec.flag, spec.help)?;
        writeln!(out, "Accepted: {}.", spec.expected())?;
        let current_value = draft.shown_value(spec);
        let Some(value) = read(out, &format!("New value [{current_value}]: "))? else {
            return Ok(None);
        };
        if value.is_empty() {
            continue;
        }
        let mut candidate = draft.clone();
        match candidate
            .set_field(spec.flag, &value, os)
            .map_err(anyhow::Error::from)
            .and_then(|()| {
                if matches!(spec.kind, FieldKind::Sound) {
                    settings_file::check_sound_files(&candidate).map_err(anyhow::Error::msg)
                } else {
                    Ok(())
                }
            }) {
            Ok(()) => draft = candidate,
            Err(e) => notice = Some(format!("Not changed: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_editor(script: &str) -> (Option<Settings>, String) {
        let current = Settings::defaults_for(Os::Linux);
        let mut input = std::io::Cursor::new(script.as_bytes().to_vec());
        let mut out = Vec::new();
        let result = edit(&current, Os::Linux, &mut input, &mut out).unwrap();
        (result, String::from_utf8(out).unwrap())
    }

    fn number_of(flag: &str) -> usize {
        fields_for(Os::Linux).position(|s| s.flag == flag).unwrap() + 1
    }

    #[test]
    fn editor_changes_validates_and_saves() {
        let timeout = number_of("session-timeout-minutes");
        let mode = number_of("suspend-mode");
        let script =
            format!("{timeout}\n0\n{timeout}\noff\n{mode}\nhibernate\n99\nsuspend-mode\n\ns\n");
        let (result, screen) = run_editor(&script);
        let new = result.expect("saved");
        assert_eq!(new.session_timeout_minutes, None);
        assert_eq!(
            new.suspend_mode,
            lidguard_core::settings::SuspendMode::Hibernate
        );
        assert!(
            screen.contains("Not changed:"),
            "0 minutes must be rejected:\n{screen}"
        );
        assert!(screen.contains("`99` is not a setting number or name."));
    }

    #[test]
    fn editor_quit_or_end_of_input_saves_nothing() {
        let mode = number_of("suspend-mode");
        assert_eq!(run_editor("q\n").0, None);
        assert_eq!(run_editor(&format!("{mode}\nhibernate\nq\ny\n")).0, None);
        assert_eq!(run_editor(&format!("{mode}\nhibernate\nq\n")).0, None);
        assert_eq!(run_editor(&format!("{mode}\nhibernate\n")).0, None);
    }

    /// `q` with changes asks first; anything but yes goes back to the list, the changes kept.
    #[test]
    fn editor_asks_before_dropping_unsaved_changes() {
        let mode = number_of("suspend-mode");
        let (result, screen) = run_editor(&format!("{mode}\nhibernate\nq\nn\ns\n"));
        assert_eq!(
            result.expect("saved").suspend_mode,
            lidguard_core::settings::SuspendMode::Hibernate
        );
        assert!(
            screen.contains("Quit and drop 1 unsaved change (suspend-mode)? [y/N] "),
            "{screen}"
        );
        assert!(screen.contains("Not quit: s saves"), "{screen}");
    }

    /// A refused value's reason is the last thing before the next question, under the list.
    #[test]
    fn editor_keeps_its_error_above_the_question() {
        let timeout = number_of("session-timeout-minutes");
        let (_, screen) = run_editor(&format!("{timeout}\n0\n"));
        let error = screen.rfind("Not changed:").expect("the error is shown");
        let list_line = format!("{timeout:>3}. session-timeout-minutes");
        assert!(screen[..error].contains(&list_line), "{screen}");
        assert!(
            !screen[error..].contains(&list_line),
            "the list was drawn after the error:\n{screen}"
        );
        let after: Vec<&str> = screen[error..].lines().collect();
        assert!(
            after[2].starts_with("Number or name to change"),
            "{after:?}"
        );
    }
}
