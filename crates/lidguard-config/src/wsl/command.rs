//! What goes on `wsl.exe`'s command line and into a distro's `sh`: the distro list read back,
//! `--exec` and `wslpath` argument lists, the one program fed on stdin, `env` read back.

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

/// The largest agent config lidguard reads on the far side (a WSL distro, an ssh host): configs
/// are a few kilobytes; anything bigger is not one, and the far side is not trusted to say so.
pub const MAX_CONFIG_BYTES: usize = 1 << 20;

/// The most a command on the far side may print before lidguard stops reading it (a config of
/// [`MAX_CONFIG_BYTES`] and some room).
pub const MAX_OUTPUT_BYTES: usize = 2 << 20;

/// A script run as `sh -c SCRIPT lidguard-wsl FILE`: prints FILE, or nothing with exit 3 when it
/// does not exist (so "missing" and "unreadable" differ), or exit 4 when it is not a regular
/// file (a device, a folder, a pipe: never read); at most [`MAX_CONFIG_BYTES`] and one byte
/// more, so a larger file is seen to be larger without being read whole.
pub const READ_SCRIPT: &str = r#"if [ ! -e "$1" ]; then exit 3; fi
if [ ! -f "$1" ]; then echo "not a regular file" >&2; exit 4; fi
head -c 1048577 -- "$1""#;

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
pub const ENV_SCRIPT: &str = r#"for v in HOME XDG_CONFIG_HOME CLAUDE_CONFIG_DIR CODEX_HOME COPILOT_HOME OPENCODE_CONFIG_DIR GEMINI_CLI_HOME QWEN_HOME KILO_CONFIG_DIR CLINE_DIR; do eval "printf '%s=%s\n' $v \"\${$v:-}\""; done"#;

/// A script run as `sh -c SCRIPT lidguard-wsl FILE` with an executable's bytes on stdin: puts
/// it at FILE (folders made as needed), runnable and readable by the user alone, through a
/// temporary file renamed over FILE.
pub const PUT_EXECUTABLE_SCRIPT: &str = r#"set -e
mkdir -p -- "$(dirname -- "$1")"
umask 077
tmp="$1.lidguard-tmp.$$"
cat > "$tmp"
chmod 700 -- "$tmp"
mv -f -- "$tmp" "$1""#;

/// A script run as `sh -c SCRIPT lidguard-wsl FILE`: deletes FILE, and its folder when that is
/// left empty.
pub const REMOVE_EXECUTABLE_SCRIPT: &str =
    r#"rm -f -- "$1" && { rmdir -- "$(dirname -- "$1")" 2>/dev/null || true; }"#;

/// The program `sh` reads on stdin to run `script` with `args` and `input` as its stdin, for a
/// command line that carries nothing but `sh` itself: the arguments are set with `set --`, each
/// single-quoted; the input travels base64-encoded in a here-document (any bytes, never taken
/// for shell code) and is decoded into the script's stdin (`base64 -d`, coreutils and BusyBox).
/// The script runs in a subshell, so its `exit` or a failure under `set -e` ends only it, and its
/// status is the program's.
pub fn stdin_program(script: &str, args: &[&str], input: &[u8]) -> String {
    use base64::Engine;
    let words: Vec<String> = args.iter().map(|a| sh_quote(a)).collect();
    let encoded = base64::engine::general_purpose::STANDARD.encode(input);
    let mut program = String::from("lidguard_input() {\nbase64 -d <<'LIDGUARD_INPUT'\n");
    for chunk in encoded.as_bytes().chunks(76) {
        program.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        program.push('\n');
    }
    program.push_str("LIDGUARD_INPUT\n}\n");
    program.push_str(&format!("set -- {}\n", words.join(" ")));
    program.push_str("lidguard_input | (\n");
    program.push_str(script);
    program.push_str("\n)\n");
    program
}

/// `NAME=value` lines (as [`ENV_SCRIPT`] prints them) as a lookup.
pub fn parse_env(text: &str) -> impl Fn(&str) -> Option<std::ffi::OsString> + '_ {
    move |name: &str| {
        text.lines().find_map(|line| {
            let (key, value) = line.split_once('=')?;
            (key == name && !value.is_empty()).then(|| value.into())
        })
    }
}

/// `word` single-quoted for a POSIX shell (a `'` inside closes the quote, is escaped, and
/// opens it again).
pub(super) fn sh_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}
