//! Carrying out the core's suspend requests: ask the OS (with emergency hibernation's fallback
//! to sleep), and record each attempt in the suspend history.

use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use lidguard_core::settings::SuspendMode;
use lidguard_core::suspend::SuspendRequest;
use lidguard_ipc::protocol::SuspendHistoryEntry;
use lidguard_platform::power::PowerControl;
use lidguard_store::Store;

/// The longest one OS suspend request may take to be accepted.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Asks the OS for `request.mode`, then for the fallback if that failed. One history entry
/// per attempt, in order.
pub(crate) async fn request(
    power: Result<&Arc<dyn PowerControl>, &String>,
    request: &SuspendRequest,
) -> Vec<SuspendHistoryEntry> {
    let mut attempts = vec![request.mode];
    attempts.extend(request.fallback);
    let mut entries = Vec::new();
    for mode in attempts {
        let result = match power {
            Ok(power) => {
                let hibernate = mode == SuspendMode::Hibernate;
                match tokio::time::timeout(REQUEST_TIMEOUT, power.suspend(hibernate)).await {
                    Ok(result) => result.map_err(|e| e.to_string()),
                    Err(_) => Err(format!(
                        "the request was not answered within {} s",
                        REQUEST_TIMEOUT.as_secs()
                    )),
                }
            }
            Err(reason) => Err(format!("no power backend: {reason}")),
        };
        let succeeded = result.is_ok();
        match &result {
            Ok(()) => tracing::info!(?mode, reason = request.reason.as_str(), "suspend requested"),
            Err(e) => {
                tracing::error!(?mode, reason = request.reason.as_str(), error = %e, "suspend failed")
            }
        }
        entries.push(SuspendHistoryEntry {
            recorded_at: Timestamp::now(),
            suspend_mode: mode.name().to_owned(),
            reason: request.reason,
            succeeded,
            error: result.err(),
            active_session_count: request.active_session_count,
            trigger_session_count: request.trigger_session_count,
            temperature_celsius: request.temperature.map(|t| t.celsius),
            threshold_celsius: request.temperature.map(|t| t.threshold_celsius),
            temperature_mode: request.temperature.map(|t| t.mode),
        });
        if succeeded {
            break;
        }
    }
    entries
}

/// Appends the entries to the history, keeping the newest `keep` (`None`: history off).
pub(crate) fn record(store: Option<&Store>, entries: &[SuspendHistoryEntry], keep: Option<u32>) {
    let Some(store) = store else { return };
    for entry in entries {
        let json = serde_json::to_string(entry).unwrap_or_default();
        if let Err(e) = store.append_suspend_history(entry.recorded_at, &json, keep) {
            tracing::warn!(error = %e, "cannot record the suspend history");
        }
    }
}
