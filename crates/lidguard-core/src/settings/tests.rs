//! Tests for the settings model.

use proptest::prelude::*;

use super::*;

const OSES: [Os; 3] = [Os::Linux, Os::MacOs, Os::Windows];

fn spec(flag: &str) -> &'static FieldSpec {
    find_field(flag).unwrap_or_else(|| panic!("no field {flag}"))
}

/// A valid, non-default CLI value for each field, and how `get_field` shows it afterwards.
fn sample(spec: &FieldSpec, defaults: &Settings) -> (&'static str, &'static str) {
    match spec.flag {
        "power-request-reason" => ("  Building the world  ", "Building the world"),
        "webhook-secret" => ("  s3cret key  ", "s3cret key"),
        "suspend-mode" => ("HIBERNATE", "hibernate"),
        "closed-lid-permission-request-decision" => ("Ask", "ask"),
        "emergency-hibernation-temperature-mode" => ("high", "high"),
        "post-stop-suspend-sound" => ("exclamation", "Exclamation"),
        "closed-lid-stop-follow-up-sound" => {
            ("/usr/share/sounds/ding.WAV", "/usr/share/sounds/ding.WAV")
        }
        "pre-suspend-webhook-url" | "post-session-end-webhook-url" => (
            " https://example.com/hook?x=1 ",
            "https://example.com/hook?x=1",
        ),
        "closed-lid-stop-follow-up-webhook-url" => {
            ("http://127.0.0.1:8080/f", "http://127.0.0.1:8080/f")
        }
        "user-interface-culture" => ("zh-hant-tw", "zh-Hant-TW"),
        "emergency-hibernation-temperature-celsius" => ("70", "70"),
        "post-stop-suspend-sound-volume-override-percent" => ("1", "1"),
        "closed-lid-stop-follow-up-sound-volume-override-percent" => ("100", "100"),
        "suspend-history-count" => ("off", "off"),
        "battery-floor-percent" => ("25", "25"),
        "session-timeout-minutes" => ("10080", "10080"),
        "server-runtime-cleanup-delay-minutes" => ("0", "0"),
        "post-stop-suspend-delay-seconds" => ("86400", "86400"),
        "closed-lid-stop-follow-up-delay-seconds" => ("0", "0"),
        "ntfy-url" => (
            " https://ntfy.example/base/lidguard-x_1 ",
            "https://ntfy.example/base/lidguard-x_1",
        ),
        "ntfy-token" => (" tk_abc ", "tk_abc"),
        "remote-decision-timeout-seconds" => ("540", "540"),
        "remote-decision-fallback" => ("ASK", "ask"),
        _ => match spec.kind {
            FieldKind::Bool if defaults.get_field(spec.flag).as_deref() == Some("true") => {
                ("No", "false")
            }
            FieldKind::Bool => ("Yes", "true"),
            other => panic!("no sample for {} ({other:?})", spec.flag),
        },
    }
}

fn set_err(flag: &str, raw: &str, os: Os) -> SettingsError {
    let mut settings = Settings::defaults_for(os);
    let before = settings.clone();
    let err = settings
        .set_field(flag, raw, os)
        .expect_err(&format!("{flag} = {raw:?} should fail"));
    assert_eq!(settings, before, "a failed set must not change anything");
    err
}

fn set_ok(flag: &str, raw: &str, os: Os) -> Settings {
    let mut settings = Settings::defaults_for(os);
    settings
        .set_field(flag, raw, os)
        .unwrap_or_else(|e| panic!("{flag} = {raw:?}: {e}"));
    settings
        .validate(os)
        .unwrap_or_else(|e| panic!("{flag} = {raw:?} left invalid: {e:?}"));
    settings
}

// ----- the field table ------------------------------------------------------------------------

#[test]
fn field_table_is_consistent() {
    let mut names = std::collections::HashSet::new();
    let mut keys = std::collections::HashSet::new();
    for spec in FIELDS {
        assert!(keys.insert(spec.json_key), "{} listed twice", spec.json_key);
        for name in std::iter::once(&spec.flag).chain(spec.aliases) {
            assert!(names.insert(*name), "flag {name} used twice");
            assert!(!name.starts_with('-') && !name.is_empty());
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            );
            assert_eq!(find_field(name).map(|s| s.json_key), Some(spec.json_key));
            assert_eq!(
                find_field(&format!("--{name}")).map(|s| s.json_key),
                Some(spec.json_key)
            );
        }
        assert!(spec.value_hint.starts_with('<') && spec.value_hint.ends_with('>'));
        assert!(!spec.help.is_empty() && !spec.help.contains('\n'));
        assert!(!spec.platforms.is_empty());
    }
    assert_eq!(FIELDS.len(), 41);
    // Grouped: each category's fields are contiguous and categories appear in display order.
    let mut seen: Vec<Category> = FIELDS.iter().map(|s| s.category).collect();
    seen.dedup();
    let mut sorted = seen.clone();
    sorted.sort();
    assert_eq!(seen, sorted);
    assert_eq!(seen, Category::ALL.to_vec());
}

#[test]
fn reference_flag_names_and_aliases_exist() {
    for flag in [
        "prevent-system-sleep",
        "change-lid-action",
        "suspend-mode",
        "post-stop-suspend-delay-seconds",
        "post-stop-suspend-sound",
        "post-stop-suspend-sound-volume-override-percent",
        "closed-lid-stop-follow-up-sound",
        "closed-lid-stop-follow-up-sound-volume-override-percent",
        "suspend-history-count",
        "suspend-history-entry-count",
        "pre-suspend-webhook-url",
        "post-session-end-webhook-url",
        "closed-lid-stop-follow-up-webhook-url",
        "closed-lid-stop-follow-up-delay-seconds",
        "repeat-closed-lid-stop-follow-up",
        "closed-lid-permission-request-decision",
        "watch-parent-process",
        "session-timeout-minutes",
        "server-runtime-cleanup-delay-minutes",
        "emergency-hibernation-on-high-temperature",
        "emergency-hibernation-temperature-mode",
        "emergency-hibernation-temperature-celsius",
        "user-interface-culture",
        "prevent-display-sleep",
        "power-request-reason",
        "prevent-away-mode-sleep",
        "skip-suspend-when-lid-close-does-nothing",
        "override",
    ] {
        assert!(find_field(flag).is_some(), "{flag}");
    }
    assert_eq!(
        spec("suspend-history-entry-count").flag,
        "suspend-history-count"
    );
    assert_eq!(spec("prevent-away-mode-sleep").platforms, &[Os::Windows]);
    assert_eq!(
        spec("skip-suspend-when-lid-close-does-nothing").platforms,
        &[Os::Windows]
    );
    assert_eq!(fields_for(Os::Linux).count(), 39);
    assert_eq!(fields_for(Os::Windows).count(), 41);
    // Every OS reads its battery now (macOS: IOKit's power sources).
    assert_eq!(
        spec("battery-floor-percent").platforms,
        &[Os::Linux, Os::MacOs, Os::Windows]
    );
}

