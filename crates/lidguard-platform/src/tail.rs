//! Following an append-only JSONL file (an agent's transcript) without ever reading it whole.
//!
//! [`Tail`] keeps a byte offset and returns only complete lines appended since the last read.
//! It starts near the end of an existing file (the last [`START_WINDOW`] bytes, so recent
//! state such as a pending question is seen), never holds more than one bounded chunk plus a
//! partial line in memory, skips lines longer than [`MAX_LINE`], and starts over from the
//! beginning when the file was truncated or replaced (another inode). A file that does not
//! exist yet is simply empty until it appears.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// How much of an existing file is read when following starts.
pub const START_WINDOW: u64 = 1 << 20;
/// The most read per call; the rest waits for the next call.
pub const CHUNK: usize = 1 << 20;
/// Longer lines are dropped (a transcript record this large is a tool output, not a signal).
pub const MAX_LINE: usize = 1 << 20;

/// Identity of the file being followed, to notice replacement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
}

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    Some(Identity {
        dev: meta.dev(),
        ino: meta.ino(),
    })
}

#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> Option<Identity> {
    None
}

/// What one [`Tail::read`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Appended {
    /// Complete lines, without their newline, in file order.
    pub lines: Vec<String>,
    /// The file grew (also when only a partial line was added).
    pub grew: bool,
    /// The file was truncated or replaced since the last read; reading restarted at 0.
    pub restarted: bool,
}

/// Follows one file.
#[derive(Debug)]
pub struct Tail {
    path: PathBuf,
    offset: u64,
    identity: Option<Identity>,
    /// Bytes after the last newline, waiting for the rest of their line.
    partial: Vec<u8>,
    /// Inside an over-long line: drop bytes until its newline.
    skipping: bool,
    started: bool,
    /// How many times the file was opened to be read.
    reads: u64,
}

impl Tail {
    /// Follows `path` (which may not exist yet). Nothing is read until [`Tail::read`].
    pub fn new(path: impl Into<PathBuf>) -> Tail {
        Tail {
            path: path.into(),
            offset: 0,
            identity: None,
            partial: Vec::new(),
            skipping: false,
            started: false,
            reads: 0,
        }
    }

    /// Whether the file may hold bytes not read yet: it was never read, or its size or identity
    /// differs from what the last read left. One `stat`; the file is not opened.
    pub fn has_news(&self) -> bool {
        match std::fs::metadata(&self.path) {
            Ok(meta) => {
                !self.started || meta.len() != self.offset || identity(&meta) != self.identity
            }
            Err(_) => false,
        }
    }

    /// How many times the file was opened to be read (for tests and status: an idle
    /// transcript must not be read again and again).
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// The file followed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next byte to read.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads what was appended since the last call (at most [`CHUNK`] bytes; call again when
    /// `lines` came back full of data and more may be waiting).
    pub fn read(&mut self) -> io::Result<Appended> {
        self.reads += 1;
        let mut file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Appended::default()),
            Err(e) => return Err(e),
        };
        let meta = file.metadata()?;
        let len = meta.len();
        let id = identity(&meta);
        let mut out = Appended::default();
        if !self.started {
            self.started = true;
            self.identity = id;
            if len > START_WINDOW {
                // Start inside the file: the first (partial) line is dropped.
                self.offset = len - START_WINDOW;
                self.skipping = true;
            }
        } else if id != self.identity || len < self.offset {
            self.identity = id;
            self.offset = 0;
            self.partial.clear();
            self.skipping = false;
            out.restarted = true;
        }
        if len <= self.offset {
            return Ok(out);
        }
        out.grew = true;
        file.seek(SeekFrom::Start(self.offset))?;
        let want = usize::try_from(len - self.offset)
            .unwrap_or(CHUNK)
            .min(CHUNK);
        let mut buf = vec![0; want];
        let got = read_full(&mut file, &mut buf)?;
        buf.truncate(got);
        self.offset += got as u64;
        for piece in buf.split_inclusive(|b| *b == b'\n') {
            let complete = piece.last() == Some(&b'\n');
            let body = if complete {
                &piece[..piece.len() - 1]
            } else {
                piece
            };
            if self.skipping {
                if complete {
                    self.skipping = false;
                }
                continue;
            }
            if self.partial.len() + body.len() > MAX_LINE {
                self.partial.clear();
                self.skipping = !complete;
                continue;
            }
            self.partial.extend_from_slice(body);
            if complete {
                let line = std::mem::take(&mut self.partial);
                let line = String::from_utf8_lossy(&line)
                    .trim_end_matches('\r')
                    .to_owned();
                if !line.trim().is_empty() {
                    out.lines.push(line);
                }
            }
        }
        Ok(out)
    }

    /// Whether more bytes wait beyond what was read (the last read stopped at [`CHUNK`]).
    pub fn behind(&self) -> bool {
        std::fs::metadata(&self.path).is_ok_and(|m| m.len() > self.offset)
    }
}

