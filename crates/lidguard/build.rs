//! Link settings for the hook executable, which every agent starts on every event.
//!
//! On Linux with glibc, built for the machine it runs on (`cargo install` included), the hook is
//! linked statically and position-dependent: no dynamic loader runs, no library is opened or
//! relocated, so it starts faster than a dynamically linked `/bin/true` (the hook benchmark), and
//! it is the static executable `lidguard ssh --install` copies to another host and containers
//! mount. Cargo has no per-executable target features, so `-C target-feature=+crt-static` (which
//! would apply to `lidguard` and, without `--target`, to the proc macros too) is not available;
//! this does for this one link what crt-static does: the static archives of the C libraries rustc
//! names are found before the shared ones (a folder of links to them, searched first), the
//! unwinder's static `gcc_eh` stands in for the shared `gcc_s`, and `-static -no-pie` gives the
//! start files without a dynamic loader. Where the archives are not installed (glibc's static
//! libraries are a separate package on some distributions) the hook is linked dynamically, with
//! a warning saying which package to add.
//!
//! The static musl build (`cargo xtask dist`) keeps its target's default (static-pie): `-no-pie`
//! with musl's static-pie start files crashes at start.
#![allow(
    clippy::disallowed_methods,
    reason = "a build script reads Cargo's environment and writes its own output folder"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The C libraries rustc links a glibc executable with (`-l…` after `-Bdynamic` in its link
/// line), each with the static archive that provides it.
const ARCHIVES: [(&str, &str); 7] = [
    ("c", "libc.a"),
    ("gcc_s", "libgcc_eh.a"),
    ("util", "libutil.a"),
    ("rt", "librt.a"),
    ("pthread", "libpthread.a"),
    ("m", "libm.a"),
    ("dl", "libdl.a"),
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" {
        return;
    }
    let native = var("TARGET") == var("HOST");
    let linker = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".to_owned());
    let out = PathBuf::from(var("OUT_DIR")).join("static-libs");
    match native.then(|| static_archives(&linker, &out)) {
        Some(Ok(())) => {
            for arg in [
                &format!("-L{}", out.display()),
                "-static",
                "-no-pie",
                // Nothing to make read-only after start in a process this short: one system
                // call less.
                "-Wl,-z,norelro",
                // GNU ld reads archives in order: libc's soft-float helpers come from libgcc.
                "-Wl,--start-group",
                "-lc",
                "-lgcc",
                "-lgcc_eh",
                "-Wl,--end-group",
            ] {
                println!("cargo:rustc-link-arg-bin=lidguard-hook={arg}");
            }
        }
        Some(Err(missing)) => {
            println!(
                "cargo:warning=lidguard-hook is linked dynamically: {missing} is not installed \
                 (install glibc's static libraries, e.g. glibc-static or libc6-dev, for the \
                 static hook that `lidguard ssh --install` and containers take)"
            );
            println!("cargo:rustc-link-arg-bin=lidguard-hook=-no-pie");
        }
        // A cross build: this machine's archives are not the target's.
        None => println!("cargo:rustc-link-arg-bin=lidguard-hook=-no-pie"),
    }
}

/// Fills `out` with links named as rustc asks for each library, to the linker's static
/// archives. `Err` names the first archive the linker does not have.
fn static_archives(linker: &str, out: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(out);
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    for (name, archive) in ARCHIVES {
        // `cc -print-file-name=X` prints the path of X in its library search, or X itself
        // when it has none.
        let found = Command::new(linker)
            .arg(format!("-print-file-name={archive}"))
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .map(|s| PathBuf::from(s.trim()))
            .filter(|p| p.is_absolute() && p.is_file())
            .ok_or_else(|| archive.to_owned())?;
        link(&found, &out.join(format!("lib{name}.a")))?;
    }
    Ok(())
}

#[cfg(unix)]
fn link(target: &Path, at: &Path) -> Result<(), String> {
    std::os::unix::fs::symlink(target, at).map_err(|e| format!("{}: {e}", at.display()))
}

#[cfg(not(unix))]
fn link(target: &Path, at: &Path) -> Result<(), String> {
    std::fs::copy(target, at)
        .map(drop)
        .map_err(|e| format!("{}: {e}", at.display()))
}
