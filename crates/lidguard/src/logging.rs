//! Logging to a size-bounded file in the state directory.
//!
//! stdout belongs to command output; logs go to `lidguard.log`, rotated to `lidguard.log.1`
//! when it passes [`MAX_BYTES`], so the two files never hold more than twice that.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use lidguard_ipc::Places;
use tracing_subscriber::EnvFilter;

/// Rotate the log past this size.
pub(crate) const MAX_BYTES: u64 = 4 * 1024 * 1024;

/// Installs the file logger. `LIDGUARD_LOG` sets the filter (default `info`). Without a usable
/// state directory, logging is off: it never stops a command.
pub(crate) fn init(places: &Places, daemon: bool) {
    let Ok(writer) = RotatingFile::open(&places.log_file(), MAX_BYTES) else {
        return;
    };
    let default = if daemon { "info" } else { "warn" };
    let filter =
        EnvFilter::try_from_env("LIDGUARD_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(writer)
        .try_init();
}

/// An append-only file that rotates itself by size. Shared by every thread of the process.
pub(crate) struct RotatingFile {
    path: PathBuf,
    max_bytes: u64,
    state: Mutex<(File, u64)>,
}

impl RotatingFile {
    pub(crate) fn open(path: &Path, max_bytes: u64) -> io::Result<RotatingFile> {
        let file = lidguard_files::private::open_append(path)?;
        let len = file.metadata()?.len();
        Ok(RotatingFile {
            path: path.to_owned(),
            max_bytes,
            state: Mutex::new((file, len)),
        })
    }

    fn write_record(&self, buf: &[u8]) -> io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.1 + buf.len() as u64 > self.max_bytes && state.1 > 0 {
            let mut rotated = self.path.clone().into_os_string();
            rotated.push(".1");
            #[allow(
                clippy::disallowed_methods,
                reason = "rotation moves the whole log aside; nothing is written"
            )]
            std::fs::rename(&self.path, &rotated)?;
            let file = lidguard_files::private::open_append(&self.path)?;
            *state = (file, 0);
        }
        // One write per record: O_APPEND keeps lines from several processes whole.
        state.0.write_all(buf)?;
        state.1 += buf.len() as u64;
        Ok(())
    }
}

/// One record's bytes, written in one piece when dropped.
pub(crate) struct Record<'a> {
    file: &'a RotatingFile,
    buf: Vec<u8>,
}

impl Write for Record<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Record<'_> {
    fn drop(&mut self) {
        if !self.buf.is_empty() {
            // Payload text (tool names, paths, messages) may carry control characters: one
            // record stays one line, and nothing in it can rewrite a terminal showing the log.
            let _ = self
                .file
                .write_record(&lidguard_files::text::log_record(&self.buf));
        }
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for RotatingFile {
    type Writer = Record<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        Record {
            file: self,
            buf: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_past_the_limit_and_keeps_whole_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lidguard.log");
        let file = RotatingFile::open(&path, 100).unwrap();
        for i in 0..30 {
            let mut rec = tracing_subscriber::fmt::MakeWriter::make_writer(&file);
            rec.write_all(format!("record {i:02}\n").as_bytes())
                .unwrap();
        }
        let current = std::fs::read_to_string(&path).unwrap();
        let old = std::fs::read_to_string(dir.path().join("lidguard.log.1")).unwrap();
        assert!(
            current.len() <= 100 && old.len() <= 100,
            "{} {}",
            current.len(),
            old.len()
        );
        assert!(current.ends_with("record 29\n"));
        assert!(
            current
                .lines()
                .chain(old.lines())
                .all(|l| l.starts_with("record ") && l.len() == 9)
        );
    }
}
