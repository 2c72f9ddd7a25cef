use std::ffi::{OsStr, OsString};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lidguard_core::settings::{SoundSetting, SystemSound};

use super::volume::{parse_mute, parse_volume_percent};
use super::{
    PlayedSound, SoundError, choose_player, data_dirs, find_program, play_with, resolve,
    theme_names,
};

fn touch(path: &Path) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, b"RIFF").unwrap();
}

fn system(sound: SystemSound) -> SoundSetting {
    SoundSetting::System(sound)
}

#[test]
fn every_system_sound_resolves_through_each_of_its_theme_names() {
    for sound in SystemSound::ALL {
        for (index, name) in theme_names(sound).iter().enumerate() {
            let dir = tempfile::tempdir().unwrap();
            let file = dir
                .path()
                .join("sounds/freedesktop/stereo")
                .join(format!("{name}.oga"));
            touch(&file);
            let found = resolve(&system(sound), &[dir.path().to_owned()]);
            assert_eq!(found.unwrap(), file, "{sound} via name #{index} {name}");
        }
    }
}

#[test]
fn theme_names_match_the_reference() {
    let names = |sound| theme_names(sound).to_vec();
    assert_eq!(
        names(SystemSound::Asterisk),
        ["dialog-information", "message", "bell"]
    );
    assert_eq!(
        names(SystemSound::Beep),
        ["bell", "audio-volume-change", "message"]
    );
    assert_eq!(names(SystemSound::Exclamation), ["dialog-warning", "bell"]);
    assert_eq!(names(SystemSound::Hand), ["dialog-error", "dialog-warning"]);
    assert_eq!(
        names(SystemSound::Question),
        ["dialog-question", "dialog-information"]
    );
}

#[test]
fn earlier_theme_name_wins_over_later_one() {
    let dir = tempfile::tempdir().unwrap();
    let sounds = dir.path().join("sounds");
    let bell = sounds.join("a/bell.oga");
    let message = sounds.join("b/deep/message.ogg");
    let info = sounds.join("z/stereo/dialog-information.wav");
    touch(&bell);
    touch(&message);
    touch(&info);
    let dirs = [dir.path().to_owned()];
    assert_eq!(
        resolve(&system(SystemSound::Asterisk), &dirs).unwrap(),
        info
    );
    fs::remove_file(&info).unwrap();
    assert_eq!(
        resolve(&system(SystemSound::Asterisk), &dirs).unwrap(),
        message
    );
    fs::remove_file(&message).unwrap();
    assert_eq!(
        resolve(&system(SystemSound::Asterisk), &dirs).unwrap(),
        bell
    );
    // Beep prefers bell over message.
    touch(&message);
    assert_eq!(resolve(&system(SystemSound::Beep), &dirs).unwrap(), bell);
}

#[test]
fn data_home_before_data_dirs_and_name_before_directory() {
    let home = tempfile::tempdir().unwrap();
    let shared = tempfile::tempdir().unwrap();
    let dirs = [home.path().to_owned(), shared.path().to_owned()];
    let shared_warning = shared
        .path()
        .join("sounds/freedesktop/stereo/dialog-warning.oga");
    touch(&shared_warning);
    let home_warning = home.path().join("sounds/mine/dialog-warning.wav");
    touch(&home_warning);
    assert_eq!(
        resolve(&system(SystemSound::Exclamation), &dirs).unwrap(),
        home_warning
    );
    // A later name in the first directory loses to an earlier name in a later one.
    fs::remove_file(&home_warning).unwrap();
    touch(&home.path().join("sounds/mine/bell.oga"));
    assert_eq!(
        resolve(&system(SystemSound::Exclamation), &dirs).unwrap(),
        shared_warning
    );
}

#[test]
fn within_one_name_sorted_paths_decide() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("sounds/a/bell.ogg");
    touch(&dir.path().join("sounds/b/bell.oga"));
    touch(&first);
    touch(&dir.path().join("sounds/c/bell.wav"));
    let dirs = [dir.path().to_owned()];
    assert_eq!(resolve(&system(SystemSound::Beep), &dirs).unwrap(), first);
}

