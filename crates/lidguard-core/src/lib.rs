//! The pure core of lidguard.
//!
//! Everything here is a function of its inputs: no clock, no file, no socket and no OS call.
//! The daemon feeds [`registry::Registry::apply`] an [`registry::Input`] together with the
//! current time and carries out the [`registry::Effect`]s it gets back. That keeps the whole
//! session lifecycle testable by replaying inputs against a virtual clock.
//!
//! # Modules
//!
//! - [`ask`]: ask before sleep — the follow-up question whose reply continues a session.
//! - [`clamshell`]: when a closed lid means sleep, and when a hold must end for the battery or
//!   the heat.
//! - [`desktop`]: which moments need a desktop notification, each told once.
//! - [`provider`]: the agent harnesses lidguard knows.
//! - [`session`]: one agent conversation and its key.
//! - [`registry`]: the session state machine (activity, soft-lock, pending work, timeouts,
//!   idempotent stop, idle exit).
//! - [`protection`]: what keep-awake protection the registry wants held.
//! - [`settings`]: the user's settings, their defaults and validation.
//! - [`event`]: the provider-neutral model of what an agent did, and closed-lid decisions.
//! - [`suspend`]: the closed-lid suspend flow's machine observations, pending suspend and
//!   OS request.

/// `Display` as the text one of the type's methods gives: `display_as!(Os, name)`.
macro_rules! display_as {
    ($type:ty, $text:ident) => {
        impl std::fmt::Display for $type {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.$text())
            }
        }
    };
}

pub mod ask;
pub mod clamshell;
pub mod desktop;
pub mod event;
pub mod notice;
pub mod protection;
pub mod provider;
pub mod registry;
pub mod remote;
pub mod session;
pub mod settings;
pub mod suspend;
pub mod text;
pub mod webhook;

pub use jiff::Timestamp;