#[test]
fn choice_lists_match_the_enums() {
    fn choices(flag: &str) -> Vec<&'static str> {
        match spec(flag).kind {
            FieldKind::Choice(list) => list.to_vec(),
            other => panic!("{flag} is {other:?}"),
        }
    }
    let names = |all: &[&'static str]| all.to_vec();
    assert_eq!(
        choices("suspend-mode"),
        names(
            &SuspendMode::ALL
                .iter()
                .map(|v| v.as_str())
                .collect::<Vec<_>>()
        )
    );
    assert_eq!(
        choices("closed-lid-permission-request-decision"),
        names(
            &ClosedLidPermissionRequestDecision::ALL
                .iter()
                .map(|v| v.as_str())
                .collect::<Vec<_>>()
        )
    );
    assert_eq!(
        choices("emergency-hibernation-temperature-mode"),
        names(
            &TemperatureMode::ALL
                .iter()
                .map(|v| v.as_str())
                .collect::<Vec<_>>()
        )
    );
    // The file spelling is the variant name; both spellings read back.
    for mode in TemperatureMode::ALL {
        let json = serde_json::to_string(mode).unwrap();
        assert_eq!(json.to_lowercase(), format!("\"{}\"", mode.as_str()));
        assert_eq!(
            serde_json::from_str::<TemperatureMode>(&json).unwrap(),
            *mode
        );
        assert_eq!(
            TemperatureMode::from_name(&mode.as_str().to_uppercase()),
            Some(*mode)
        );
    }
}

#[test]
fn json_keys_point_at_serialized_values() {
    let json: serde_json::Value =
        serde_json::from_str(&Settings::defaults_for(Os::Windows).to_json_pretty()).unwrap();
    let mut leaves = 0;
    for spec in FIELDS {
        let pointer = format!("/{}", spec.json_key.replace('.', "/"));
        assert!(
            json.pointer(&pointer).is_some(),
            "{} missing from the JSON",
            spec.json_key
        );
        leaves += 1;
    }
    // Every serialized leaf is settable.
    let count = |v: &serde_json::Value| -> usize {
        v.as_object()
            .unwrap()
            .values()
            .map(|x| x.as_object().map_or(1, |o| o.len()))
            .sum()
    };
    assert_eq!(count(&json), leaves);
}

#[test]
fn unknown_flags_are_rejected_with_a_suggestion() {
    let mut s = Settings::default();
    assert_eq!(
        s.set_field("--suspend-mood", "sleep", Os::Linux),
        Err(SettingsError::UnknownField {
            name: "--suspend-mood".into(),
            suggestion: Some("suspend-mode")
        })
    );
    let err = s
        .set_field("powerRequestReason", "x", Os::Linux)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("did you mean `--power-request-reason`"),
        "{err}"
    );
    let err = s.set_field("zzzzzzzz", "x", Os::Linux).unwrap_err();
    assert_eq!(
        err,
        SettingsError::UnknownField {
            name: "zzzzzzzz".into(),
            suggestion: None
        }
    );
    assert_eq!(s.get_field("nope"), None);
}

// ----- set/get round trips ---------------------------------------------------------------------

#[test]
fn every_field_round_trips_through_set_and_get() {
    for os in OSES {
        for spec in fields_for(os) {
            let mut settings = Settings::defaults_for(os);
            let (raw, shown) = sample(spec, &settings);
            let default_text = settings.get_field(spec.flag).unwrap();
            settings
                .set_field(spec.flag, raw, os)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                settings.get_field(spec.flag).as_deref(),
                Some(shown),
                "{}",
                spec.flag
            );
            assert_ne!(
                shown, default_text,
                "{}: sample should differ from the default",
                spec.flag
            );
            settings.validate(os).unwrap();
            // Each entry's accessors reach its own field and no other.
            assert_eq!(
                settings
                    .changed_fields(&Settings::defaults_for(os), os)
                    .iter()
                    .map(|s| s.flag)
                    .collect::<Vec<_>>(),
                [spec.flag]
            );
            // The shown text sets the same value again, and so does the default text.
            let mut again = settings.clone();
            again
                .set_field(&format!("--{}", spec.flag), shown, os)
                .unwrap();
            assert_eq!(again, settings);
            again.set_field(spec.flag, &default_text, os).unwrap();
            assert_eq!(again, Settings::defaults_for(os), "{}", spec.flag);
            // And the file round trip keeps it.
            assert_eq!(
                Settings::from_json(&settings.to_json_pretty(), os).unwrap(),
                settings
            );
        }
    }
}

#[test]
fn aliases_set_the_same_field() {
    let a = set_ok("suspend-history-entry-count", "3", Os::Linux);
    assert_eq!(a.suspend_history_entry_count, Some(3));
    assert_eq!(a.get_field("suspend-history-count").as_deref(), Some("3"));
    let b = set_ok("--override", "55", Os::Linux);
    assert_eq!(
        b.closed_lid_stop_follow_up_sound_volume_override_percent,
        Some(55)
    );
}

#[test]
fn get_field_renders_defaults_as_typed() {
    let s = Settings::defaults_for(Os::Linux);
    let get = |f: &str| s.get_field(f).unwrap();
    assert_eq!(get("prevent-system-sleep"), "true");
    assert_eq!(get("suspend-mode"), "sleep");
    assert_eq!(get("post-stop-suspend-sound"), "off");
    assert_eq!(
        get("post-stop-suspend-sound-volume-override-percent"),
        "off"
    );
    assert_eq!(get("pre-suspend-webhook-url"), "off");
    assert_eq!(get("emergency-hibernation-temperature-mode"), "average");
    assert_eq!(get("closed-lid-permission-request-decision"), "deny");
    assert_eq!(get("user-interface-culture"), "auto");
    assert_eq!(s.get_field("prevent-away-mode-sleep"), None);
    assert_eq!(
        Settings::defaults_for(Os::Windows)
            .get_field("prevent-away-mode-sleep")
            .as_deref(),
        Some("true")
    );
}

