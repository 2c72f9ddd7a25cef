//! Sending webhooks: one JSON POST each, 5 s at most, no retries; any 2xx is success. A
//! failure is logged and never holds up a stop, a suspend or the daemon's exit for longer
//! than that.

use std::time::Duration;

use lidguard_core::settings::Settings;
use lidguard_core::webhook::{EventType, Payload};

/// Per-request limit (README, Webhooks: 5 s, no retries).
pub(crate) const TIMEOUT: Duration = Duration::from_secs(5);

/// The URL the settings give for `event`, if any.
pub(crate) fn url_for(settings: &Settings, event: EventType) -> Option<String> {
    let url = match event {
        EventType::PreSuspend => &settings.pre_suspend_webhook_url,
        EventType::PostSessionEnd => &settings.post_session_end_webhook_url,
        EventType::StopFollowUp => &settings.closed_lid_stop_follow_up_webhook_url,
    };
    let url = url.trim();
    (!url.is_empty()).then(|| url.to_owned())
}

/// `auto` resolved from the environment's language, else the setting itself.
pub(crate) fn culture(setting: &str) -> String {
    culture_from(setting, lidguard_files::environment::text)
}

/// [`culture`] with the environment injected. The messages locale is the first non-empty of
/// `LC_ALL`, `LC_MESSAGES`, `LANG` (POSIX precedence); receivers written for the reference
/// expect a culture name, so `ko_KR.UTF-8` becomes `ko-KR` and `C`/`POSIX` (no language at
/// all) becomes `en`, as the reference does for the invariant culture.
fn culture_from(setting: &str, var: impl Fn(&str) -> Option<String>) -> String {
    if setting != "auto" {
        return setting.to_owned();
    }
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .filter_map(|name| var(name))
        .find(|value| !value.is_empty())
        .map_or_else(|| "en".to_owned(), |value| culture_name(&value))
}

/// A POSIX locale name (`language[_territory][.codeset][@modifier]`) as a culture name.
fn culture_name(locale: &str) -> String {
    let tag = locale.split(['.', '@']).next().unwrap_or_default();
    if tag.is_empty() || tag == "C" || tag == "POSIX" {
        return "en".to_owned();
    }
    match tag.split_once(['_', '-']) {
        Some((language, territory)) => format!(
            "{}-{}",
            language.to_ascii_lowercase(),
            territory.to_ascii_uppercase()
        ),
        None => tag.to_ascii_lowercase(),
    }
}

#[cfg(test)]
mod culture_tests {
    use super::*;

    #[test]
    fn posix_locales_become_culture_names() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).to_owned())
            }
        };
        assert_eq!(culture_from("auto", env(&[("LANG", "C.UTF-8")])), "en");
        assert_eq!(culture_from("auto", env(&[("LANG", "POSIX")])), "en");
        assert_eq!(
            culture_from("auto", env(&[("LANG", "ko_KR.UTF-8")])),
            "ko-KR"
        );
        assert_eq!(
            culture_from("auto", env(&[("LANG", "de_DE@euro")])),
            "de-DE"
        );
        assert_eq!(culture_from("auto", env(&[("LANG", "fr")])), "fr");
        assert_eq!(culture_from("auto", env(&[])), "en");
        // LC_ALL wins over LANG, even when it is C.
        assert_eq!(
            culture_from("auto", env(&[("LC_ALL", "C"), ("LANG", "ko_KR.UTF-8")])),
            "en"
        );
        assert_eq!(
            culture_from(
                "auto",
                env(&[("LC_ALL", ""), ("LC_MESSAGES", "ja_JP.UTF-8")])
            ),
            "ja-JP"
        );
        assert_eq!(culture_from("ko", env(&[("LANG", "C")])), "ko");
    }
}

/// The agent's last answer from its transcript's tail, when the hook gave none (reads at
/// most 1 MiB: call it off the actor).
pub(crate) fn fill_last_message(payload: &mut Payload) {
    if payload.last_assistant_message.is_some() {
        return;
    }
    if let Some(path) = payload.transcript_path.as_deref() {
        payload.last_assistant_message =
            lidguard_providers::last_message::last_assistant_message_in(std::path::Path::new(path));
    }
}

/// The signature headers' names.
pub(crate) const TIMESTAMP_HEADER: &str = "X-Lidguard-Timestamp";
/// `sha256=<hex of HMAC-SHA256(secret, "<timestamp>.<body>")>`.
pub(crate) const SIGNATURE_HEADER: &str = "X-Lidguard-Signature";

