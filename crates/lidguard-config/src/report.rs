//! Report lines the CLI prints and the MCP server sends to the model, so both say the same.

use lidguard_core::provider::Provider;

use crate::hooks::Trust;

/// One line of a report, for a person or a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// Something the user should act on.
    pub warning: bool,
    /// The words.
    pub text: String,
}

impl Line {
    pub(crate) fn info(text: String) -> Line {
        Line {
            warning: false,
            text,
        }
    }

    pub(crate) fn warning(text: String) -> Line {
        Line {
            warning: true,
            text,
        }
    }
}

/// What an agent's trust records say after lidguard's entries changed (Codex).
pub fn trust_lines(provider: Provider, trust: Option<&Trust>) -> Vec<Line> {
    let name = provider.display_name();
    match trust {
        None => Vec::new(),
        // Trust records are Codex's (its `/hooks`); the flag is named after it.
        Some(Trust::Untrusted(skipped)) => vec![Line::info(format!(
            "  Codex skips hooks nobody trusted ({}): open `codex`, run /hooks and trust them, or rerun with --trust-codex-hooks.",
            skipped.join(", ")
        ))],
        Some(Trust::Recorded(outcome)) => match &outcome.action {
            crate::Action::WouldChange { .. } => vec![Line::info(format!(
                "{name}: would record trust in {}",
                outcome.file.display()
            ))],
            crate::Action::Written { .. } => {
                let mut lines = vec![Line::info(format!(
                    "{name}: recorded lidguard's hooks as trusted in {}",
                    outcome.file.display()
                ))];
                if let Some(b) = &outcome.backup {
                    let file = outcome
                        .file
                        .file_name()
                        .unwrap_or_default()
                        .to_string_lossy();
                    lines.push(Line::info(format!(
                        "  previous {file} saved as {}",
                        b.display()
                    )));
                }
                lines
            }
            crate::Action::Unchanged | crate::Action::Deleted { .. } => Vec::new(),
        },
    }
}