#[test]
fn rows_follow_the_table_for_the_os() {
    let linux = Settings::defaults_for(Os::Linux).rows(Os::Linux);
    assert_eq!(linux.len(), 39);
    assert!(linux.iter().all(|r| r.flag != "prevent-away-mode-sleep"));
    assert_eq!(linux[0].category, Category::Power);
    assert_eq!(linux[0].flag, "prevent-system-sleep");
    assert_eq!(linux[0].json_key, "powerRequest.preventSystemSleep");
    assert_eq!(linux[0].value, "true");
    assert_eq!(linux.last().unwrap().category, Category::Interface);
    let windows = Settings::defaults_for(Os::Windows).rows(Os::Windows);
    assert_eq!(windows.len(), 41);
    let row = windows
        .iter()
        .find(|r| r.flag == "skip-suspend-when-lid-close-does-nothing")
        .unwrap();
    assert_eq!(
        (row.category, row.value.as_str()),
        (Category::Suspend, "true")
    );
    assert_eq!(Category::AskBeforeSleep.to_string(), "Ask before sleep");
}

// ----- value parsing and validation ------------------------------------------------------------

#[test]
fn booleans_accept_every_spelling() {
    for (raw, want) in [
        ("true", true),
        ("TRUE", true),
        ("yes", true),
        ("Yes", true),
        ("on", true),
        ("ON", true),
        ("1", true),
        (" true ", true),
        ("false", false),
        ("False", false),
        ("no", false),
        ("NO", false),
        ("off", false),
        ("Off", false),
        ("0", false),
    ] {
        let s = set_ok("watch-parent-process", raw, Os::Linux);
        assert_eq!(s.watch_parent_process, want, "{raw}");
        let s = set_ok("prevent-display-sleep", raw, Os::Linux);
        assert_eq!(s.power_request.prevent_display_sleep, want, "{raw}");
    }
    for raw in ["", "y", "n", "2", "tru", "enabled", "-1", "true false"] {
        let err = set_err("watch-parent-process", raw, Os::Linux);
        let text = err.to_string();
        assert!(text.contains("--watch-parent-process"), "{text}");
        assert!(text.contains("watchParentProcess"), "{text}");
        assert!(text.contains("true or false"), "{text}");
    }
}

#[test]
fn volumes_are_rejected_not_clamped() {
    for flag in [
        "post-stop-suspend-sound-volume-override-percent",
        "closed-lid-stop-follow-up-sound-volume-override-percent",
    ] {
        for raw in ["0", "101", "-1", "255", "256", "1000", "50.5", "abc", ""] {
            let text = set_err(flag, raw, Os::Linux).to_string();
            assert!(text.contains(&format!("--{flag}")), "{text}");
            assert!(text.contains("from 1 to 100"), "{text}");
        }
        assert_eq!(
            set_ok(flag, "1", Os::Linux).get_field(flag).as_deref(),
            Some("1")
        );
        assert_eq!(
            set_ok(flag, "100", Os::Linux).get_field(flag).as_deref(),
            Some("100")
        );
        assert_eq!(
            set_ok(flag, "OFF", Os::Linux).get_field(flag).as_deref(),
            Some("off")
        );
    }
    let mut s = Settings::defaults_for(Os::Linux);
    s.post_stop_suspend_sound_volume_override_percent = Some(0);
    s.closed_lid_stop_follow_up_sound_volume_override_percent = Some(101);
    let problems = s.validate(Os::Linux).unwrap_err();
    assert_eq!(problems.len(), 2);
    assert!(
        problems[0]
            .to_string()
            .contains("postStopSuspendSoundVolumeOverridePercent")
    );
    assert!(
        problems[1]
            .to_string()
            .contains("closedLidStopFollowUpSoundVolumeOverridePercent")
    );
}

#[test]
fn off_is_accepted_only_by_nullable_numbers() {
    for flag in [
        "suspend-history-count",
        "session-timeout-minutes",
        "server-runtime-cleanup-delay-minutes",
    ] {
        assert_eq!(
            set_ok(flag, "off", Os::Linux).get_field(flag).as_deref(),
            Some("off")
        );
    }
    for flag in [
        "post-stop-suspend-delay-seconds",
        "closed-lid-stop-follow-up-delay-seconds",
        "emergency-hibernation-temperature-celsius",
    ] {
        let text = set_err(flag, "off", Os::Linux).to_string();
        assert!(text.contains(flag) && !text.contains("or off"), "{text}");
    }
}

#[test]
fn number_ranges() {
    let cases: &[(&str, &[&str], &[&str], &str)] = &[
        (
            "suspend-history-count",
            &["1", "10", "4294967295"],
            &["0", "-3", "4294967296"],
            "at least 1",
        ),
        (
            "session-timeout-minutes",
            &["1", "10080"],
            &["0", "10081"],
            "from 1 to 10080 minutes (7 days)",
        ),
        (
            "server-runtime-cleanup-delay-minutes",
            &["0", "10080"],
            &["-1", "10081"],
            "from 0 to 10080 minutes (7 days)",
        ),
        (
            "post-stop-suspend-delay-seconds",
            &["0", "86400"],
            &["-1", "86401"],
            "from 0 to 86400 seconds (24 hours)",
        ),
        (
            "closed-lid-stop-follow-up-delay-seconds",
            &["0", "5", "86400"],
            &["-1", "86401"],
            "from 0 to 86400 seconds",
        ),
        (
            "emergency-hibernation-temperature-celsius",
            &["70", "93", "110"],
            &["69", "111", "0", "-80"],
            "from 70 to 110",
        ),
    ];
    for (flag, good, bad, range) in cases {
        for raw in *good {
            assert_eq!(
                set_ok(flag, raw, Os::Linux).get_field(flag).as_deref(),
                Some(*raw)
            );
        }
        for raw in *bad {
            let text = set_err(flag, raw, Os::Linux).to_string();
            assert!(text.contains(&format!("--{flag}")), "{text}");
            assert!(text.contains(range), "{text} should mention {range}");
        }
    }
    // Validation of stored values uses the same ranges.
    let mut s = Settings::defaults_for(Os::Linux);
    s.session_timeout_minutes = Some(0);
    s.server_runtime_cleanup_delay_minutes = Some(10081);
    s.suspend_history_entry_count = Some(0);
    s.post_stop_suspend_delay_seconds = 86401;
    s.closed_lid_stop_follow_up_delay_seconds = 86401;
    s.emergency_hibernation_temperature_celsius = 150;
    let problems = s.validate(Os::Linux).unwrap_err();
    let flags: Vec<&str> = problems
        .iter()
        .map(|p| match p {
            SettingsError::InvalidValue { flag, .. } => *flag,
            other => panic!("{other}"),
        })
        .collect();
    assert_eq!(
        flags,
        [
            "post-stop-suspend-delay-seconds",
            "suspend-history-count",
            "closed-lid-stop-follow-up-delay-seconds",
            "session-timeout-minutes",
            "server-runtime-cleanup-delay-minutes",
            "emergency-hibernation-temperature-celsius"
        ]
    );
}

