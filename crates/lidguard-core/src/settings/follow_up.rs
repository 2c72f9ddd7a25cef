//! Ask before sleep ("closed-lid stop follow-up"): whether it is in effect, and what keeps it
//! from working.

use std::fmt::{self, Display};

/// How much longer than the remote-decision wait the managed hook timeout is, in seconds.
pub const REMOTE_HOOK_MARGIN_SECONDS: u32 = 20;

/// The shortest reply wait that makes ask-before-sleep usable, in seconds.
pub const MINIMUM_REPLY_WAIT_SECONDS: u32 = 20;
/// The shortest post-stop suspend delay that ask-before-sleep works with, in seconds.
pub const MINIMUM_POST_STOP_SUSPEND_DELAY_SECONDS: u32 = 10;
/// The longest extension a receiver may grant to a reply window, in seconds.
pub const MAXIMUM_REPLY_EXTENSION_SECONDS: u32 = 300;
/// The managed hook timeout when ask-before-sleep is not on, in seconds.
pub const DEFAULT_HOOK_TIMEOUT_SECONDS: u32 = 30;

/// A configuration problem that keeps ask-before-sleep from working.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FollowUpIssue {
    /// The webhook URL is set but is not an absolute `http`/`https` URL.
    InvalidWebhookUrl,
    /// The reply wait is 1..=19 seconds.
    ReplyWaitTooShort,
    /// The reply wait is on but the post-stop suspend delay is under 10 seconds.
    PostStopDelayTooShort,
}

impl FollowUpIssue {
    /// The reference system's name, e.g. `ReplyWaitTooShort`.
    pub const fn as_str(self) -> &'static str {
        match self {
            FollowUpIssue::InvalidWebhookUrl => "InvalidWebhookUrl",
            FollowUpIssue::ReplyWaitTooShort => "ReplyWaitTooShort",
            FollowUpIssue::PostStopDelayTooShort => "PostStopDelayTooShort",
        }
    }

    /// What to change, in words.
    pub const fn description(self) -> &'static str {
        match self {
            FollowUpIssue::InvalidWebhookUrl => {
                "--closed-lid-stop-follow-up-webhook-url is not an absolute http:// or https:// URL"
            }
            FollowUpIssue::ReplyWaitTooShort => {
                "--closed-lid-stop-follow-up-delay-seconds must be 0 (off) or at least 20"
            }
            FollowUpIssue::PostStopDelayTooShort => {
                "--post-stop-suspend-delay-seconds must be at least 10 while asking before sleep"
            }
        }
    }
}

display_as!(FollowUpIssue, description);

/// Whether ask-before-sleep ("closed-lid stop follow-up") is in effect.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FollowUpState {
    /// No webhook URL, or a reply wait of 0.
    Off,
    /// Configured and usable.
    On,
    /// A URL is set but the configuration cannot work; every issue is listed.
    ConfigurationError(Vec<FollowUpIssue>),
}

impl FollowUpState {
    /// The reference system's name: `Off`, `On` or `ConfigurationError`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            FollowUpState::Off => "Off",
            FollowUpState::On => "On",
            FollowUpState::ConfigurationError(_) => "ConfigurationError",
        }
    }
}

/// `off`, `on` or `configuration error: …` with every issue.
impl Display for FollowUpState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FollowUpState::Off => f.write_str("off"),
            FollowUpState::On => f.write_str("on"),
            FollowUpState::ConfigurationError(issues) => {
                f.write_str("configuration error: ")?;
                for (i, issue) in issues.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    f.write_str(issue.description())?;
                }
                Ok(())
            }
        }
    }
}
