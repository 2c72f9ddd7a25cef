//! Sending webhooks: one JSON POST each, 5 s at most, no retries; any 2xx is success. A
//! failure is logged and never holds up a stop, a suspend or the daemon's exit for longer
//! than that.

use std::time::Duration;

use lidguard_core::settings::Settings;
use lidguard_core::webhook::{EventType, Payload};

/// Per-request limit (reference §4.1).
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

/// `auto` resolved from the environment's language (`LANG=ko_KR.UTF-8` → `ko-KR`), else the
/// setting itself.
pub(crate) fn culture(setting: &str) -> String {
    if setting != "auto" {
        return setting.to_owned();
    }
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .find(|v| !v.is_empty() && v != "C" && v != "POSIX")
        .map(|v| {
            let tag = v.split(['.', '@']).next().unwrap_or("").replace('_', "-");
            if tag.is_empty() { "en".to_owned() } else { tag }
        })
        .unwrap_or_else(|| "en".to_owned())
}

/// POSTs `payload` to `url`; blocking (run it off the async executor).
pub(crate) fn post(url: &str, payload: &Payload) -> Result<u16, String> {
    let body = serde_json::to_vec(payload).map_err(|e| format!("cannot encode: {e}"))?;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(TIMEOUT))
        .http_status_as_error(false)
        .build()
        .into();
    let response = agent
        .post(url)
        .header("Content-Type", "application/json; charset=utf-8")
        .header(
            "User-Agent",
            concat!("lidguard/", env!("CARGO_PKG_VERSION")),
        )
        .send(&body[..])
        .map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    if (200..300).contains(&status) {
        Ok(status)
    } else {
        Err(format!("the receiver answered HTTP {status}"))
    }
}