#[test]
fn the_emergency_temperature_clamps_when_loaded() {
    let s = Settings::from_json(
        r#"{"emergencyHibernationTemperatureCelsius": 150}"#,
        Os::Linux,
    )
    .unwrap();
    assert_eq!(s.emergency_hibernation_temperature_celsius, 110);
    let s = Settings::from_json(
        r#"{"emergencyHibernationTemperatureCelsius": -5}"#,
        Os::Linux,
    )
    .unwrap();
    assert_eq!(s.emergency_hibernation_temperature_celsius, 70);
    let text = set_err(
        "emergency-hibernation-temperature-celsius",
        "150",
        Os::Linux,
    )
    .to_string();
    assert!(text.contains("from 70 to 110"), "{text}");
}

#[test]
fn sounds() {
    let flag = "post-stop-suspend-sound";
    for (raw, stored) in [
        ("off", ""),
        ("OFF", ""),
        ("", ""),
        ("  ", ""),
        ("asterisk", "Asterisk"),
        ("BEEP", "Beep"),
        (" Exclamation ", "Exclamation"),
        ("hand", "Hand"),
        ("question", "Question"),
        ("/tmp/a.wav", "/tmp/a.wav"),
        ("C:\\Sounds\\Ding.WaV", "C:\\Sounds\\Ding.WaV"),
        ("beep.wav", "beep.wav"),
        ("relative dir/é.wav", "relative dir/é.wav"),
    ] {
        let s = set_ok(flag, raw, Os::Linux);
        assert_eq!(s.post_stop_suspend_sound, stored, "{raw:?}");
    }
    for raw in [
        "ding",
        "/tmp/a.mp3",
        ".wav",
        "a\nb.wav",
        "bell",
        "/tmp/a.wav.bak",
    ] {
        let text = set_err(flag, raw, Os::Linux).to_string();
        assert!(
            text.contains("--post-stop-suspend-sound") && text.contains(".wav"),
            "{text}"
        );
    }
    assert_eq!(SoundSetting::parse("  off "), Some(SoundSetting::Off));
    assert_eq!(
        SoundSetting::parse("hAnD"),
        Some(SoundSetting::System(SystemSound::Hand))
    );
    assert_eq!(
        SoundSetting::parse("x.wav"),
        Some(SoundSetting::WavFile("x.wav".into()))
    );
    assert_eq!(SoundSetting::parse("x.ogg"), None);
    assert_eq!(SoundSetting::Off.to_string(), "off");
    assert_eq!(SoundSetting::System(SystemSound::Beep).to_string(), "Beep");
}

#[test]
fn webhook_urls() {
    let flag = "pre-suspend-webhook-url";
    for raw in [
        "https://example.com",
        "http://localhost:5000/hook",
        "HTTPS://Example.COM/a b",
        "http://[::1]:80/x",
        "http://192.168.1.2/",
        " https://h/p?q=1#f ",
    ] {
        assert_eq!(
            set_ok(flag, raw, Os::Linux).pre_suspend_webhook_url,
            raw.trim(),
            "{raw}"
        );
    }
    for raw in ["off", "OFF", "", "  "] {
        assert_eq!(set_ok(flag, raw, Os::Linux).pre_suspend_webhook_url, "");
    }
    for raw in [
        "example.com",
        "ftp://example.com",
        "/hook",
        "http://",
        "https:///path",
        "http:example.com",
        "mailto:a@b.c",
        "file:///etc/passwd",
        "http://exa mple.com",
        "https://a\n.com",
    ] {
        let text = set_err(flag, raw, Os::Linux).to_string();
        assert!(
            text.contains("--pre-suspend-webhook-url") && text.contains("http"),
            "{text}"
        );
    }
    let mut s = Settings::defaults_for(Os::Linux);
    s.post_session_end_webhook_url = "nope".into();
    let problems = s.validate(Os::Linux).unwrap_err();
    assert!(problems[0].to_string().contains("postSessionEndWebhookUrl"));
}

#[test]
fn power_request_reason() {
    let flag = "power-request-reason";
    assert_eq!(
        set_ok(flag, "", Os::Linux).power_request.reason,
        DEFAULT_POWER_REQUEST_REASON
    );
    assert_eq!(
        set_ok(flag, "   ", Os::Linux).power_request.reason,
        DEFAULT_POWER_REQUEST_REASON
    );
    let long = "é".repeat(200);
    assert_eq!(set_ok(flag, &long, Os::Linux).power_request.reason, long);
    let text = set_err(flag, &"x".repeat(201), Os::Linux).to_string();
    assert!(
        text.contains("--power-request-reason") && text.contains("200"),
        "{text}"
    );
    set_err(flag, "two\nlines", Os::Linux);
    let mut s = Settings::defaults_for(Os::Linux);
    s.power_request.reason = " ".into();
    assert!(
        s.validate(Os::Linux).unwrap_err()[0]
            .to_string()
            .contains("powerRequest.reason")
    );
    s.normalize(Os::Linux);
    assert_eq!(s.power_request.reason, DEFAULT_POWER_REQUEST_REASON);
}

