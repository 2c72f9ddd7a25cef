//! Asking the human at the terminal, only when there is one.

use std::io::{BufRead, IsTerminal};

use anyhow::{Context, bail};
use lidguard_core::provider::Provider;

use crate::output;

/// Whether we may ask questions: stdin and stdout are both terminals.
pub(crate) fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stdout().is_terminal()
}

/// The provider given, or one asked for on a terminal, or a clear error.
pub(crate) fn provider(given: Option<Provider>, command: &str) -> anyhow::Result<Provider> {
    match given {
        Some(p) => Ok(p),
        None => provider_among(Provider::ALL, command),
    }
}

/// One of `choices`, asked for on a terminal, or a clear error naming them.
pub(crate) fn provider_among(choices: &[Provider], command: &str) -> anyhow::Result<Provider> {
    agent_among(choices, command, "--provider")
}

/// Like [`provider_among`], for commands whose error names the missing argument as `needs`
/// (`--provider`, or `an agent` for positional arguments).
pub(crate) fn agent_among(
    choices: &[Provider],
    command: &str,
    needs: &str,
) -> anyhow::Result<Provider> {
    if !interactive() {
        let names: Vec<&str> = choices.iter().map(|p| p.as_str()).collect();
        bail!(
            "`lidguard {command}` needs {needs}: one of {}",
            names.join(", ")
        );
    }
    output::line("Which agent is this for?")?;
    for (i, p) in choices.iter().enumerate() {
        output::line(&format!(
            "  {}. {} ({})",
            i + 1,
            p.as_str(),
            p.display_name()
        ))?;
    }
    loop {
        output::prompt("Number or name: ")?;
        let Some(answer) = read_line()? else {
            bail!("no provider chosen");
        };
        let answer = answer.trim();
        let chosen = answer
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| choices.get(i).copied())
            .or_else(|| answer.parse().ok().filter(|p| choices.contains(p)));
        match chosen {
            Some(p) => return Ok(p),
            None => output::line(&format!("`{answer}` is not one of the choices."))?,
        }
    }
}

/// One line from stdin, without the newline; `None` at end of input.
pub(crate) fn read_line() -> anyhow::Result<Option<String>> {
    let mut line = String::new();
    let n = std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("cannot read from the terminal")?;
    if n == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim_end_matches(['\r', '\n']).to_owned()))
}
