//! `cargo xtask dist`: lidguard's release artifacts in `target/dist/` — an archive per target,
//! `SHA256SUMS`, the npm packages, a `.deb` per Linux target, and the Homebrew, Scoop and winget
//! manifests carrying the archives' checksums. What each holds: `xtask/README.md`.
#![allow(
    clippy::disallowed_methods,
    clippy::print_stdout,
    reason = "a build tool: it writes its own output tree under target/dist, reads cargo's \
              variables and reports on stdout"
)]

mod archive;
mod build;
mod deb;
mod manifests;
mod npm;
mod target;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Parser;
use sha2::Digest;

use crate::target::Target;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "lidguard's build tasks")]
enum Task {
    /// Build the release artifacts into target/dist/.
    Dist(DistArgs),
    /// Write the Homebrew, Scoop and winget manifests for the release archives in DIR (the
    /// release job joins the Linux, Windows and macOS runs' archives this way), into DIR.
    Manifests {
        /// The directory holding `lidguard-<version>-<target>.tar.gz|zip`.
        dir: PathBuf,
        /// Where the release archives will be downloaded from.
        #[arg(long, value_name = "URL")]
        release_url: Option<String>,
    },
}

#[derive(clap::Args)]
struct DistArgs {
    /// A target to build (repeatable): x86_64-unknown-linux-musl, aarch64-unknown-linux-musl,
    /// x86_64-pc-windows-gnu, x86_64-apple-darwin, aarch64-apple-darwin, universal-apple-darwin.
    /// Default: the two Linux targets and Windows.
    #[arg(long = "target", value_name = "T")]
    targets: Vec<String>,
    /// The cargo profile (`release-lto`: fat LTO, what releases use; `release` builds faster;
    /// `dist-check`, faster still, is what CI checks the artifacts with).
    #[arg(long, default_value = "release-lto")]
    profile: String,
    /// Where the release archives will be downloaded from (the manifests name it).
    #[arg(long, value_name = "URL")]
    release_url: Option<String>,
}

/// What lidguard is, in the packages' metadata.
pub(crate) const DESCRIPTION: &str =
    "Keeps a laptop awake, lid closed included, exactly while AI coding agents work.";

/// What every archive and package is built from.
pub(crate) struct Dist {
    /// The workspace root.
    pub root: PathBuf,
    /// `target/dist`.
    pub out: PathBuf,
    /// The version of every crate in the workspace.
    pub version: String,
    /// The base URL the archives are downloaded from.
    pub release_url: String,
}

/// One built target: its executables and the archive made of them.
pub(crate) struct Built {
    pub target: Target,
    /// `lidguard` and `lidguard-hook` (with `.exe` and `lidguard-tray.exe` on Windows).
    pub executables: Vec<PathBuf>,
    /// The archive file, inside `target/dist`.
    pub archive: PathBuf,
    /// Its SHA-256, lower-case hex.
    pub sha256: String,
}

fn main() -> anyhow::Result<()> {
    match Task::parse() {
        Task::Dist(args) => dist(&args),
        Task::Manifests { dir, release_url } => {
            let version = env!("CARGO_PKG_VERSION").to_owned();
            let dist = Dist {
                root: root()?,
                out: dir.clone(),
                release_url: release_url.unwrap_or_else(|| default_release_url(&version)),
                version,
            };
            let mut built = Vec::new();
            for entry in std::fs::read_dir(&dir)? {
                let archive = entry?.path();
                let name = file_name(&archive);
                let Some(triple) = name
                    .strip_prefix(&format!("lidguard-{}-", dist.version))
                    .and_then(|t| t.strip_suffix(".tar.gz").or_else(|| t.strip_suffix(".zip")))
                else {
                    continue;
                };
                built.push(Built {
                    target: Target::parse(triple)?,
                    executables: Vec::new(),
                    sha256: sha256_file(&archive)?,
                    archive,
                });
            }
            if built.is_empty() {
                bail!(
                    "no lidguard-{}-<target> archive in {}",
                    dist.version,
                    dir.display()
                );
            }
            manifests::write(&dist, &built)
        }
    }
}

fn root() -> anyhow::Result<PathBuf> {
    Ok(Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("xtask is not inside the workspace")?
        .to_path_buf())
}

fn default_release_url(version: &str) -> String {
    format!(
        "{}/releases/download/v{version}",
        env!("CARGO_PKG_REPOSITORY")
    )
}

fn dist(args: &DistArgs) -> anyhow::Result<()> {
    let root = root()?;
    let names = if args.targets.is_empty() {
        vec![
            "x86_64-unknown-linux-musl".to_owned(),
            "aarch64-unknown-linux-musl".to_owned(),
            "x86_64-pc-windows-gnu".to_owned(),
        ]
    } else {
        args.targets.clone()
    };
    let targets = names
        .iter()
        .map(|n| Target::parse(n))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let version = env!("CARGO_PKG_VERSION").to_owned();
    let release_url = args
        .release_url
        .clone()
        .unwrap_or_else(|| default_release_url(&version));
    let dist = Dist {
        out: root.join("target/dist"),
        root,
        version,
        release_url,
    };
    if dist.out.exists() {
        std::fs::remove_dir_all(&dist.out)
            .with_context(|| format!("cannot clear {}", dist.out.display()))?;
    }
    std::fs::create_dir_all(&dist.out)?;

    let docs = build::docs(&dist)?;
    let mut built = Vec::new();
    for target in targets {
        let executables = build::executables(&dist, target, &args.profile)?;
        let archive = archive::write(&dist, target, &executables, &docs)?;
        let sha256 = sha256_file(&archive)?;
        println!("{}  {}", sha256, file_name(&archive));
        built.push(Built {
            target,
            executables,
            archive,
            sha256,
        });
    }
    let mut sums = String::new();
    for b in &built {
        sums.push_str(&format!("{}  {}\n", b.sha256, file_name(&b.archive)));
    }
    for b in built.iter().filter(|b| b.target.is_linux()) {
        let deb = deb::write(&dist, b, &docs)?;
        sums.push_str(&format!("{}  {}\n", sha256_file(&deb)?, file_name(&deb)));
    }
    for tarball in npm::write(&dist, &built)? {
        sums.push_str(&format!(
            "{}  npm/{}\n",
            sha256_file(&tarball)?,
            file_name(&tarball)
        ));
    }
    manifests::write(&dist, &built)?;
    std::fs::write(dist.out.join("SHA256SUMS"), sums)?;
    println!("release artifacts in {}", dist.out.display());
    Ok(())
}

pub(crate) fn sha256_file(path: &Path) -> anyhow::Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(hex(&sha2::Sha256::digest(&bytes)))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Runs `cmd`, failing with its name when it does not start or does not succeed.
pub(crate) fn run(cmd: &mut std::process::Command) -> anyhow::Result<()> {
    let shown = format!("{cmd:?}");
    let status = cmd
        .status()
        .with_context(|| format!("cannot run {shown}"))?;
    if !status.success() {
        bail!("{shown} failed ({status})");
    }
    Ok(())
}