#[test]
fn user_interface_culture() {
    let flag = "user-interface-culture";
    for (raw, stored) in [
        ("auto", "auto"),
        ("AUTO", "auto"),
        ("en", "en"),
        ("KO", "ko"),
        ("en-us", "en-US"),
        ("pt-BR", "pt-BR"),
        ("zh-hant-tw", "zh-Hant-TW"),
        ("sr-Latn", "sr-Latn"),
        ("es-419", "es-419"),
        ("haw", "haw"),
        ("de-DE-1996", "de-DE-1996"),
    ] {
        assert_eq!(
            set_ok(flag, raw, Os::Linux).user_interface_culture,
            stored,
            "{raw}"
        );
    }
    for raw in [
        "",
        "e",
        "english",
        "en_US",
        "en-",
        "-en",
        "en--US",
        "1a",
        "en-x",
        "en-abcdefghi",
        "é",
    ] {
        let text = set_err(flag, raw, Os::Linux).to_string();
        assert!(
            text.contains("--user-interface-culture") && text.contains("auto"),
            "{text}"
        );
    }
}

#[test]
fn choices_are_case_insensitive() {
    assert_eq!(
        set_ok("suspend-mode", "Hibernate", Os::Linux).suspend_mode,
        SuspendMode::Hibernate
    );
    assert_eq!(
        set_ok("closed-lid-permission-request-decision", "ALLOW", Os::Linux)
            .closed_lid_permission_request_decision,
        ClosedLidPermissionRequestDecision::Allow
    );
    assert_eq!(
        set_ok("emergency-hibernation-temperature-mode", " low ", Os::Linux)
            .emergency_hibernation_temperature_mode,
        TemperatureMode::Low
    );
    let text = set_err("suspend-mode", "standby", Os::Linux).to_string();
    assert!(
        text.contains("--suspend-mode") && text.contains("sleep, hibernate"),
        "{text}"
    );
    let text = set_err("closed-lid-permission-request-decision", "maybe", Os::Linux).to_string();
    assert!(text.contains("deny, allow, ask"), "{text}");
}

#[test]
fn windows_only_fields_are_refused_elsewhere() {
    for os in [Os::Linux, Os::MacOs] {
        for flag in [
            "prevent-away-mode-sleep",
            "--skip-suspend-when-lid-close-does-nothing",
        ] {
            let err = set_err(flag, "true", os);
            assert!(
                matches!(err, SettingsError::NotOnThisPlatform { .. }),
                "{err:?}"
            );
            let text = err.to_string();
            assert!(
                text.contains("only on Windows") && text.contains(os.name()),
                "{text}"
            );
        }
    }
    let s = set_ok("prevent-away-mode-sleep", "off", Os::Windows);
    assert_eq!(s.power_request.prevent_away_mode_sleep, Some(false));
    let s = set_ok(
        "skip-suspend-when-lid-close-does-nothing",
        "no",
        Os::Windows,
    );
    assert_eq!(s.skip_suspend_when_lid_close_does_nothing, Some(false));
    // A Windows-only value present on Linux is reported by validate.
    let mut s = Settings::defaults_for(Os::Linux);
    s.power_request.prevent_away_mode_sleep = Some(true);
    let problems = s.validate(Os::Linux).unwrap_err();
    assert!(problems[0].to_string().contains("only on Windows"));
}

#[test]
fn defaults_validate_everywhere() {
    for os in OSES {
        Settings::defaults_for(os).validate(os).unwrap();
    }
    // The un-normalized default is valid on non-Windows OSes too.
    Settings::default().validate(Os::Linux).unwrap();
}

#[test]
fn normalize_canonicalizes_file_values() {
    let mut s = Settings {
        post_stop_suspend_sound: " off ".into(),
        closed_lid_stop_follow_up_sound: "question".into(),
        pre_suspend_webhook_url: "  https://x.example/ ".into(),
        suspend_history_entry_count: Some(0),
        user_interface_culture: " ".into(),
        ..Settings::default()
    };
    s.normalize(Os::Linux);
    assert_eq!(s.post_stop_suspend_sound, "");
    assert_eq!(s.closed_lid_stop_follow_up_sound, "Question");
    assert_eq!(s.pre_suspend_webhook_url, "https://x.example/");
    assert_eq!(s.suspend_history_entry_count, Some(1));
    assert_eq!(s.user_interface_culture, "auto");
    s.user_interface_culture = "EN-gb".into();
    s.normalize(Os::Windows);
    assert_eq!(s.user_interface_culture, "en-GB");
    assert_eq!(s.power_request.prevent_away_mode_sleep, Some(true));
    assert_eq!(s.skip_suspend_when_lid_close_does_nothing, Some(true));
    let once = s.clone();
    s.normalize(Os::Windows);
    assert_eq!(s, once, "normalize is idempotent");
}

// ----- ask-before-sleep ------------------------------------------------------------------------

fn with_follow_up_url() -> Settings {
    Settings {
        closed_lid_stop_follow_up_webhook_url: "https://notify.example/follow-up".into(),
        ..Settings::defaults_for(Os::Linux)
    }
}

