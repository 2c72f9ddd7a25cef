//! The targets a release is built for, and what each means for its packages.

use anyhow::bail;

/// A release target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    LinuxX64,
    LinuxArm64,
    WindowsX64,
    MacX64,
    MacArm64,
    /// Both Mac architectures in one executable (`lipo`, on a Mac).
    MacUniversal,
}

impl Target {
    pub(crate) fn parse(name: &str) -> anyhow::Result<Target> {
        Ok(match name {
            "x86_64-unknown-linux-musl" => Target::LinuxX64,
            "aarch64-unknown-linux-musl" => Target::LinuxArm64,
            "x86_64-pc-windows-gnu" => Target::WindowsX64,
            "x86_64-apple-darwin" => Target::MacX64,
            "aarch64-apple-darwin" => Target::MacArm64,
            "universal-apple-darwin" => Target::MacUniversal,
            other => bail!(
                "unknown target {other}: use x86_64-unknown-linux-musl, \
                 aarch64-unknown-linux-musl, x86_64-pc-windows-gnu, x86_64-apple-darwin, \
                 aarch64-apple-darwin or universal-apple-darwin"
            ),
        })
    }

    /// The name in archive names (the Rust triple; `universal-apple-darwin` for both Macs).
    pub(crate) fn triple(self) -> &'static str {
        match self {
            Target::LinuxX64 => "x86_64-unknown-linux-musl",
            Target::LinuxArm64 => "aarch64-unknown-linux-musl",
            Target::WindowsX64 => "x86_64-pc-windows-gnu",
            Target::MacX64 => "x86_64-apple-darwin",
            Target::MacArm64 => "aarch64-apple-darwin",
            Target::MacUniversal => "universal-apple-darwin",
        }
    }

    pub(crate) fn is_linux(self) -> bool {
        matches!(self, Target::LinuxX64 | Target::LinuxArm64)
    }

    pub(crate) fn is_windows(self) -> bool {
        self == Target::WindowsX64
    }

    pub(crate) fn exe_suffix(self) -> &'static str {
        if self.is_windows() { ".exe" } else { "" }
    }

    /// `.zip` for Windows (what Scoop and winget unpack), `.tar.gz` elsewhere.
    pub(crate) fn archive_suffix(self) -> &'static str {
        if self.is_windows() { ".zip" } else { ".tar.gz" }
    }

    /// npm's `process.platform` and `process.arch` values this target runs on.
    pub(crate) fn npm_platform(self) -> (&'static str, &'static [&'static str]) {
        match self {
            Target::LinuxX64 => ("linux", &["x64"]),
            Target::LinuxArm64 => ("linux", &["arm64"]),
            Target::WindowsX64 => ("win32", &["x64"]),
            Target::MacX64 => ("darwin", &["x64"]),
            Target::MacArm64 => ("darwin", &["arm64"]),
            Target::MacUniversal => ("darwin", &["x64", "arm64"]),
        }
    }

    /// The per-platform npm package carrying this target's executables.
    pub(crate) fn npm_package(self) -> &'static str {
        match self {
            Target::LinuxX64 => "@lidguard/linux-x64",
            Target::LinuxArm64 => "@lidguard/linux-arm64",
            Target::WindowsX64 => "@lidguard/win32-x64",
            Target::MacX64 => "@lidguard/darwin-x64",
            Target::MacArm64 => "@lidguard/darwin-arm64",
            Target::MacUniversal => "@lidguard/darwin-universal",
        }
    }

    /// Debian's name for the architecture.
    pub(crate) fn deb_arch(self) -> Option<&'static str> {
        match self {
            Target::LinuxX64 => Some("amd64"),
            Target::LinuxArm64 => Some("arm64"),
            _ => None,
        }
    }
}