#[test]
fn missing_system_sound_says_what_was_searched_and_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    // Near misses: wrong extension, wrong stem, a directory with the right name.
    touch(&dir.path().join("sounds/x/dialog-error.mp3"));
    touch(&dir.path().join("sounds/x/dialog-error-2.oga"));
    touch(&dir.path().join("sounds/x/my-dialog-warning.oga"));
    fs::create_dir_all(dir.path().join("sounds/x/dialog-error.oga")).unwrap();
    let missing = dir.path().join("missing");
    let dirs = [dir.path().to_owned(), missing.clone()];
    let error = resolve(&system(SystemSound::Hand), &dirs).unwrap_err();
    assert!(
        matches!(error, SoundError::SystemSoundNotFound { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("system sound Hand not found"), "{message}");
    assert!(
        message.contains("dialog-error, dialog-warning"),
        "{message}"
    );
    assert!(
        message.contains(&dir.path().join("sounds").display().to_string()),
        "{message}"
    );
    assert!(
        message.contains(&missing.join("sounds").display().to_string()),
        "{message}"
    );
    assert!(message.contains("sound-theme-freedesktop"), "{message}");
    assert!(resolve(&system(SystemSound::Hand), &[]).is_err());
}

#[test]
fn wav_files_must_exist_and_be_wav() {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("done.WAV");
    touch(&wav);
    let setting = SoundSetting::WavFile(wav.display().to_string());
    assert_eq!(resolve(&setting, &[]).unwrap(), wav);

    let missing = SoundSetting::WavFile(dir.path().join("gone.wav").display().to_string());
    let error = resolve(&missing, &[]).unwrap_err();
    assert!(
        matches!(error, SoundError::FileNotFound { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("gone.wav"), "{error}");

    let mp3 = dir.path().join("done.mp3");
    touch(&mp3);
    let error = resolve(&SoundSetting::WavFile(mp3.display().to_string()), &[]).unwrap_err();
    assert!(matches!(error, SoundError::NotWav(_)), "{error:?}");

    let folder = dir.path().join("folder.wav");
    fs::create_dir(&folder).unwrap();
    let error = resolve(&SoundSetting::WavFile(folder.display().to_string()), &[]).unwrap_err();
    assert!(matches!(error, SoundError::NotAFile(_)), "{error:?}");

    assert!(matches!(
        resolve(&SoundSetting::Off, &[]),
        Err(SoundError::Off)
    ));
}

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    move |name| {
        pairs
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| OsString::from(value))
    }
}

fn paths(list: &[&str]) -> Vec<PathBuf> {
    list.iter().map(PathBuf::from).collect()
}

#[cfg(unix)]
#[test]
fn data_dirs_follow_xdg_rules() {
    assert_eq!(
        data_dirs(env(&[("HOME", "/home/u")])),
        paths(&["/home/u/.local/share", "/usr/local/share", "/usr/share"])
    );
    assert_eq!(
        data_dirs(env(&[
            ("HOME", "/home/u"),
            ("XDG_DATA_HOME", "/data/home"),
            ("XDG_DATA_DIRS", "/a:relative::/b:/a"),
        ])),
        paths(&["/data/home", "/a", "/b"])
    );
    // Empty means unset; a relative XDG_DATA_HOME falls back to HOME.
    assert_eq!(
        data_dirs(env(&[
            ("HOME", "/home/u"),
            ("XDG_DATA_HOME", "rel"),
            ("XDG_DATA_DIRS", ""),
        ])),
        paths(&["/home/u/.local/share", "/usr/local/share", "/usr/share"])
    );
    assert_eq!(
        data_dirs(env(&[])),
        paths(&["/usr/local/share", "/usr/share"])
    );
}

#[test]
fn pactl_output_parsing() {
    let volume = "Volume: front-left: 32768 /  50% / -18.06 dB,   \
                  front-right: 32768 /  50% / -18.06 dB\n        balance 0.00\n";
    assert_eq!(parse_volume_percent(volume), Some(50));
    assert_eq!(
        parse_volume_percent("Volume: mono: 98304 / 150% / 10.57 dB"),
        Some(150)
    );
    assert_eq!(parse_volume_percent("100% then 20%"), Some(100));
    assert_eq!(parse_volume_percent("% no digits"), None);
    assert_eq!(parse_volume_percent("Connection failure"), None);
    assert_eq!(parse_mute("Mute: yes\n"), Some(true));
    assert_eq!(parse_mute("  Mute: no"), Some(false));
    assert_eq!(parse_mute("Stumm: ja"), None);
}

#[test]
fn invalid_and_off_settings() {
    let error = play_with("trumpet", None, Duration::from_secs(1), &[], None).unwrap_err();
    assert!(matches!(error, SoundError::InvalidSetting(_)), "{error:?}");
    assert!(error.to_string().contains(".wav"), "{error}");
    let error = play_with(" off ", None, Duration::from_secs(1), &[], None).unwrap_err();
    assert!(matches!(error, SoundError::Off), "{error:?}");
}

#[cfg(unix)]
mod with_programs {

    use super::*;

    const PACTL: &str = "\
        case \"$1\" in\n\
          get-sink-volume) echo 'Volume: front-left: 32768 /  50% / -18.06 dB,   \
            front-right: 32768 /  50% / -18.06 dB'; echo '        balance 0.00' ;;\n\
          get-sink-mute) echo 'Mute: yes' ;;\n\
        esac";

    /// A temporary `PATH` directory, a log the fake programs append to, and a sound file.
    struct Fixture {
        dir: tempfile::TempDir,
    }

    impl Fixture {
        fn new() -> Fixture {
            let fixture = Fixture {
                dir: tempfile::tempdir().unwrap(),
            };
            fs::create_dir(fixture.bin()).unwrap();
            fixture
        }

        /// A fixture with these programs (name, shell script) on its `PATH`.
        fn with(programs: &[(&str, &str)]) -> Fixture {
            let fixture = Fixture::new();
            for (name, script) in programs {
                fixture.program(name, script);
            }
            fixture
        }

        fn bin(&self) -> PathBuf {
            self.dir.path().join("bin")
        }

        fn path(&self) -> OsString {
            self.bin().into_os_string()
        }

        fn log(&self) -> PathBuf {
            self.dir.path().join("log")
        }

        fn log_lines(&self) -> Vec<String> {
            fs::read_to_string(self.log())
                .unwrap_or_default()
                .lines()
                .map(str::to_owned)
                .collect()
        }

        /// A `#!/bin/sh` program `name` that logs `name args…`, then runs `body`.
        fn program(&self, name: &str, body: &str) -> PathBuf {
            let file = self.bin().join(name);
            let script = format!(
                "#!/bin/sh\necho \"{name} $*\" >> '{}'\n{body}\n",
                self.log().display()
            );
            // Written by a child process: a write descriptor of ours could be inherited by
            // a program another test thread is starting, and exec would then fail with
            // ETXTBSY ("Text file busy").
            let mut writer = std::process::Command::new("sh")
                .args(["-c", "cat > \"$1\" && chmod 755 \"$1\"", "sh"])
                .arg(&file)
                .stdin(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            std::io::Write::write_all(&mut writer.stdin.take().unwrap(), script.as_bytes())
                .unwrap();
            assert!(writer.wait().unwrap().success());
            file
        }

        fn wav(&self) -> PathBuf {
            let file = self.dir.path().join("sounds in here/done.wav");
            touch(&file);
            file
        }

        fn play(&self, text: &str, volume: Option<u8>) -> Result<PlayedSound, SoundError> {
            let data = [self.dir.path().join("data")];
            play_with(
                text,
                volume,
                Duration::from_secs(10),
                &data,
                Some(&self.path()),
            )
        }
    }

    #[test]
    fn find_program_needs_an_executable_file() {
        let fixture = Fixture::new();
        let other = fixture.dir.path().join("other");
        fs::create_dir(&other).unwrap();
        fs::write(fixture.bin().join("plain"), "#!/bin/sh\n").unwrap();
        fs::create_dir(fixture.bin().join("folder")).unwrap();
        fixture.program("tool", "");
        let tool = fixture.program("both", "");
        fs::copy(&tool, other.join("both")).unwrap();
        let path = std::env::join_paths([other.clone(), fixture.bin()]).unwrap();
        assert_eq!(find_program("plain", Some(&path)), None);
        assert_eq!(find_program("folder", Some(&path)), None);
        assert_eq!(
            find_program("tool", Some(&path)),
            Some(fixture.bin().join("tool"))
        );
        assert_eq!(find_program("both", Some(&path)), Some(other.join("both")));
        assert_eq!(find_program("tool", None), None);
        assert_eq!(find_program("tool", Some(OsStr::new(""))), None);
    }

    #[test]
    fn plays_with_paplay_and_passes_the_file() {
        let fixture = Fixture::new();
        let paplay = fixture.program("paplay", "exit 0");
        fixture.program("aplay", "exit 0");
        let wav = fixture.wav();
        let played = fixture.play(&wav.display().to_string(), None).unwrap();
        assert_eq!(played.player, paplay);
        assert_eq!(played.file, wav);
        assert_eq!(fixture.log_lines(), [format!("paplay {}", wav.display())]);
    }

    #[test]
    fn pw_play_comes_first() {
        let fixture = Fixture::new();
        fixture.program("paplay", "exit 0");
        let pw_play = fixture.program("pw-play", "exit 0");
        let wav = fixture.wav();
        let played = fixture.play(&wav.display().to_string(), None).unwrap();
        assert_eq!(played.player, pw_play);
        assert_eq!(fixture.log_lines(), [format!("pw-play {}", wav.display())]);
    }

    #[test]
    fn aplay_plays_only_wav_files() {
        let fixture = Fixture::new();
        let aplay = fixture.program("aplay", "exit 0");
        let oga = fixture
            .dir
            .path()
            .join("data/sounds/freedesktop/stereo/bell.oga");
        touch(&oga);
        let error = fixture.play("Beep", None).unwrap_err();
        assert!(matches!(error, SoundError::NoPlayer { .. }), "{error:?}");
        let message = error.to_string();
        assert!(
            message.contains("looked for pw-play, paplay on PATH; aplay plays only .wav"),
            "{message}"
        );
        assert!(fixture.log_lines().is_empty());
        assert_eq!(
            choose_player(&fixture.wav(), Some(&fixture.path())).unwrap(),
            aplay
        );
        // A system sound that is a .wav file is fine for aplay.
        let wav = fixture
            .dir
            .path()
            .join("data/sounds/freedesktop/stereo/bell.wav");
        touch(&wav);
        fs::remove_file(&oga).unwrap();
        let played = fixture.play("beep", None).unwrap();
        assert_eq!((played.player, played.file), (aplay, wav));
    }

    #[test]
    fn no_player_on_path() {
        let fixture = Fixture::new();
        let wav = fixture.wav();
        let text = wav.display().to_string();
        let data = [fixture.dir.path().join("data")];
        for path in [Some(OsStr::new("")), Some(fixture.path().as_os_str()), None] {
            let error = play_with(&text, None, Duration::from_secs(1), &data, path).unwrap_err();
            assert_eq!(
                error.to_string(),
                "no sound player found (looked for pw-play, paplay, aplay on PATH); \
                 install pipewire-bin, pulseaudio-utils or alsa-utils"
            );
        }
    }

    #[test]
    fn hanging_player_is_killed() {
        let fixture = Fixture::new();
        fixture.program("paplay", "exec sleep 10");
        let wav = fixture.wav();
        let data = [fixture.dir.path().join("data")];
        let start = Instant::now();
        let error = play_with(
            &wav.display().to_string(),
            None,
            Duration::from_millis(300),
            &data,
            Some(&fixture.path()),
        )
        .unwrap_err();
        let elapsed = start.elapsed();
        assert!(matches!(error, SoundError::TimedOut { .. }), "{error:?}");
        assert!(error.to_string().contains("did not finish"), "{error}");
        assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
        assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    }

    #[test]
    fn failing_player_is_an_error() {
        let fixture = Fixture::new();
        fixture.program("paplay", "exit 1");
        let error = fixture
            .play(&fixture.wav().display().to_string(), None)
            .unwrap_err();
        assert!(matches!(error, SoundError::Failed { .. }), "{error:?}");
        assert!(error.to_string().contains("audio"), "{error}");
    }

    fn override_sequence(wav: &Path) -> Vec<String> {
        [
            "pactl get-sink-volume @DEFAULT_SINK@".to_owned(),
            "pactl get-sink-mute @DEFAULT_SINK@".to_owned(),
            "pactl set-sink-mute @DEFAULT_SINK@ 0".to_owned(),
            "pactl set-sink-volume @DEFAULT_SINK@ 30%".to_owned(),
            format!("paplay {}", wav.display()),
            "pactl set-sink-volume @DEFAULT_SINK@ 50%".to_owned(),
            "pactl set-sink-mute @DEFAULT_SINK@ 1".to_owned(),
        ]
        .into()
    }

    #[test]
    fn volume_is_raised_and_put_back() {
        let fixture = Fixture::with(&[("pactl", PACTL), ("paplay", "exit 0")]);
        let wav = fixture.wav();
        fixture.play(&wav.display().to_string(), Some(30)).unwrap();
        assert_eq!(fixture.log_lines(), override_sequence(&wav));
    }

    #[test]
    fn volume_is_put_back_when_playing_fails() {
        let fixture = Fixture::with(&[("pactl", PACTL), ("paplay", "exit 3")]);
        let wav = fixture.wav();
        let error = fixture
            .play(&wav.display().to_string(), Some(30))
            .unwrap_err();
        assert!(matches!(error, SoundError::Failed { .. }), "{error:?}");
        assert_eq!(fixture.log_lines(), override_sequence(&wav));
    }

    #[test]
    fn volume_out_of_range_is_clamped() {
        let fixture = Fixture::with(&[("pactl", PACTL), ("paplay", "exit 0")]);
        let wav = fixture.wav();
        fixture.play(&wav.display().to_string(), Some(250)).unwrap();
        assert!(
            fixture
                .log_lines()
                .contains(&"pactl set-sink-volume @DEFAULT_SINK@ 100%".to_owned())
        );
    }

    #[test]
    fn failing_pactl_changes_nothing_and_the_sound_still_plays() {
        let fixture = Fixture::new();
        fixture.program("pactl", "echo 'Connection failure' >&2; exit 1");
        fixture.program("paplay", "exit 0");
        let wav = fixture.wav();
        fixture.play(&wav.display().to_string(), Some(30)).unwrap();
        assert_eq!(
            fixture.log_lines(),
            [
                "pactl get-sink-volume @DEFAULT_SINK@".to_owned(),
                "pactl get-sink-mute @DEFAULT_SINK@".to_owned(),
                format!("paplay {}", wav.display()),
            ]
        );
    }

    #[test]
    fn missing_pactl_still_plays() {
        let fixture = Fixture::new();
        fixture.program("paplay", "exit 0");
        let wav = fixture.wav();
        fixture.play(&wav.display().to_string(), Some(30)).unwrap();
        assert_eq!(fixture.log_lines(), [format!("paplay {}", wav.display())]);
    }
}
