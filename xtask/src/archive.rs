//! The per-target archive: `lidguard-<version>-<target>/` holding the executables, the man page,
//! the completions, the README and the licences. Entries carry fixed times and owners, so the
//! same build gives the same bytes.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::build::Docs;
use crate::target::Target;
use crate::{Dist, file_name};

/// One file of an archive or package: its path inside, its bytes, whether it is executable.
pub(crate) struct Entry {
    pub path: String,
    pub bytes: Vec<u8>,
    pub executable: bool,
}

/// The archive's entries, under `prefix/`.
pub(crate) fn entries(
    prefix: &str,
    executables: &[PathBuf],
    docs: &Docs,
) -> anyhow::Result<Vec<Entry>> {
    let mut out = Vec::new();
    for exe in executables {
        out.push(Entry {
            path: format!("{prefix}/{}", file_name(exe)),
            bytes: std::fs::read(exe).with_context(|| format!("cannot read {}", exe.display()))?,
            executable: true,
        });
    }
    for (name, bytes) in &docs.files {
        out.push(Entry {
            path: format!("{prefix}/{name}"),
            bytes: bytes.clone(),
            executable: false,
        });
    }
    out.push(Entry {
        path: format!("{prefix}/man/lidguard.1"),
        bytes: docs.man.clone(),
        executable: false,
    });
    for (_, name, bytes) in &docs.completions {
        out.push(Entry {
            path: format!("{prefix}/completions/{name}"),
            bytes: bytes.clone(),
            executable: false,
        });
    }
    Ok(out)
}

/// Writes the archive of `target` into `target/dist`; returns its path.
pub(crate) fn write(
    dist: &Dist,
    target: Target,
    executables: &[PathBuf],
    docs: &Docs,
) -> anyhow::Result<PathBuf> {
    let stem = format!("lidguard-{}-{}", dist.version, target.triple());
    let path = dist.out.join(format!("{stem}{}", target.archive_suffix()));
    let entries = entries(&stem, executables, docs)?;
    if target.is_windows() {
        write_zip(&path, &entries)?;
    } else {
        std::fs::write(&path, tar_gz(&entries)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(path)
}

/// A gzip-compressed tar of `entries` (owner root, time 0, mode 755 or 644); entries ending in
/// `/` are directories.
pub(crate) fn tar_gz(entries: &[Entry]) -> anyhow::Result<Vec<u8>> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let mut tar = tar::Builder::new(gz);
    for e in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(e.bytes.len() as u64);
        header.set_mode(if e.executable { 0o755 } else { 0o644 });
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        header.set_entry_type(if e.path.ends_with('/') {
            tar::EntryType::Directory
        } else {
            tar::EntryType::Regular
        });
        tar.append_data(&mut header, &e.path, e.bytes.as_slice())?;
    }
    Ok(tar.into_inner()?.finish()?)
}

fn write_zip(path: &Path, entries: &[Entry]) -> anyhow::Result<()> {
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut zip = zip::ZipWriter::new(file);
    for e in entries {
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .last_modified_time(zip::DateTime::default())
            .unix_permissions(if e.executable { 0o755 } else { 0o644 });
        zip.start_file(e.path.as_str(), options)?;
        zip.write_all(&e.bytes)?;
    }
    zip.finish()?.sync_all()?;
    Ok(())
}
