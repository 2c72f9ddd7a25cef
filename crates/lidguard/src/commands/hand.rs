//! `lidguard pause`, `resume` and `cancel-suspend`: the user's hand on protection. Each says
//! what it did and the protection as it is afterwards.

use std::process::ExitCode;

use lidguard_ipc::Places;
use lidguard_ipc::protocol::{Request, Response};

use super::session::send_starting;
use crate::output;

/// Pauses protection. The daemon is started when none runs: it holds the pause, so an agent
/// starting later stays unprotected until the pause ends.
pub(crate) fn pause(
    places: &Places,
    length: Option<crate::cli::PauseLength>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let minutes = length.map(|l| l.minutes);
    if let Some(l) = length.filter(|l| l.rounded && !json) {
        output::line(&format!(
            "(a pause lasts whole minutes: rounded up to {} min)",
            l.minutes
        ))?;
    }
    finish(&send_starting(places, &Request::Pause { minutes })?, json)
}

/// Resumes, or cancels the pending suspend (without a daemon there is nothing to do).
pub(crate) fn send(places: &Places, request: &Request, json: bool) -> anyhow::Result<ExitCode> {
    super::session::send_if_running(places, request, json)
}

fn finish(response: &Response, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        output::json(response)?;
    } else {
        output::line(&response.message)?;
        if let Some(p) = &response.protection {
            output::line(&format!("Protection: {}", p.in_words()))?;
        }
    }
    if !response.ok {
        anyhow::bail!("{}", response.message);
    }
    Ok(ExitCode::SUCCESS)
}