#[test]
fn follow_up_state_and_hook_timeout() {
    let off = Settings::defaults_for(Os::Linux);
    assert_eq!(off.follow_up_state(), FollowUpState::Off);
    assert_eq!(off.managed_hook_timeout_seconds(), 30);
    assert_eq!(off.follow_up_webhook_url(), None);

    let on = with_follow_up_url();
    assert_eq!(on.follow_up_state(), FollowUpState::On);
    assert_eq!(on.managed_hook_timeout_seconds(), 10 + 180 + 300);
    assert_eq!(on.managed_hook_timeout_seconds(), 490);
    assert_eq!(
        on.follow_up_webhook_url().unwrap().as_str(),
        "https://notify.example/follow-up"
    );

    let mut s = with_follow_up_url();
    s.closed_lid_stop_follow_up_delay_seconds = 5;
    assert_eq!(
        s.follow_up_state(),
        FollowUpState::ConfigurationError(vec![FollowUpIssue::ReplyWaitTooShort])
    );
    assert_eq!(s.managed_hook_timeout_seconds(), 30);
    s.validate(Os::Linux).unwrap(); // saved, only a derived configuration error
    for delay in [1, 19] {
        s.closed_lid_stop_follow_up_delay_seconds = delay;
        assert!(matches!(
            s.follow_up_state(),
            FollowUpState::ConfigurationError(_)
        ));
    }
    s.closed_lid_stop_follow_up_delay_seconds = 20;
    assert_eq!(s.follow_up_state(), FollowUpState::On);
    assert_eq!(s.managed_hook_timeout_seconds(), 10 + 20 + 300);

    let mut s = with_follow_up_url();
    s.post_stop_suspend_delay_seconds = 3;
    assert_eq!(
        s.follow_up_state(),
        FollowUpState::ConfigurationError(vec![FollowUpIssue::PostStopDelayTooShort])
    );
    assert_eq!(s.managed_hook_timeout_seconds(), 30);
    s.post_stop_suspend_delay_seconds = 10;
    assert_eq!(s.follow_up_state(), FollowUpState::On);

    let mut s = with_follow_up_url();
    s.closed_lid_stop_follow_up_webhook_url = "not a url".into();
    assert_eq!(
        s.follow_up_state(),
        FollowUpState::ConfigurationError(vec![FollowUpIssue::InvalidWebhookUrl])
    );
    assert_eq!(s.managed_hook_timeout_seconds(), 30);
    s.closed_lid_stop_follow_up_delay_seconds = 3;
    s.post_stop_suspend_delay_seconds = 0;
    let state = s.follow_up_state();
    assert_eq!(
        state,
        FollowUpState::ConfigurationError(vec![
            FollowUpIssue::InvalidWebhookUrl,
            FollowUpIssue::ReplyWaitTooShort,
            FollowUpIssue::PostStopDelayTooShort,
        ])
    );
    assert_eq!(state.as_str(), "ConfigurationError");
    assert!(state.to_string().starts_with("configuration error: "));

    let mut s = with_follow_up_url();
    s.closed_lid_stop_follow_up_delay_seconds = 0;
    s.post_stop_suspend_delay_seconds = 0; // does not matter while the wait is off
    assert_eq!(s.follow_up_state(), FollowUpState::Off);
    assert_eq!(s.managed_hook_timeout_seconds(), 30);

    let mut s = with_follow_up_url();
    s.post_stop_suspend_delay_seconds = 86_400;
    s.closed_lid_stop_follow_up_delay_seconds = 86_400;
    assert_eq!(s.managed_hook_timeout_seconds(), 86_400 * 2 + 300);
}

// ----- JSON ------------------------------------------------------------------------------------

#[test]
fn defaults_serialize_with_camel_case_keys() {
    let linux = Settings::defaults_for(Os::Linux).to_json_pretty();
    assert!(linux.ends_with("}\n") && !linux.ends_with("\n\n"));
    assert!(linux.starts_with("{\n  \"powerRequest\": {\n    \"preventSystemSleep\": true,\n"));
    for key in [
        "\"changeLidAction\": true",
        "\"suspendMode\": \"Sleep\"",
        "\"postStopSuspendDelaySeconds\": 10",
        "\"postStopSuspendSoundVolumeOverridePercent\": null",
        "\"suspendHistoryEntryCount\": 10",
        "\"closedLidStopFollowUpDelaySeconds\": 180",
        "\"closedLidPermissionRequestDecision\": \"Deny\"",
        "\"emergencyHibernationTemperatureMode\": \"Average\"",
        "\"emergencyHibernationTemperatureCelsius\": 93",
        "\"userInterfaceCulture\": \"auto\"",
    ] {
        assert!(linux.contains(key), "{key} missing from\n{linux}");
    }
    assert!(!linux.contains("preventAwayModeSleep"));
    assert!(!linux.contains("skipSuspendWhenLidCloseDoesNothing"));
    assert!(!linux.contains('_'));
    let windows = Settings::defaults_for(Os::Windows).to_json_pretty();
    assert!(windows.contains("\"preventAwayModeSleep\": true"));
    assert!(windows.contains("\"skipSuspendWhenLidCloseDoesNothing\": true"));
}

#[test]
fn to_json_pretty_matches_serde_json() {
    for os in OSES {
        let mut s = Settings::defaults_for(os);
        assert_eq!(
            s.to_json_pretty(),
            serde_json::to_string_pretty(&s).unwrap() + "\n"
        );
        s.power_request.reason = "quote \" backslash \\ tab\t é 😀".into();
        s.session_timeout_minutes = None;
        s.suspend_mode = SuspendMode::Hibernate;
        assert_eq!(
            s.to_json_pretty(),
            serde_json::to_string_pretty(&s).unwrap() + "\n"
        );
    }
}

#[test]
fn defaults_round_trip_through_json() {
    for os in OSES {
        let defaults = Settings::defaults_for(os);
        let text = defaults.to_json_pretty();
        assert_eq!(Settings::from_json(&text, os).unwrap(), defaults);
        let via_serde: Settings = serde_json::from_str(&text).unwrap();
        assert_eq!(via_serde, defaults);
    }
    // A Linux file read on Windows gets the Windows-only defaults, and the other way round.
    let linux_text = Settings::defaults_for(Os::Linux).to_json_pretty();
    assert_eq!(
        Settings::from_json(&linux_text, Os::Windows).unwrap(),
        Settings::defaults_for(Os::Windows)
    );
    let windows_text = Settings::defaults_for(Os::Windows).to_json_pretty();
    assert_eq!(
        Settings::from_json(&windows_text, Os::Linux).unwrap(),
        Settings::defaults_for(Os::Linux)
    );
}

