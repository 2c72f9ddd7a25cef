//! The process environment, read in this one place: everything else takes a lookup
//! (`Fn(&str) -> Option<OsString>`), which tests replace with their own.

use std::ffi::OsString;

/// The variable `name` of this process's environment, if it is set (an empty value counts as
/// set; callers that treat it as unset filter it).
#[allow(
    clippy::disallowed_methods,
    reason = "the one place the real environment is read"
)]
pub fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// [`var`] as text, when it is set and valid Unicode.
pub fn text(name: &str) -> Option<String> {
    var(name).and_then(|value| value.into_string().ok())
}

/// macOS's per-user temporary folder, as the system assigns it to this user whatever the
/// environment says: `confstr(_CS_DARWIN_USER_TEMP_DIR)` (what launchd sets `TMPDIR` to for
/// the user's GUI session; a shell over ssh or a launchd job may have another `TMPDIR`, or
/// none). `None` elsewhere, or when the system gives none.
pub fn darwin_user_temp_dir() -> Option<std::path::PathBuf> {
    #[cfg(target_os = "macos")]
    {
        use std::os::unix::ffi::OsStringExt;
        let mut buffer = vec![0_u8; 1024];
        // SAFETY: `buffer` holds `buffer.len()` bytes; confstr writes at most that many,
        // NUL-terminated, and returns the length the value needs, NUL included.
        let needed = unsafe {
            libc::confstr(
                libc::_CS_DARWIN_USER_TEMP_DIR,
                buffer.as_mut_ptr().cast(),
                buffer.len(),
            )
        };
        if needed == 0 || needed > buffer.len() {
            return None;
        }
        buffer.truncate(needed - 1);
        Some(OsString::from_vec(buffer).into())
    }
    #[cfg(not(target_os = "macos"))]
    {
        None
    }
}

/// The user's config folder: `$XDG_CONFIG_HOME` when it is an absolute path, else `~/.config`;
/// `None` without a home directory.
pub fn config_home() -> Option<std::path::PathBuf> {
    var("XDG_CONFIG_HOME")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::home_dir().map(|h| h.join(".config")))
}
