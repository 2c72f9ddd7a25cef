//! Building the executables for a target, and the documents every archive carries.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, bail};

use crate::target::Target;
use crate::{Dist, run};

/// What every archive carries besides the executables: (path inside the archive, bytes).
pub(crate) struct Docs {
    pub files: Vec<(String, Vec<u8>)>,
    /// The manual page, `man/lidguard.1`.
    pub man: Vec<u8>,
    /// Shell completions: (shell, file name, text).
    pub completions: Vec<(&'static str, &'static str, Vec<u8>)>,
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// The man page and completions from this host's `lidguard` (a debug build: the text does not
/// depend on the profile), and the README and licences.
pub(crate) fn docs(dist: &Dist) -> anyhow::Result<Docs> {
    run(cargo().current_dir(&dist.root).args([
        "build", "--quiet", "--locked", "-p", "lidguard", "--bin", "lidguard",
    ]))?;
    let exe = dist
        .root
        .join("target/debug")
        .join(format!("lidguard{}", std::env::consts::EXE_SUFFIX));
    let output = |args: &[&str]| -> anyhow::Result<Vec<u8>> {
        let out = Command::new(&exe)
            .args(args)
            .output()
            .with_context(|| format!("cannot run {}", exe.display()))?;
        if !out.status.success() {
            bail!(
                "lidguard {args:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(out.stdout)
    };
    let mut completions = Vec::new();
    for (shell, file) in [
        ("bash", "lidguard.bash"),
        ("zsh", "_lidguard"),
        ("fish", "lidguard.fish"),
        ("powershell", "_lidguard.ps1"),
        ("elvish", "lidguard.elv"),
    ] {
        completions.push((shell, file, output(&["completions", shell])?));
    }
    let mut files = Vec::new();
    for name in ["README.md", "LICENSE-MIT", "LICENSE-APACHE"] {
        let path = dist.root.join(name);
        files.push((
            name.to_owned(),
            std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?,
        ));
    }
    Ok(Docs {
        files,
        man: output(&["man"])?,
        completions,
    })
}

/// The executables a target's archive carries: `lidguard` and `lidguard-hook`, and on Windows
/// `lidguard-tray` (the GUI-subsystem program the tray's Run key entry names, so no console
/// window opens at login).
fn bins(target: Target) -> &'static [&'static str] {
    if target.is_windows() {
        &["lidguard", "lidguard-hook", "lidguard-tray"]
    } else {
        &["lidguard", "lidguard-hook"]
    }
}

/// Builds the executables of `target` ([`bins`]) with `profile`; returns their paths.
pub(crate) fn executables(
    dist: &Dist,
    target: Target,
    profile: &str,
) -> anyhow::Result<Vec<PathBuf>> {
    let dir = match target {
        Target::MacUniversal => {
            let parts = [Target::MacX64, Target::MacArm64]
                .map(|t| executables(dist, t, profile))
                .into_iter()
                .collect::<anyhow::Result<Vec<_>>>()?;
            let dir = dist
                .root
                .join("target/universal-apple-darwin")
                .join(profile);
            std::fs::create_dir_all(&dir)?;
            for (i, name) in bins(target).iter().enumerate() {
                run(Command::new("lipo")
                    .arg("-create")
                    .arg("-output")
                    .arg(dir.join(name))
                    .args(parts.iter().map(|p| &p[i])))?;
            }
            return Ok(names(&dir, target));
        }
        _ => dist.root.join("target").join(target.triple()).join(profile),
    };
    let mut cmd = if target.is_linux() {
        // Static musl executables, linked by zig (`pip install cargo-zigbuild ziglang`).
        let mut cmd = Command::new("cargo-zigbuild");
        cmd.arg("build");
        cmd
    } else {
        let mut cmd = cargo();
        cmd.arg("build");
        cmd
    };
    cmd.current_dir(&dist.root).args([
        "--locked",
        "--profile",
        profile,
        "--target",
        target.triple(),
        "-p",
        "lidguard",
    ]);
    for bin in bins(target) {
        cmd.args(["--bin", bin]);
    }
    run(&mut cmd).with_context(|| {
        if target.is_linux() {
            format!(
                "the Linux builds need the target's standard library (rustup target add {}) \
                 and cargo-zigbuild and zig on PATH (python3 -m pip install cargo-zigbuild \
                 ziglang)",
                target.triple()
            )
        } else if target.is_windows() {
            "the Windows build needs the x86_64-pc-windows-gnu target and mingw-w64 \
             (rustup target add x86_64-pc-windows-gnu; apt install gcc-mingw-w64-x86-64)"
                .to_owned()
        } else {
            "the Mac builds run on a Mac with both Apple targets added".to_owned()
        }
    })?;
    Ok(names(&dir, target))
}

fn names(dir: &std::path::Path, target: Target) -> Vec<PathBuf> {
    bins(target)
        .iter()
        .map(|n| dir.join(format!("{n}{}", target.exe_suffix())))
        .collect()
}