#[test]
fn corrupt_json_reports_line_and_column() {
    let text = "{\n  \"suspendMode\": \"Sleep\",\n  \"changeLidAction\": tru\n}\n";
    let err = Settings::from_json(text, Os::Linux).unwrap_err();
    let SettingsError::Parse { line, .. } = &err else {
        panic!("{err:?}")
    };
    assert!((3..=4).contains(line), "{err:?}");
    assert!(err.to_string().contains("changeLidAction"), "{err}");

    let err = Settings::from_json("{\"a\": 1,}", Os::Linux).unwrap_err();
    assert!(
        matches!(err, SettingsError::Parse { line: 1, .. }),
        "{err:?}"
    );

    let err = Settings::from_json("", Os::Linux).unwrap_err();
    assert!(
        matches!(err, SettingsError::Parse { line: 1, .. }),
        "{err:?}"
    );

    // Wrong types are reported with the key path and the value's position.
    let text = "{\n  \"powerRequest\": {\n    \"preventSystemSleep\": \"yes\"\n  }\n}";
    let err = Settings::from_json(text, Os::Linux).unwrap_err();
    let SettingsError::Parse {
        line,
        column,
        message,
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(*line, 3, "column {column}");
    assert!(
        message.contains("powerRequest.preventSystemSleep"),
        "{message}"
    );
    assert!(message.contains("invalid type"), "{message}");

    let err = Settings::from_json("{\"postStopSuspendDelaySeconds\": -5}", Os::Linux).unwrap_err();
    assert!(
        err.to_string().contains("postStopSuspendDelaySeconds"),
        "{err}"
    );
    let err = Settings::from_json("{\"suspendMode\": \"Standby\"}", Os::Linux).unwrap_err();
    assert!(err.to_string().contains("sleep, hibernate"), "{err}");
    let err = Settings::from_json("[]", Os::Linux).unwrap_err();
    assert!(matches!(err, SettingsError::Parse { .. }), "{err:?}");
}

#[test]
fn partial_files_get_defaults_and_unknown_keys_are_ignored() {
    let text = r#"{
        "suspendMode": "hibernate",
        "powerRequest": { "preventDisplaySleep": true, "SomethingNew": [1, {"x": null}] },
        "PostStopSuspendDelaySeconds": 99,
        "emergencyHibernationTemperatureMode": "Scorching",
        "closedLidPermissionRequestDecision": "ASK",
        "futureFeature": {"enabled": true}
    }"#;
    let s = Settings::from_json(text, Os::Linux).unwrap();
    let expected = Settings {
        suspend_mode: SuspendMode::Hibernate,
        power_request: PowerRequest {
            prevent_display_sleep: true,
            ..PowerRequest::default()
        },
        emergency_hibernation_temperature_mode: TemperatureMode::Average,
        closed_lid_permission_request_decision: ClosedLidPermissionRequestDecision::Ask,
        ..Settings::defaults_for(Os::Linux)
    };
    assert_eq!(s, expected);
    assert_eq!(
        Settings::from_json("{}", Os::Linux).unwrap(),
        Settings::defaults_for(Os::Linux)
    );
    assert_eq!(Settings::from_json(" \u{feff}{}", Os::Linux).ok(), None);
    assert_eq!(
        Settings::from_json("\u{feff}{}", Os::Linux).unwrap(),
        Settings::defaults_for(Os::Linux)
    );
}

#[test]
fn from_json_normalizes_then_validates() {
    let text = r#"{
        "postStopSuspendSound": "BEEP",
        "suspendHistoryEntryCount": 0,
        "sessionTimeoutMinutes": null,
        "powerRequest": { "reason": "   " },
        "preventAwayModeSleep": false
    }"#;
    let s = Settings::from_json(text, Os::Linux).unwrap();
    assert_eq!(s.post_stop_suspend_sound, "Beep");
    assert_eq!(s.suspend_history_entry_count, Some(1));
    assert_eq!(s.session_timeout_minutes, None);
    assert_eq!(s.power_request.reason, DEFAULT_POWER_REQUEST_REASON);

    let text = r#"{
        "postStopSuspendSoundVolumeOverridePercent": 0,
        "preSuspendWebhookUrl": "ftp://x",
        "userInterfaceCulture": "english please"
    }"#;
    let err = Settings::from_json(text, Os::Linux).unwrap_err();
    let SettingsError::Invalid { problems } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(problems.len(), 3);
    let text = err.to_string();
    assert!(text.starts_with("3 invalid settings: "), "{text}");
    assert!(
        text.contains("--post-stop-suspend-sound-volume-override-percent"),
        "{text}"
    );
    assert!(text.contains("--pre-suspend-webhook-url"), "{text}");
    assert!(text.contains("--user-interface-culture"), "{text}");

    // Volumes beyond u8 are a type error with the key path.
    let err = Settings::from_json(
        r#"{"closedLidStopFollowUpSoundVolumeOverridePercent": 300}"#,
        Os::Linux,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("closedLidStopFollowUpSoundVolumeOverridePercent"),
        "{err}"
    );
}

// ----- properties ------------------------------------------------------------------------------

fn any_os() -> impl Strategy<Value = Os> {
    prop::sample::select(OSES.to_vec())
}

fn any_flag() -> impl Strategy<Value = &'static str> {
    prop::sample::select(FIELDS.iter().map(|s| s.flag).collect::<Vec<_>>())
}

/// Plausible and implausible values: keywords, numbers around the bounds, URLs, paths, tags.
fn any_value() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[ ]?(off|OFF|on|yes|No|true|FALSE|0|1|auto|sleep|Hibernate|ask|low|Beep|hand)[ ]?",
        any::<i64>().prop_map(|n| n.to_string()),
        (-5i64..120).prop_map(|n| n.to_string()),
        prop::sample::select(vec![
            "4294967295",
            "4294967296",
            "86400",
            "86401",
            "10080",
            "10081",
            "-0",
            "+5",
            "0x10",
        ])
        .prop_map(str::to_owned),
        "(https?|ftp|HTTP)://[a-z0-9.:\\[\\]@/ ?#%-]{0,20}",
        "[a-zA-Z0-9 /\\\\.é_-]{0,12}\\.(wav|WAV|mp3)",
        "[a-zA-Z0-9]{1,9}(-[a-zA-Z0-9]{0,9}){0,3}",
    ]
}

proptest! {
    #[test]
    fn set_field_never_panics_and_keeps_settings_valid(
        os in any_os(),
        edits in prop::collection::vec((any_flag(), any_value()), 1..8),
    ) {
        let mut settings = Settings::defaults_for(os);
        for (flag, raw) in &edits {
            let before = settings.clone();
            match settings.set_field(flag, raw, os) {
                Ok(()) => {
                    prop_assert!(settings.validate(os).is_ok(), "{} = {:?}: {:?}", flag, raw, settings.validate(os));
                    // What get_field shows sets the same value again.
                    let shown = settings.get_field(flag).unwrap();
                    let mut again = settings.clone();
                    again.set_field(flag, &shown, os).unwrap();
                    prop_assert_eq!(&again, &settings);
                }
                Err(err) => {
                    prop_assert_eq!(&settings, &before);
                    let text = err.to_string();
                    let spec = find_field(flag).unwrap();
                    prop_assert!(text.contains(spec.flag), "{}", text);
                }
            }
        }
        // Whatever was set survives the file round trip unchanged.
        let text = settings.to_json_pretty();
        prop_assert_eq!(&text, &(serde_json::to_string_pretty(&settings).unwrap() + "\n"));
        prop_assert_eq!(Settings::from_json(&text, os).unwrap(), settings.clone());
        let mut normalized = settings.clone();
        normalized.normalize(os);
        prop_assert_eq!(normalized, settings);
    }

    #[test]
    fn from_json_never_panics(text in any::<String>(), os in any_os()) {
        let _ = Settings::from_json(&text, os);
    }

    #[test]
    fn from_json_on_mutated_files_never_panics_and_yields_valid_settings(
        os in any_os(),
        cut in 0usize..2000,
        insert in "[\\[\\]{}\",:0-9a-z .-]{0,4}",
    ) {
        let text = Settings::defaults_for(Os::Windows).to_json_pretty();
        let mut cut = cut.min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let mutated = format!("{}{}{}", &text[..cut], insert, &text[cut..]);
        if let Ok(settings) = Settings::from_json(&mutated, os) {
            prop_assert!(settings.validate(os).is_ok());
        }
    }
}

