//! The `.deb` of a Linux target: the executables in `/usr/bin`, the man page, the completions,
//! and the systemd user units as plain files (`systemctl --user enable --now lidguard.socket`
//! starts the daemon on the first connection). Built as dpkg reads it: an `ar` archive of
//! `debian-binary`, `control.tar.gz` and `data.tar.gz`.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;

use crate::archive::{Entry, tar_gz};
use crate::build::Docs;
use crate::{Built, Dist, file_name};

const SOCKET_UNIT: &str = "[Unit]\n\
Description=lidguard daemon socket (keeps the machine awake while AI coding agents work)\n\
\n\
[Socket]\n\
ListenStream=%t/lidguard/lidguard.sock\n\
SocketMode=0600\n\
DirectoryMode=0700\n\
\n\
[Install]\n\
WantedBy=sockets.target\n";

const SERVICE_UNIT: &str = "[Unit]\n\
Description=lidguard daemon (keeps the machine awake while AI coding agents work)\n\
Requires=lidguard.socket\n\
After=lidguard.socket\n\
\n\
[Service]\n\
ExecStart=/usr/bin/lidguard run-server\n\
Restart=on-failure\n";

/// Writes `lidguard_<version>_<arch>.deb` for `built` (a Linux target); returns its path.
pub(crate) fn write(dist: &Dist, built: &Built, docs: &Docs) -> anyhow::Result<PathBuf> {
    let arch = built
        .target
        .deb_arch()
        .context("a .deb is built for Linux targets only")?;
    let mut files = Vec::new();
    for exe in &built.executables {
        files.push(Entry {
            path: format!("./usr/bin/{}", file_name(exe)),
            bytes: std::fs::read(exe)?,
            executable: true,
        });
    }
    files.push(Entry {
        path: "./usr/share/man/man1/lidguard.1.gz".to_owned(),
        bytes: gzip(&docs.man)?,
        executable: false,
    });
    for (shell, _, text) in &docs.completions {
        let path = match *shell {
            "bash" => "./usr/share/bash-completion/completions/lidguard",
            "zsh" => "./usr/share/zsh/vendor-completions/_lidguard",
            "fish" => "./usr/share/fish/vendor_completions.d/lidguard.fish",
            _ => continue,
        };
        files.push(Entry {
            path: path.to_owned(),
            bytes: text.clone(),
            executable: false,
        });
    }
    let doc = |name: &str| {
        docs.files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b.clone())
            .unwrap_or_default()
    };
    let mut copyright = format!(
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\
         Upstream-Name: lidguard\nSource: {}\n\nFiles: *\nLicense: MIT or Apache-2.0\n\n",
        env!("CARGO_PKG_REPOSITORY")
    )
    .into_bytes();
    copyright.extend(doc("LICENSE-MIT"));
    for (path, bytes) in [
        ("./usr/share/doc/lidguard/README.md", doc("README.md")),
        ("./usr/share/doc/lidguard/copyright", copyright),
        (
            "./usr/lib/systemd/user/lidguard.socket",
            SOCKET_UNIT.as_bytes().to_vec(),
        ),
        (
            "./usr/lib/systemd/user/lidguard.service",
            SERVICE_UNIT.as_bytes().to_vec(),
        ),
    ] {
        files.push(Entry {
            path: path.to_owned(),
            bytes,
            executable: false,
        });
    }
    let installed_kib = files
        .iter()
        .map(|f| f.bytes.len())
        .sum::<usize>()
        .div_ceil(1024);
    let control = format!(
        "Package: lidguard\n\
         Version: {version}\n\
         Architecture: {arch}\n\
         Maintainer: the lidguard authors <lidguard@example.invalid>\n\
         Installed-Size: {installed_kib}\n\
         Section: utils\n\
         Priority: optional\n\
         Homepage: {home}\n\
         Description: keeps a laptop awake while AI coding agents work\n \
         lidguard keeps the machine awake, lid closed included, exactly while an AI coding\n \
         agent (Claude Code, Codex, Copilot CLI, OpenCode, Gemini CLI, Cursor, Qwen Code,\n \
         Kilo, Cline) works, and lets it sleep when the work ends or waits for you.\n",
        version = dist.version,
        home = env!("CARGO_PKG_REPOSITORY"),
    );
    let data = tar_gz(&with_directories(files))?;
    let control = tar_gz(&[Entry {
        path: "./control".to_owned(),
        bytes: control.into_bytes(),
        executable: false,
    }])?;
    let path = dist
        .out
        .join(format!("lidguard_{}_{arch}.deb", dist.version));
    let file = std::fs::File::create(&path)?;
    let mut ar = ar::Builder::new(file);
    for (name, bytes) in [
        ("debian-binary", b"2.0\n".to_vec()),
        ("control.tar.gz", control),
        ("data.tar.gz", data),
    ] {
        let mut header = ar::Header::new(name.as_bytes().to_vec(), bytes.len() as u64);
        header.set_mode(0o644);
        ar.append(&header, bytes.as_slice())?;
    }
    ar.into_inner()?.sync_all()?;
    Ok(path)
}

/// `files` with an entry for every directory above them (dpkg records each directory a
/// package ships, and removes it again when it is left empty).
fn with_directories(files: Vec<Entry>) -> Vec<Entry> {
    let mut dirs = BTreeSet::new();
    for f in &files {
        let mut path = f.path.as_str();
        while let Some((parent, _)) = path.rsplit_once('/') {
            if parent == "." {
                break;
            }
            dirs.insert(format!("{parent}/"));
            path = parent;
        }
    }
    let mut out: Vec<Entry> = dirs
        .into_iter()
        .map(|path| Entry {
            path,
            bytes: Vec::new(),
            executable: true,
        })
        .collect();
    out.extend(files);
    out
}

fn gzip(bytes: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(bytes)?;
    Ok(gz.finish()?)
}
