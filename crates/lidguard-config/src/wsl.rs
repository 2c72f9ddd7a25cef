//! The WSL bridge's plain parts: reading `wsl.exe`'s distro list, the command lines that run
//! inside a distro, and the paths lidguard's entries carry there.
//!
//! Facts (Microsoft's WSL command reference and issues microsoft/WSL#4607, #10177):
//! - `wsl.exe --list --quiet` writes UTF-16LE (NUL bytes when read as bytes) unless `WSL_UTF8=1`;
//! - `wsl.exe --distribution NAME --exec PROGRAM ARGS…` runs a program without a shell, and
//!   with no `--distribution` in the default distro;
//! - `wslpath -a -u 'C:\…'` prints the Linux form (`/mnt/c/…`) of a Windows path.
//!
//! Configuration inside a distro is read and written through `sh -c SCRIPT lidguard-wsl ARGS…`,
//! the file paths passed as positional parameters, so nothing is quoted into the script.

/// The distro names in `wsl.exe --list --quiet` output: UTF-16LE when the bytes hold NULs
/// (a BOM is dropped), else UTF-8; `\r`, NULs and blank lines removed, names trimmed.
pub fn decode_distro_list(bytes: &[u8]) -> Vec<String> {
    let text = if bytes.contains(&0) {
        let body = bytes.strip_prefix(&[0xFF, 0xFE]).unwrap_or(bytes);
        let units: Vec<u16> = body
            .chunks(2)
            .map(|pair| u16::from_le_bytes([pair[0], *pair.get(1).unwrap_or(&0)]))
            .collect();
        String::from_utf16_lossy(&units)
    } else {
        String::from_utf8_lossy(bytes).into_owned()
    };
    text.replace('\0', "")
        .lines()
        .map(|line| line.trim().trim_start_matches('\u{feff}').trim())
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The `wsl.exe` arguments that run `program args…` in `distro` (`None` or empty: the default
/// distro) without a shell in between.
pub fn exec_args(distro: Option<&str>, program: &str, args: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(name) = distro.filter(|d| !d.trim().is_empty()) {
        out.extend(["--distribution".to_owned(), name.trim().to_owned()]);
    }
    out.extend(["--exec".to_owned(), program.to_owned()]);
    out.extend(args.iter().map(|a| (*a).to_owned()));
    out
}

/// The arguments that convert this Windows path to its Linux form inside `distro`.
pub fn wslpath_args(distro: Option<&str>, windows_path: &str) -> Vec<String> {
    exec_args(distro, "wslpath", &["-a", "-u", windows_path])
}

/// A script run as `sh -c SCRIPT lidguard-wsl FILE`: prints FILE, or nothing with exit 3 when it
/// does not exist (so "missing" and "unreadable" differ).
pub const READ_SCRIPT: &str = r#"if [ -e "$1" ]; then cat -- "$1"; else exit 3; fi"#;

/// A script run as `sh -c SCRIPT lidguard-wsl FILE STAMP` with the new content on stdin: makes
/// the directory, keeps a backup `FILE.STAMP.bak` of an existing file (mode kept by `cp -p`),
/// writes a temporary file next to FILE and renames it over FILE (atomic within the directory;
/// a symlinked FILE is written through to its target).
pub const WRITE_SCRIPT: &str = r#"set -e
target=$1
if [ -L "$target" ]; then target=$(readlink -f -- "$target"); fi
mkdir -p -- "$(dirname -- "$target")"
if [ -e "$target" ]; then cp -p -- "$target" "$target.$2.bak"; fi
tmp="$target.lidguard-tmp.$$"
umask 077
cat > "$tmp"
if [ -e "$target" ]; then chmod --reference="$target" -- "$tmp" 2>/dev/null || true; fi
mv -f -- "$tmp" "$target""#;

/// A script run as `sh -c SCRIPT lidguard-wsl FILE STAMP`: keeps a backup and deletes FILE.
pub const DELETE_SCRIPT: &str = r#"set -e
if [ -e "$1" ]; then cp -p -- "$1" "$1.$2.bak"; rm -f -- "$1"; fi"#;

/// A script run as `sh -c SCRIPT lidguard-wsl`: prints the variables that locate the agents'
/// configs inside the distro, one `NAME=value` per line (empty when unset).
pub const ENV_SCRIPT: &str = r#"for v in HOME XDG_CONFIG_HOME CLAUDE_CONFIG_DIR CODEX_HOME COPILOT_HOME OPENCODE_CONFIG_DIR GEMINI_CLI_HOME; do eval "printf '%s=%s\n' $v \"\${$v:-}\""; done"#;

/// `NAME=value` lines (as [`ENV_SCRIPT`] prints them) as a lookup.
pub fn parse_env(text: &str) -> impl Fn(&str) -> Option<std::ffi::OsString> + '_ {
    move |name: &str| {
        text.lines().find_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key == name && !value.is_empty()).then(|| value.into())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The scripts run for real in `sh` here (Linux): read, write with backup and mode kept,
    /// write through a symlink, delete with backup.
    #[cfg(unix)]
    #[test]
    fn scripts_behave_in_a_real_shell() {
        use std::io::Write;
        use std::os::unix::fs::PermissionsExt;
        use std::process::{Command, Stdio};
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cfg/settings.json");
        let sh = |script: &str, args: &[&str], stdin: &[u8]| {
            let mut child = Command::new("sh")
                .args(["-c", script, "lidguard-wsl"])
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(stdin).unwrap();
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
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
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
        assert_eq!(env.lines().count(), 7, "{env}");
    }
}