#[test]
fn mcp_names_are_unique_camel_case_and_stable() {
    let names: Vec<String> = FIELDS.iter().map(FieldSpec::mcp_name).collect();
    let unique: std::collections::BTreeSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    assert_eq!(
        spec("power-request-reason").mcp_name(),
        "powerRequestReason"
    );
    assert_eq!(
        spec("prevent-system-sleep").mcp_name(),
        "preventSystemSleep"
    );
    assert_eq!(spec("suspend-mode").mcp_name(), "suspendMode");
    for name in &names {
        assert!(name.chars().all(|c| c.is_ascii_alphanumeric()), "{name}");
    }
}

#[test]
fn reset_for_a_model_keeps_every_user_only_field() {
    let os = Os::Linux;
    let mut user = Settings::defaults_for(os);
    user.set_field("closed-lid-permission-request-decision", "allow", os)
        .unwrap();
    user.set_field("pre-suspend-webhook-url", "https://example.com/h", os)
        .unwrap();
    user.set_field("emergency-hibernation-on-high-temperature", "false", os)
        .unwrap();
    user.set_field("suspend-mode", "hibernate", os).unwrap();
    let reset = user.defaults_keeping_user_only(os);
    let changed: Vec<&str> = user
        .changed_fields(&reset, os)
        .iter()
        .map(|s| s.flag)
        .collect();
    assert_eq!(changed, ["suspend-mode"]);
    assert!(changed.iter().all(|f| !spec(f).user_only()));
    let user_only: Vec<&str> = FIELDS
        .iter()
        .filter(|s| s.user_only())
        .map(|s| s.flag)
        .collect();
    assert_eq!(
        user_only,
        [
            "battery-floor-percent",
            "hold-on-battery",
            "pre-suspend-webhook-url",
            "post-session-end-webhook-url",
            "webhook-secret",
            "closed-lid-stop-follow-up-webhook-url",
            "ntfy-url",
            "ntfy-token",
            "ntfy-ask-before-sleep",
            "ntfy-needs-you",
            "ntfy-resumed",
            "remote-decision-timeout-seconds",
            "remote-decision-fallback",
            "notify-protection-failed",
            "notify-suspend-scheduled",
            "notify-waiting-for-you",
            "notify-battery-floor",
            "notify-thermal-pressure",
            "closed-lid-permission-request-decision",
            "emergency-hibernation-on-high-temperature",
            "emergency-hibernation-temperature-mode",
            "emergency-hibernation-temperature-celsius",
        ]
    );
}

#[test]
fn the_phone_settings_and_what_they_imply() {
    let os = Os::Linux;
    let mut s = Settings::defaults_for(os);
    assert_eq!(s.ntfy(), None);
    assert_eq!(s.remote_decision_wait(), None);
    // Topics: the last path segment, under any prefix; the reply topic next to it.
    s.set_field("ntfy-url", "https://ntfy.example/base/lg-abc_1/", os)
        .unwrap();
    let topic = s.ntfy().unwrap();
    assert_eq!(topic.server, "https://ntfy.example/base");
    assert_eq!(topic.topic, "lg-abc_1");
    assert_eq!(topic.reply_topic(), "lg-abc_1-reply");
    assert_eq!(
        topic.topic_url(&topic.reply_topic()),
        "https://ntfy.example/base/lg-abc_1-reply"
    );
    for bad in [
        "https://ntfy.sh",
        "https://ntfy.sh/",
        "https://ntfy.sh/a b",
        "https://ntfy.sh/topic?x=1",
        "https://user:pw@ntfy.sh/topic",
        "ftp://ntfy.sh/topic",
        &format!("https://ntfy.sh/{}", "t".repeat(59)),
    ] {
        let err = set_err("ntfy-url", bad, os).to_string();
        assert!(err.contains("a server and topic"), "{bad}: {err}");
    }
    s.set_field(
        "ntfy-url",
        &format!("https://ntfy.sh/{}", "t".repeat(58)),
        os,
    )
    .unwrap();
    // Ask before sleep over ntfy is opt-in; on, it turns the feature on without a webhook.
    assert_eq!(s.follow_up_state(), FollowUpState::Off);
    s.set_field("ntfy-ask-before-sleep", "true", os).unwrap();
    assert_eq!(s.follow_up_state(), FollowUpState::On);
    assert_eq!(s.managed_hook_timeout_seconds(), 490);
    // Policy remote: the managed hook timeout outlives the wait by the margin.
    s.set_field("ntfy-ask-before-sleep", "false", os).unwrap();
    s.set_field("closed-lid-permission-request-decision", "remote", os)
        .unwrap();
    assert_eq!(s.remote_decision_wait(), Some(60));
    assert_eq!(
        s.managed_hook_timeout_seconds(),
        60 + REMOTE_HOOK_MARGIN_SECONDS
    );
    s.set_field("remote-decision-timeout-seconds", "540", os)
        .unwrap();
    assert_eq!(s.managed_hook_timeout_seconds(), 560);
    assert!(
        set_err("remote-decision-timeout-seconds", "9", os)
            .to_string()
            .contains("from 10 to 540")
    );
    assert!(
        set_err("remote-decision-fallback", "allow", os)
            .to_string()
            .contains("one of deny, ask")
    );
    // The token is a secret: never repeated in an error.
    let err = set_err("ntfy-token", "a\u{7}b", os).to_string();
    assert!(!err.contains("a\u{7}b"), "{err}");
}
