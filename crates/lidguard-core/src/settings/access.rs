//! Each field's value read, set and checked, by the field it is in the field table.

use super::check::*;
use super::error::SettingsError;
use super::fields::{Field, FieldSpec, find_field};
use super::os::Os;
use super::{
    ClosedLidPermissionRequestDecision, RemoteDecisionFallback, Settings, SuspendMode,
    TemperatureMode,
};

impl Settings {
    pub(super) fn check_field(&self, spec: &FieldSpec) -> Result<(), SettingsError> {
        let optional = |v: Option<u32>| check_number(spec, v.map(i64::from));
        let required = |v: u32| check_number(spec, Some(i64::from(v)));
        let sound = |stored: &str| parse_sound(spec, stored).map(drop);
        match spec.field {
            Field::PowerRequestReason => check_reason(spec, &self.power_request.reason),
            Field::PostStopSuspendDelaySeconds => required(self.post_stop_suspend_delay_seconds),
            Field::SuspendHistoryEntryCount => optional(self.suspend_history_entry_count),
            Field::BatteryFloorPercent => optional(self.battery_floor_percent.map(u32::from)),
            Field::PostStopSuspendSound => sound(&self.post_stop_suspend_sound),
            Field::PostStopSuspendSoundVolumeOverridePercent => optional(
                self.post_stop_suspend_sound_volume_override_percent
                    .map(u32::from),
            ),
            Field::ClosedLidStopFollowUpSound => sound(&self.closed_lid_stop_follow_up_sound),
            Field::ClosedLidStopFollowUpSoundVolumeOverridePercent => optional(
                self.closed_lid_stop_follow_up_sound_volume_override_percent
                    .map(u32::from),
            ),
            Field::PreSuspendWebhookUrl => check_url(spec, &self.pre_suspend_webhook_url),
            Field::PostSessionEndWebhookUrl => check_url(spec, &self.post_session_end_webhook_url),
            Field::ClosedLidStopFollowUpWebhookUrl => {
                check_url(spec, &self.closed_lid_stop_follow_up_webhook_url)
            }
            Field::WebhookSecret => check_secret(spec, &self.webhook_secret),
            Field::NtfyToken => check_secret(spec, &self.ntfy_token),
            Field::NtfyUrl => check_ntfy_url(spec, &self.ntfy_url),
            Field::RemoteDecisionTimeoutSeconds => required(self.remote_decision_timeout_seconds),
            Field::ClosedLidStopFollowUpDelaySeconds => {
                required(self.closed_lid_stop_follow_up_delay_seconds)
            }
            Field::SessionTimeoutMinutes => optional(self.session_timeout_minutes),
            Field::ServerRuntimeCleanupDelayMinutes => {
                optional(self.server_runtime_cleanup_delay_minutes)
            }
            Field::EmergencyHibernationTemperatureCelsius => check_number(
                spec,
                Some(i64::from(self.emergency_hibernation_temperature_celsius)),
            ),
            Field::UserInterfaceCulture => {
                parse_culture(spec, &self.user_interface_culture).map(drop)
            }
            Field::PreventSystemSleep
            | Field::PreventDisplaySleep
            | Field::PreventAwayModeSleep
            | Field::ChangeLidAction
            | Field::SuspendMode
            | Field::SkipSuspendWhenLidCloseDoesNothing
            | Field::RepeatClosedLidStopFollowUp
            | Field::ClosedLidPermissionRequestDecision
            | Field::WatchParentProcess
            | Field::EmergencyHibernationOnHighTemperature
            | Field::EmergencyHibernationTemperatureMode
            | Field::NtfyAskBeforeSleep
            | Field::NtfyNeedsYou
            | Field::NtfyResumed
            | Field::RemoteDecisionFallback => Ok(()),
        }
    }
    /// Sets one field from CLI text. `flag` is the flag or an alias, with or without `--`.
    ///
    /// Booleans take `true/false`, `yes/no`, `on/off` or `1/0`; fields that can be off take
    /// `off`; choices and sound names are case-insensitive; sounds and URLs take `off` (or an
    /// empty value) to clear them; an empty power-request reason restores the default. Values
    /// are range-checked, never clamped: the emergency temperature accepts only 70..=110 here,
    /// although a file value outside that range is clamped on load.
    ///
    /// On error nothing changes.
    pub fn set_field(&mut self, flag: &str, raw: &str, os: Os) -> Result<(), SettingsError> {
        let spec = find_field(flag).ok_or_else(|| SettingsError::unknown(flag))?;
        if !spec.applies_to(os) {
            return Err(SettingsError::not_on(spec, os));
        }
        let boolean = || parse_bool_for(spec, raw);
        let volume = || -> Result<Option<u8>, SettingsError> {
            parse_number(spec, raw)?
                .map(|v| u8::try_from(v).map_err(|_| SettingsError::invalid(spec, raw)))
                .transpose()
        };
        match spec.field {
            Field::PreventSystemSleep => self.power_request.prevent_system_sleep = boolean()?,
            Field::PreventDisplaySleep => self.power_request.prevent_display_sleep = boolean()?,
            Field::PreventAwayModeSleep => {
                self.power_request.prevent_away_mode_sleep = Some(boolean()?);
            }
            Field::PowerRequestReason => self.power_request.reason = parse_reason(spec, raw)?,
            Field::ChangeLidAction => self.change_lid_action = boolean()?,
            Field::SuspendMode => {
                self.suspend_mode = parse_choice(spec, raw, SuspendMode::from_name)?;
            }
            Field::PostStopSuspendDelaySeconds => {
                self.post_stop_suspend_delay_seconds = parse_required_number(spec, raw)?;
            }
            Field::SkipSuspendWhenLidCloseDoesNothing => {
                self.skip_suspend_when_lid_close_does_nothing = Some(boolean()?);
            }
            Field::SuspendHistoryEntryCount => {
                self.suspend_history_entry_count = parse_number(spec, raw)?;
            }
            Field::BatteryFloorPercent => {
                let percent: Option<u32> = parse_number(spec, raw)?;
                self.battery_floor_percent = percent.and_then(|p| u8::try_from(p).ok());
            }
            Field::PostStopSuspendSound => self.post_stop_suspend_sound = parse_sound(spec, raw)?,
            Field::PostStopSuspendSoundVolumeOverridePercent => {
                self.post_stop_suspend_sound_volume_override_percent = volume()?;
            }
            Field::ClosedLidStopFollowUpSound => {
                self.closed_lid_stop_follow_up_sound = parse_sound(spec, raw)?;
            }
            Field::ClosedLidStopFollowUpSoundVolumeOverridePercent => {
                self.closed_lid_stop_follow_up_sound_volume_override_percent = volume()?;
            }
            Field::PreSuspendWebhookUrl => self.pre_suspend_webhook_url = parse_url(spec, raw)?,
            Field::PostSessionEndWebhookUrl => {
                self.post_session_end_webhook_url = parse_url(spec, raw)?;
            }
            Field::ClosedLidStopFollowUpWebhookUrl => {
                self.closed_lid_stop_follow_up_webhook_url = parse_url(spec, raw)?;
            }
            Field::WebhookSecret => self.webhook_secret = parse_secret(spec, raw)?,
            Field::NtfyToken => self.ntfy_token = parse_secret(spec, raw)?,
            Field::NtfyUrl => {
                let url = parse_url(spec, raw)?;
                check_ntfy_url(spec, &url)?;
                self.ntfy_url = url;
            }
            Field::NtfyAskBeforeSleep => self.ntfy_ask_before_sleep = boolean()?,
            Field::NtfyNeedsYou => self.ntfy_needs_you = boolean()?,
            Field::NtfyResumed => self.ntfy_resumed = boolean()?,
            Field::RemoteDecisionTimeoutSeconds => {
                self.remote_decision_timeout_seconds = parse_required_number(spec, raw)?;
            }
            Field::RemoteDecisionFallback => {
                self.remote_decision_fallback =
                    parse_choice(spec, raw, RemoteDecisionFallback::from_name)?;
            }
            Field::ClosedLidStopFollowUpDelaySeconds => {
                self.closed_lid_stop_follow_up_delay_seconds = parse_required_number(spec, raw)?;
            }
            Field::RepeatClosedLidStopFollowUp => {
                self.repeat_closed_lid_stop_follow_up = boolean()?
            }
            Field::ClosedLidPermissionRequestDecision => {
                self.closed_lid_permission_request_decision =
                    parse_choice(spec, raw, ClosedLidPermissionRequestDecision::from_name)?;
            }
            Field::WatchParentProcess => self.watch_parent_process = boolean()?,
            Field::SessionTimeoutMinutes => self.session_timeout_minutes = parse_number(spec, raw)?,
            Field::ServerRuntimeCleanupDelayMinutes => {
                self.server_runtime_cleanup_delay_minutes = parse_number(spec, raw)?;
            }
            Field::EmergencyHibernationOnHighTemperature => {
                self.emergency_hibernation_on_high_temperature = boolean()?;
            }
            Field::EmergencyHibernationTemperatureMode => {
                self.emergency_hibernation_temperature_mode =
                    parse_choice(spec, raw, TemperatureMode::from_name)?;
            }
            Field::EmergencyHibernationTemperatureCelsius => {
                let celsius = parse_required_number(spec, raw)?;
                self.emergency_hibernation_temperature_celsius =
                    i32::try_from(celsius).map_err(|_| SettingsError::invalid(spec, raw))?;
            }
            Field::UserInterfaceCulture => self.user_interface_culture = parse_culture(spec, raw)?,
        }
        Ok(())
    }
    /// The current value of a field as the user would type it, or `None` for an unknown flag or
    /// a platform-only field that is not set (another OS). `flag` is the flag or an alias, with
    /// or without `--`.
    ///
    /// Booleans are `true`/`false`, choices lowercase (`sleep`), numbers plain, and unset
    /// numbers, sounds and URLs `off`. Feeding the result back to [`Settings::set_field`]
    /// leaves the settings unchanged.
    pub fn get_field(&self, flag: &str) -> Option<String> {
        let spec = find_field(flag)?;
        Some(match spec.field {
            Field::PreventSystemSleep => self.power_request.prevent_system_sleep.to_string(),
            Field::PreventDisplaySleep => self.power_request.prevent_display_sleep.to_string(),
            Field::PreventAwayModeSleep => self.power_request.prevent_away_mode_sleep?.to_string(),
            Field::PowerRequestReason => self.power_request.reason.clone(),
            Field::ChangeLidAction => self.change_lid_action.to_string(),
            Field::SuspendMode => self.suspend_mode.as_str().to_owned(),
            Field::PostStopSuspendDelaySeconds => self.post_stop_suspend_delay_seconds.to_string(),
            Field::SkipSuspendWhenLidCloseDoesNothing => {
                self.skip_suspend_when_lid_close_does_nothing?.to_string()
            }
            Field::SuspendHistoryEntryCount => number_text(self.suspend_history_entry_count),
            Field::BatteryFloorPercent => number_text(self.battery_floor_percent.map(u32::from)),
            Field::PostStopSuspendSound => off_if_empty(&self.post_stop_suspend_sound),
            Field::PostStopSuspendSoundVolumeOverridePercent => {
                number_text(self.post_stop_suspend_sound_volume_override_percent)
            }
            Field::ClosedLidStopFollowUpSound => {
                off_if_empty(&self.closed_lid_stop_follow_up_sound)
            }
            Field::ClosedLidStopFollowUpSoundVolumeOverridePercent => {
                number_text(self.closed_lid_stop_follow_up_sound_volume_override_percent)
            }
            Field::PreSuspendWebhookUrl => off_if_empty(&self.pre_suspend_webhook_url),
            Field::PostSessionEndWebhookUrl => off_if_empty(&self.post_session_end_webhook_url),
            Field::ClosedLidStopFollowUpWebhookUrl => {
                off_if_empty(&self.closed_lid_stop_follow_up_webhook_url)
            }
            Field::WebhookSecret => off_if_empty(&self.webhook_secret),
            Field::NtfyUrl => off_if_empty(&self.ntfy_url),
            Field::NtfyToken => off_if_empty(&self.ntfy_token),
            Field::NtfyAskBeforeSleep => self.ntfy_ask_before_sleep.to_string(),
            Field::NtfyNeedsYou => self.ntfy_needs_you.to_string(),
            Field::NtfyResumed => self.ntfy_resumed.to_string(),
            Field::RemoteDecisionTimeoutSeconds => self.remote_decision_timeout_seconds.to_string(),
            Field::RemoteDecisionFallback => self.remote_decision_fallback.as_str().to_owned(),
            Field::ClosedLidStopFollowUpDelaySeconds => {
                self.closed_lid_stop_follow_up_delay_seconds.to_string()
            }
            Field::RepeatClosedLidStopFollowUp => self.repeat_closed_lid_stop_follow_up.to_string(),
            Field::ClosedLidPermissionRequestDecision => self
                .closed_lid_permission_request_decision
                .as_str()
                .to_owned(),
            Field::WatchParentProcess => self.watch_parent_process.to_string(),
            Field::SessionTimeoutMinutes => number_text(self.session_timeout_minutes),
            Field::ServerRuntimeCleanupDelayMinutes => {
                number_text(self.server_runtime_cleanup_delay_minutes)
            }
            Field::EmergencyHibernationOnHighTemperature => {
                self.emergency_hibernation_on_high_temperature.to_string()
            }
            Field::EmergencyHibernationTemperatureMode => self
                .emergency_hibernation_temperature_mode
                .as_str()
                .to_owned(),
            Field::EmergencyHibernationTemperatureCelsius => {
                self.emergency_hibernation_temperature_celsius.to_string()
            }
            Field::UserInterfaceCulture => self.user_interface_culture.clone(),
        })
    }
}
