//! Requests: what each command-line request asks of the registry, decided before anything is
//! applied (hooks and the event stream have their own paths).

use lidguard_core::registry::{Input, RemoveSelector, Reply, StartSession, StopSession};
use lidguard_core::session::{Session, SessionKey};
use lidguard_core::settings::{Os, Settings};
use lidguard_ipc::protocol::{Outcome, ProtectionStatus, Request, Response};
use lidguard_platform::sources::Roots;

/// How a request is carried out.
pub(super) enum Route {
    /// Answered as it is.
    Now(Response),
    Status,
    /// An input about one session.
    Session {
        key: SessionKey,
        input: Input,
        /// Answered only once the change is on disk: a daemon killed right after answering
        /// loses nothing it acknowledged.
        durable: bool,
        /// The lid read first (a stop may schedule a suspend).
        observe_first: bool,
        /// The answer says what protection is held (a start).
        with_protection: bool,
    },
    Remove(RemoveSelector),
    /// Sessions whose sign of life is gone end on the cancel path.
    Gone(Gone),
    Settings(Box<Settings>),
    /// The user's hand on protection (pause, resume, cancel a suspend): answered with the
    /// protection as it is then, `done` or `unchanged` as the registry replies.
    Hand {
        input: Input,
        done: String,
        unchanged: &'static str,
    },
}

/// The route of `request`; hooks and `events` are not routed here.
pub(super) fn route(request: Request) -> Route {
    let plain = |key: SessionKey, input: Input| Route::Session {
        key,
        input,
        durable: false,
        observe_first: false,
        with_protection: false,
    };
    match request {
        Request::Ping => Route::Now(Response::ok(Outcome::Done, "pong")),
        Request::Status => Route::Status,
        Request::Start {
            session,
            cwd,
            transcript_path,
            watched_pid,
        } => {
            let key = session.key();
            let input = Input::Start(StartSession {
                key: key.clone(),
                cwd,
                transcript_path,
                watched_pid,
                run_by: None,
                via: None,
            });
            Route::Session {
                key,
                input,
                durable: true,
                observe_first: false,
                with_protection: true,
            }
        }
        Request::Stop {
            session,
            kind,
            end_reason,
            pending_work,
        } => {
            let key = session.key();
            let input = Input::Stop(StopSession {
                key: key.clone(),
                kind,
                end_reason,
                pending_work,
                stop_hook: None,
            });
            Route::Session {
                key,
                input,
                durable: true,
                observe_first: true,
                with_protection: false,
            }
        }
        Request::Activity { session, reason } => {
            let key = session.key();
            plain(key.clone(), Input::Activity { key, reason })
        }
        Request::SoftLock { session, reason } => {
            let key = session.key();
            plain(key.clone(), Input::SoftLock { key, reason })
        }
        Request::RemoveSession {
            all,
            session_id,
            provider,
            provider_name,
        } => match (all, session_id) {
            (true, _) => Route::Remove(RemoveSelector::All),
            (false, Some(session_id)) => Route::Remove(RemoveSelector::Matching {
                session_id,
                provider,
                provider_name,
            }),
            (false, None) => Route::Now(Response::error(
                "remove-session needs `all` or a `sessionId`",
            )),
        },
        Request::CleanupOrphans => Route::Gone(Gone::Orphans),
        Request::Pause { minutes } => Route::Hand {
            input: Input::Pause {
                until: minutes.map(|m| {
                    let wait = jiff::SignedDuration::from_mins(i64::from(m));
                    jiff::Timestamp::now()
                        .checked_add(wait)
                        .unwrap_or(jiff::Timestamp::MAX)
                }),
            },
            done: match minutes {
                Some(m) => format!("protection paused for {}", minutes_text(m)),
                None => "protection paused until you resume it".to_owned(),
            },
            unchanged: "protection was already paused so",
        },
        Request::Resume => Route::Hand {
            input: Input::Resume,
            done: "protection resumed".to_owned(),
            unchanged: "protection was not paused",
        },
        Request::CancelSuspend => Route::Hand {
            input: Input::CancelSuspend,
            done: "the pending suspend was canceled".to_owned(),
            unchanged: "no suspend was pending",
        },
        Request::RelayGone { place, held } => Route::Gone(Gone::Relay { place, held }),
        Request::HoldRelay { .. } => Route::Now(Response::error(
            "a relay's lease is held by the connection, above",
        )),
        Request::Hook { .. } | Request::Events { .. } | Request::Shutdown => Route::Now(
            Response::error("hook, events and shutdown requests are handled above"),
        ),
        Request::Settings { settings } => {
            let mut settings = *settings;
            settings.normalize(Os::current());
            match settings.validate(Os::current()) {
                Ok(()) => Route::Settings(Box::new(settings)),
                Err(errors) => {
                    let reasons: Vec<String> = errors.iter().map(ToString::to_string).collect();
                    let reasons = reasons.join("; ");
                    Route::Now(Response::error(format!("settings rejected: {reasons}")))
                }
            }
        }
    }
}

