use std::io;
use std::path::Path;
use std::process::Command;

use lidguard_core::provider::Provider;

use super::command::sh_quote;
use super::*;

/// What ssh hands the remote login shell reads back as the same words there, whatever
/// they hold (checked with each POSIX shell this machine has).
#[cfg(unix)]
#[test]
fn quoted_words_come_back_whole_from_posix_shells() {
    let words = [
        "plain",
        "two words",
        "it's",
        "'",
        "a\\b\\\\c",
        "$HOME `id` $(id) \"q\" ; | & * ? ~ #",
        "line one\nline two",
        "",
        ENV_SCRIPT,
    ];
    let line = words
        .iter()
        .map(|w| sh_quote(w))
        .collect::<Vec<_>>()
        .join(" ");
    let mut tried = 0;
    for shell in [
        "/bin/sh",
        "/bin/bash",
        "/bin/dash",
        "/usr/bin/zsh",
        "/bin/ksh",
    ] {
        if !Path::new(shell).exists() {
            continue;
        }
        tried += 1;
        let out = Command::new(shell)
            .arg("-c")
            .arg(format!("printf '%s\\0' {line}"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{shell}");
        let back: Vec<&[u8]> = out.stdout.split(|&b| b == 0).collect();
        let expected: Vec<&[u8]> = words
            .iter()
            .map(|w| w.as_bytes())
            .chain([&b""[..]])
            .collect();
        assert_eq!(back, expected, "{shell}");
    }
    assert!(tried > 0, "no POSIX shell found");
}

#[cfg(unix)]
#[test]
fn a_wsl_exe_that_does_not_answer_is_given_up_on_and_named() {
    let started = std::time::Instant::now();
    let wsl = WslExe::at("/bin/sleep").with_timeout(std::time::Duration::from_millis(300));
    let err = wsl.run(&["30".to_owned()], b"").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    assert!(
        err.to_string().contains("/bin/sleep did not answer within"),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    // A program that answers is read whole, stdin included.
    let cat = WslExe::at("/bin/cat").run(&[], b"hello").unwrap();
    assert_eq!(cat.stdout, b"hello");
}

/// `wsl.exe --list --quiet` as it writes it: UTF-16LE with CRLF line ends (bytes as
/// microsoft/WSL#4607 shows them).
fn utf16(text: &str) -> Vec<u8> {
    text.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

#[test]
fn utf16_list_is_decoded_and_cleaned() {
    let bytes = utf16("Ubuntu-24.04\r\ndocker-desktop\r\n\r\n");
    assert!(bytes.contains(&0));
    assert_eq!(
        decode_distro_list(&bytes),
        vec!["Ubuntu-24.04".to_owned(), "docker-desktop".to_owned()]
    );
    let mut with_bom = vec![0xFF, 0xFE];
    with_bom.extend(utf16("Debian\r\n"));
    assert_eq!(decode_distro_list(&with_bom), vec!["Debian".to_owned()]);
}

#[test]
fn utf8_list_with_wsl_utf8_and_stray_nuls() {
    assert_eq!(
        decode_distro_list(b"Ubuntu\r\n  Alpine \n\n"),
        vec!["Ubuntu".to_owned(), "Alpine".to_owned()]
    );
    assert!(decode_distro_list(b"").is_empty());
    assert!(decode_distro_list(&utf16("\r\n")).is_empty());
    // An odd trailing byte does not panic.
    assert_eq!(
        decode_distro_list(&[b'A', 0, b'B']),
        vec!["A\u{42}".to_owned()]
    );
}

#[test]
fn command_lines() {
    assert_eq!(
        exec_args(None, "sh", &["-c", READ_SCRIPT, "lidguard-wsl", "/root/x"]),
        vec!["--exec", "sh", "-c", READ_SCRIPT, "lidguard-wsl", "/root/x"]
    );
    assert_eq!(
        exec_args(Some(" "), "true", &[]),
        vec!["--exec", "true"],
        "an empty name is the default distro"
    );
    assert_eq!(
        wslpath_args(Some("Ubuntu"), r"C:\Program Files\lidguard\lidguard.exe"),
        vec![
            "--distribution",
            "Ubuntu",
            "--exec",
            "wslpath",
            "-a",
            "-u",
            r"C:\Program Files\lidguard\lidguard.exe"
        ]
    );
}

#[test]
fn env_lines_are_a_lookup() {
    let text = "HOME=/home/me\nCODEX_HOME=\nCLAUDE_CONFIG_DIR=/home/me/cc\n";
    let var = parse_env(text);
    assert_eq!(var("HOME"), Some("/home/me".into()));
    assert_eq!(var("CODEX_HOME"), None);
    assert_eq!(var("CLAUDE_CONFIG_DIR"), Some("/home/me/cc".into()));
    assert_eq!(var("NOPE"), None);
}

/// `tests/windows/fake-wsl.sh`: wsl.exe's stand-in, whose distro side is this machine with
/// `home` as HOME.
#[cfg(unix)]
fn fake_wsl(home: &std::path::Path) -> WslExe {
    WslExe::at(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/windows/fake-wsl.sh"),
    )
    .with_env("FAKE_WSL_HOME", home)
}

/// The far side's files are read only when regular and small: a config that is a link to
/// `/dev/zero`, a folder, or a 300 MB file is refused quickly, with at most a little more
/// than the cap read.
#[cfg(unix)]
#[test]
fn what_is_read_from_the_far_side_is_bounded() {
    assert!(READ_SCRIPT.contains(&format!("head -c {} ", MAX_CONFIG_BYTES + 1)));
    let home = tempfile::tempdir().unwrap();
    let wsl = fake_wsl(home.path());
    let distro = Distro::new(&wsl, Some("Ubuntu"));
    let claude = home.path().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let file = claude.join("settings.json");
    let f = file.to_str().unwrap();
    std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
    let started = std::time::Instant::now();
    let err = distro.read(f).unwrap_err().to_string();
    assert!(err.contains("is not a regular file"), "{err}");
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    let err = distro.read(f).unwrap_err().to_string();
    assert!(err.contains("is not a regular file"), "{err}");
    std::fs::remove_dir(&file).unwrap();
    let big = std::fs::File::create(&file).unwrap();
    big.set_len(300 << 20).unwrap();
    let err = distro.read(f).unwrap_err().to_string();
    assert!(err.contains("is larger than 1 MiB"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    std::fs::write(&file, "{}\n").unwrap();
    assert_eq!(distro.read(f).unwrap().as_deref(), Some("{}\n"));
    // A far side that prints without end is cut off, not read whole.
    let endless = WslExe::at("sh");
    let err = endless
        .run(&["-c".into(), "exec cat /dev/zero".into()], b"")
        .unwrap_err()
        .to_string();
    assert!(err.contains("printed more than 2 MiB"), "{err}");
}

#[cfg(unix)]
#[test]
fn the_distro_list_and_a_timeout_refresh_through_the_stand_in() {
    // Both fake distros share one home: the first refresh rewrites, the second finds the
    // entries current. A config without lidguard's entries gains none.
    let home = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let places = lidguard_ipc::Places::under(state.path());
    let wsl = fake_wsl(home.path());
    assert_eq!(distros(&wsl).unwrap(), vec!["Ubuntu", "Debian"]);
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::create_dir_all(home.path().join(".gemini")).unwrap();
    std::fs::write(home.path().join(".gemini/settings.json"), "{}\n").unwrap();
    let distro = Distro::new(&wsl, Some("Ubuntu"));
    let env = distro.env().unwrap();
    let stamp = stamp();
    let how = How {
        dry_run: false,
        stamp: &stamp,
        places: &places,
    };
    let cmd = hook_command("/mnt/c/lg/lidguard-hook.exe");
    let edited = hooks(&distro, &env, Provider::Claude, &cmd, 30, false, how).unwrap();
    assert!(matches!(
        edited[..],
        [Edited {
            action: crate::file::Action::Written { created: true },
            ..
        }]
    ));
    let lines = refresh_timeouts(&places, &wsl, r"C:\lg\lidguard-hook.exe", 600);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("WSL distro Ubuntu: Claude Code: hook timeouts set to 600 s"),
        "{lines:?}"
    );
    let text = std::fs::read_to_string(home.path().join(".claude/settings.json")).unwrap();
    assert!(
        text.contains("\"timeout\": 600") && !text.contains("\"timeout\": 30"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(home.path().join(".gemini/settings.json")).unwrap(),
        "{}\n"
    );
}

/// The scripts run for real in `sh` here (Linux): read, write with backup and mode kept,
/// write through a symlink, delete with backup — both as ssh runs them (`sh -c`, input on
/// stdin) and as a WSL distro gets them (the whole program on stdin, `sh` alone on the
/// command line).
#[cfg(unix)]
#[test]
fn scripts_behave_in_a_real_shell() {
    for on_stdin in [false, true] {
        scripts_behave(on_stdin);
    }
}

#[cfg(unix)]
fn scripts_behave(on_stdin: bool) {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cfg/settings.json");
    let sh = |script: &str, args: &[&str], stdin: &[u8]| {
        let mut command = Command::new("sh");
        let input = if on_stdin {
            stdin_program(script, args, stdin).into_bytes()
        } else {
            command.args(["-c", script, "lidguard-wsl"]).args(args);
            stdin.to_vec()
        };
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&input).unwrap();
        child.wait_with_output().unwrap()
    };
    let f = file.to_str().unwrap();
    assert_eq!(sh(READ_SCRIPT, &[f], b"").status.code(), Some(3));
    assert!(
        sh(WRITE_SCRIPT, &[f, "20260101000000"], b"one")
            .status
            .success()
    );
    assert_eq!(std::fs::read(&file).unwrap(), b"one");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert!(
        sh(WRITE_SCRIPT, &[f, "20260101000001"], b"two")
            .status
            .success()
    );
    assert_eq!(sh(READ_SCRIPT, &[f], b"").stdout, b"two");
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o640
    );
    assert_eq!(
        std::fs::read(dir.path().join("cfg/settings.json.20260101000001.bak")).unwrap(),
        b"one"
    );
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    assert!(
        sh(WRITE_SCRIPT, &[link.to_str().unwrap(), "s3"], b"three")
            .status
            .success()
    );
    assert!(link.is_symlink());
    assert_eq!(std::fs::read(&file).unwrap(), b"three");
    assert!(sh(DELETE_SCRIPT, &[f, "s4"], b"").status.success());
    assert!(!file.exists());
    assert_eq!(
        std::fs::read(dir.path().join("cfg/settings.json.s4.bak")).unwrap(),
        b"three"
    );
    let env = sh(ENV_SCRIPT, &[], b"");
    let env = String::from_utf8(env.stdout).unwrap();
    assert!(env.lines().any(|l| l.starts_with("HOME=/")), "{env}");
    assert_eq!(env.lines().count(), 10, "{env}");

    // An executable put there runs, is the user's alone, and goes with its folder.
    let exe = dir.path().join("lib/lidguard/tool");
    let e = exe.to_str().unwrap();
    let bytes = b"#!/bin/sh\necho ran\n";
    assert!(sh(PUT_EXECUTABLE_SCRIPT, &[e], bytes).status.success());
    assert_eq!(std::fs::read(&exe).unwrap(), bytes);
    let mode = std::fs::metadata(&exe).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    assert_eq!(Command::new(&exe).output().unwrap().stdout, b"ran\n");
    assert!(sh(REMOVE_EXECUTABLE_SCRIPT, &[e], b"").status.success());
    assert!(!exe.exists() && !exe.parent().unwrap().exists());
    assert!(dir.path().join("lib").exists());

    // Paths with spaces, quotes and a newline, and input with every byte value, arrive
    // exactly; a failing script's status is the program's.
    let odd = dir.path().join("odd dir/it's \"a\"\nfile");
    let o = odd.to_str().unwrap();
    let every: Vec<u8> = (0..=255).collect();
    assert!(sh(PUT_EXECUTABLE_SCRIPT, &[o], &every).status.success());
    assert_eq!(std::fs::read(&odd).unwrap(), every);
    assert_eq!(sh("exit 7", &[], b"").status.code(), Some(7));
}

/// What a WSL distro's `sh` gets: nothing on the command line but `sh`, the rest a program
/// on stdin whose input is base64 in a here-document.
#[test]
fn a_distro_gets_its_scripts_on_stdin() {
    assert_eq!(
        exec_args(Some("Ubuntu"), "sh", &[]),
        ["--distribution", "Ubuntu", "--exec", "sh"]
    );
    let program = stdin_program(READ_SCRIPT, &["/home/u/a b"], b"hi");
    assert_eq!(
        program,
        format!(
            "lidguard_input() {{\nbase64 -d <<'LIDGUARD_INPUT'\naGk=\nLIDGUARD_INPUT\n}}\n\
             set -- '/home/u/a b'\nlidguard_input | (\n{READ_SCRIPT}\n)\n"
        )
    );
}