/// The signature of `body` sent at `timestamp` (Unix seconds) under `secret`.
pub(crate) fn signature(secret: &str, timestamp: &str, body: &[u8]) -> String {
    use hmac::{KeyInit, Mac};
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("sha256={}", hex(&mac.finalize().into_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A 2xx answer.
pub(crate) struct Answer {
    /// The HTTP status.
    pub(crate) status: u16,
    /// The body (the follow-up receiver answers JSON; the others may answer anything).
    pub(crate) body: String,
}

/// Why an HTTP exchange — a webhook, the follow-up receiver, ntfy — gave no answer to use.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The request's JSON could not be written.
    #[error("cannot encode: {0}")]
    Encode(serde_json::Error),
    /// No answer: the server is unreachable, refused, timed out.
    #[error(transparent)]
    Transport(#[from] ureq::Error),
    /// An answer that is not a 2xx.
    #[error("the {who} answered HTTP {status}")]
    Status {
        /// `receiver`, `ntfy server`.
        who: &'static str,
        /// The HTTP status.
        status: u16,
    },
    /// The answer's body could not be read.
    #[error("cannot read {what}: {source}")]
    Read {
        /// `the answer`, `the reply topic`.
        what: &'static str,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The answer is not what was asked for.
    #[error("{what}: {source}")]
    Decode {
        /// What is wrong with it (`the ntfy answer is not a message`).
        what: &'static str,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
}

/// POSTs `payload` to `url`, signed when `secret` is not empty; blocking (run it off the
/// async executor). Anything but a 2xx answer within [`TIMEOUT`] is an error.
pub(crate) fn post(url: &str, payload: &Payload, secret: &str) -> Result<Answer, HttpError> {
    let body = serde_json::to_vec(payload).map_err(HttpError::Encode)?;
    let request = agent()
        .post(url)
        .header("Content-Type", "application/json; charset=utf-8")
        .header("User-Agent", USER_AGENT);
    let request = match signed_headers(secret, &body) {
        Some((timestamp, signed)) => request
            .header(TIMESTAMP_HEADER, &timestamp)
            .header(SIGNATURE_HEADER, &signed),
        None => request,
    };
    answer(request.send(&body[..]))
}

/// GETs `url` (a follow-up's reply poll), signed over the empty body when `secret` is set.
pub(crate) fn get(url: &str, secret: &str) -> Result<Answer, HttpError> {
    let request = agent().get(url).header("User-Agent", USER_AGENT);
    let request = match signed_headers(secret, b"") {
        Some((timestamp, signed)) => request
            .header(TIMESTAMP_HEADER, &timestamp)
            .header(SIGNATURE_HEADER, &signed),
        None => request,
    };
    answer(request.call())
}

pub(crate) const USER_AGENT: &str = concat!("lidguard/", env!("CARGO_PKG_VERSION"));

/// The largest answer body read (a follow-up answer is a few hundred bytes).
const MAX_BODY: u64 = 1 << 20;

pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(TIMEOUT))
        .http_status_as_error(false)
        .build()
        .into()
}

/// The timestamp and signature headers' values, when a secret is set.
fn signed_headers(secret: &str, body: &[u8]) -> Option<(String, String)> {
    if secret.is_empty() {
        return None;
    }
    let timestamp = jiff::Timestamp::now().as_second().to_string();
    let signed = signature(secret, &timestamp, body);
    Some((timestamp, signed))
}

pub(crate) fn answer(
    sent: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
) -> Result<Answer, HttpError> {
    let mut response = sent?;
    let status = response.status().as_u16();
    if !(200..300).contains(&status) {
        return Err(HttpError::Status {
            who: "receiver",
            status,
        });
    }
    let body = response
        .body_mut()
        .with_config()
        .limit(MAX_BODY)
        .read_to_string()
        .map_err(|e| HttpError::Read {
            what: "the answer",
            source: e.into_io(),
        })?;
    Ok(Answer { status, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_hmac_sha256_over_timestamp_dot_body() {
        // The HMAC in use matches RFC 4231 test case 2, and the signature is that HMAC
        // over "<timestamp>.<body>".
        let sig = signature("Jefe", "1700000000", b"{}");
        assert!(sig.starts_with("sha256=") && sig.len() == 7 + 64);
        use hmac::{KeyInit, Mac};
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(b"Jefe").unwrap();
        mac.update(b"what do ya want for nothing?");
        let rfc = hex(&mac.finalize().into_bytes());
        assert_eq!(
            rfc,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(b"k").unwrap();
        mac.update(b"1700000000.{\"a\":1}");
        let want = hex(&mac.finalize().into_bytes());
        assert_eq!(
            signature("k", "1700000000", b"{\"a\":1}"),
            format!("sha256={want}")
        );
    }
}