/// Which sessions lost their sign of life.
pub(super) enum Gone {
    /// Those whose watched process exited.
    Orphans,
    /// Relayed sessions of `place`, whose last relay ended; with no place, those of every place
    /// not in `held`.
    Relay {
        place: Option<String>,
        held: Vec<String>,
    },
}

impl Gone {
    pub(super) fn sessions<'a>(
        &self,
        sessions: impl Iterator<Item = &'a Session>,
    ) -> Vec<SessionKey> {
        let gone: Vec<&Session> = match self {
            Gone::Orphans => {
                let system = Roots::system();
                let orphaned = |pid| !lidguard_platform::process::is_alive(&system, pid);
                let orphans = sessions.filter(|s| s.watched_pid.is_some_and(orphaned));
                orphans.collect()
            }
            // A relayed session's id starts with its place.
            Gone::Relay { place, held } => sessions
                .filter(|s| s.via.is_some())
                .filter(|s| {
                    let of = s.key.session_id.split_once('/').map_or("", |(p, _)| p);
                    match place {
                        Some(place) => of == place,
                        None => !held.iter().any(|h| h == of),
                    }
                })
                .collect(),
        };
        gone.into_iter().map(|s| s.key.clone()).collect()
    }

    /// The answer's words: when none, the verb, the noun.
    pub(super) fn words(&self) -> (&'static str, &'static str, &'static str) {
        match self {
            Gone::Orphans => ("no orphaned session", "cleaned up", "orphaned session"),
            Gone::Relay { .. } => ("no relayed session", "ended", "session"),
        }
    }
}

/// The answer to the user's hand on protection: what it did, and the protection as it is now.
pub(super) fn hand_answer(
    reply: &Reply,
    done: &str,
    unchanged: &str,
    protection: ProtectionStatus,
) -> Response {
    let message = if *reply == Reply::Recorded {
        done
    } else {
        unchanged
    };
    let mut answer = Response::ok(super::lines::reply_outcome(reply).0, message);
    answer.protection = Some(Box::new(protection));
    answer
}

/// `90` → `1 h 30 min`, `2880` → `2 d`: a pause's length as people read it.
fn minutes_text(minutes: u32) -> String {
    let (days, hours, mins) = (minutes / 1440, minutes / 60 % 24, minutes % 60);
    let parts: Vec<String> = [(days, "d"), (hours, "h"), (mins, "min")]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, unit)| format!("{n} {unit}"))
        .collect();
    parts.join(" ")
}

#[cfg(test)]
mod minutes_tests {
    #[test]
    fn a_pause_reads_in_days_hours_and_minutes() {
        assert_eq!(super::minutes_text(2), "2 min");
        assert_eq!(super::minutes_text(90), "1 h 30 min");
        assert_eq!(super::minutes_text(2880), "2 d");
        assert_eq!(super::minutes_text(1441), "1 d 1 min");
    }
}