fn read_full(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn append(path: &Path, text: &str) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    #[test]
    fn complete_lines_only_and_partial_lines_wait() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut tail = Tail::new(&path);
        assert_eq!(
            tail.read().unwrap(),
            Appended::default(),
            "missing file: nothing"
        );
        append(&path, "{\"a\":1}\n{\"b\":");
        let got = tail.read().unwrap();
        assert_eq!(got.lines, ["{\"a\":1}"]);
        assert!(got.grew);
        append(&path, "2}\r\n\n");
        assert!(tail.has_news());
        assert_eq!(tail.read().unwrap().lines, ["{\"b\":2}"]);
        assert!(!tail.has_news(), "everything read: a stat says so");
        assert!(!tail.read().unwrap().grew);
        assert_eq!(tail.reads(), 4);
        std::fs::rename(&path, dir.path().join("old.jsonl")).unwrap();
        std::fs::write(&path, "{}\n").unwrap();
        assert!(tail.has_news(), "another file under the name");
    }

    #[test]
    fn truncation_and_replacement_restart_from_the_beginning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        append(&path, "one\ntwo\n");
        let mut tail = Tail::new(&path);
        assert_eq!(tail.read().unwrap().lines, ["one", "two"]);
        std::fs::write(&path, "x\n").unwrap();
        let got = tail.read().unwrap();
        assert!(got.restarted);
        assert_eq!(got.lines, ["x"]);
        // Rotation: a new file under the same name, even if longer.
        let other = dir.path().join("new.jsonl");
        std::fs::write(&other, "fresh 1\nfresh 2\nfresh 3\n").unwrap();
        std::fs::rename(&other, &path).unwrap();
        let got = tail.read().unwrap();
        assert!(got.restarted);
        assert_eq!(got.lines, ["fresh 1", "fresh 2", "fresh 3"]);
    }

    #[test]
    fn a_large_existing_file_is_entered_near_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.jsonl");
        let f = File::create(&path).unwrap();
        f.set_len(64 * START_WINDOW).unwrap(); // sparse: zeros, no newline
        drop(f);
        append(&path, "\nlast\n");
        let mut tail = Tail::new(&path);
        let got = tail.read().unwrap();
        assert_eq!(got.lines, ["last"]);
        append(&path, "next\n");
        assert_eq!(tail.read().unwrap().lines, ["next"]);
    }

    #[test]
    fn over_long_lines_are_dropped_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut tail = Tail::new(&path);
        append(&path, "a\n");
        assert_eq!(tail.read().unwrap().lines, ["a"]);
        append(&path, &"x".repeat(MAX_LINE + 10));
        let mut lines = Vec::new();
        while tail.behind() {
            lines.extend(tail.read().unwrap().lines);
        }
        append(&path, "yyy\nb\n");
        lines.extend(tail.read().unwrap().lines);
        assert_eq!(lines, ["b"]);
    }
}
