//! Web archives in and out of snapshots, one room for every format:
//! - [`har`]: HAR 1.2 (browsers' devtools, Playwright, mitmproxy, Firefox), both ways.
//! - [`warc`]: WARC 1.0/1.1 (and 0.17 heads; plain or gzip) and WACZ, both ways.
//!
//! Every importer has one shape: it reads a stream into a new snapshot named by [`ImportOptions`],
//! reports what it kept and skipped (its own report type, one variant of [`ImportReport`]), and fails with
//! [`ArchiveError`]; a failed import removes its half-made snapshot. [`import_file`] is the entry point of
//! `webfreeze snapshots import` and of any library user: it sniffs the format from the content
//! ([`Format::sniff`]), replaces what an earlier import of the same name left unfinished
//! ([`replace_unfinished_import`]), runs the importer and refuses an import that stored nothing.
//!
//! Adding a format: a module here with `import` (and `export` if it has one) of that shape, a variant of
//! [`Format`] with its sniffing rule and of [`ImportReport`], a fuzz target (`fuzz/fuzz_targets`) and a seed
//! generator (`xtask fuzz-seeds`).

pub mod har;
pub mod warc;

mod error;

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use snapshots::{SnapshotSource, SnapshotState, Store, StoreError};

pub use error::ArchiveError;

/// Options of an import, the same for every format.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// Snapshot name to create.
    pub snapshot: String,
    /// The source file name recorded in the manifest (and named in errors).
    pub source_file: String,
    /// Creation time (caller's clock).
    pub now_ms: i64,
}

/// An archive format webfreeze reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// HAR 1.2 (JSON).
    Har,
    /// WARC, plain or gzip.
    Warc,
    /// WACZ (a zip of WARCs and their indexes).
    Wacz,
}

impl Format {
    /// The format of a file from its first bytes: `WARC/` or a gzip member is WARC, a zip is WACZ, a JSON
    /// object (after a byte-order mark and white space) is HAR; anything else is None.
    pub fn sniff(head: &[u8]) -> Option<Format> {
        let head = head.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(head);
        if head.starts_with(b"WARC/") || head.starts_with(&[0x1f, 0x8b]) {
            Some(Format::Warc)
        } else if head.starts_with(b"PK\x03\x04") {
            Some(Format::Wacz)
        } else if head.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
            Some(Format::Har)
        } else {
            None
        }
    }

    /// Its name, as `--json` reports print it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Har => "har",
            Format::Warc => "warc",
            Format::Wacz => "wacz",
        }
    }
}

/// What an import did, in its format's terms.
#[derive(Debug, Clone)]
pub enum ImportReport {
    /// A HAR import.
    Har(har::ImportReport),
    /// A WARC import.
    Warc(warc::WarcImportReport),
    /// A WACZ import (its WARCs').
    Wacz(warc::WarcImportReport),
}

impl ImportReport {
    /// The format imported.
    pub fn format(&self) -> Format {
        match self {
            ImportReport::Har(_) => Format::Har,
            ImportReport::Warc(_) => Format::Warc,
            ImportReport::Wacz(_) => Format::Wacz,
        }
    }
}

/// An import's progress, for a progress line.
#[derive(Debug, Clone, Copy, Default)]
pub struct Progress {
    /// Bytes of the file read so far (0 for a WACZ, read through its zip directory).
    pub bytes_read: u64,
    /// The file's size.
    pub total_bytes: u64,
    /// Entries (HAR) or records (WARC) read so far.
    pub items: u64,
    /// Exchanges stored so far, where the format knows it as it goes (WARC).
    pub imported: Option<u64>,
}

/// A snapshot of this name that an import left unfinished (killed before sealing: still `recording`, or
/// `interrupted`) is removed, so the same import can simply be run again; returns how many exchanges it
/// held. The caller holds the store's single-writer lock, so no live process can be writing it. A sealed
/// snapshot, or a proxy recording, is left alone (the import then refuses the name).
pub fn replace_unfinished_import(store: &Store, name: &str) -> Result<Option<u64>, StoreError> {
    let Ok(m) = store.manifest(name) else { return Ok(None) };
    let unfinished = matches!(m.state, SnapshotState::Recording | SnapshotState::Interrupted);
    if !unfinished || matches!(m.source, SnapshotSource::Record) {
        return Ok(None);
    }
    store.remove(name)?;
    Ok(Some(m.counts.exchanges))
}

/// What [`import_file`] did.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The importer's report.
    pub report: ImportReport,
    /// The exchanges of an unfinished import of the same name that was replaced, if there was one.
    pub replaced_unfinished: Option<u64>,
}

/// Import `path` (its format sniffed) into the new snapshot `opts.snapshot`, replacing an unfinished
/// import of that name ([`replace_unfinished_import`]) once the file is known to be an archive.
/// `progress` is called as the import goes. An archive that yields no exchange is refused
/// ([`ArchiveError::Empty`]) and leaves nothing: it would replay as "everything missed".
pub fn import_file(
    store: &Store,
    path: &Path,
    opts: &ImportOptions,
    mut progress: impl FnMut(Progress),
) -> Result<Imported, ArchiveError> {
    let io = |e| ArchiveError::Io { file: path.display().to_string(), source: e };
    let f = File::open(path).map_err(io)?;
    let total_bytes = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut f = BufReader::new(f);
    let format = Format::sniff(f.fill_buf().map_err(io)?)
        .ok_or_else(|| ArchiveError::UnknownFormat { file: path.display().to_string() })?;
    let replaced_unfinished = replace_unfinished_import(store, &opts.snapshot)?;
    let read = Arc::new(AtomicU64::new(0));
    let counting = CountingReader { inner: f, counter: read.clone() };
    let at =
        |items, imported| Progress { bytes_read: read.load(Ordering::Relaxed), total_bytes, items, imported };
    let report = match format {
        Format::Har => ImportReport::Har(har::import(store, counting, opts, |n| progress(at(n, None)))?),
        Format::Warc => ImportReport::Warc(warc::import_warc(store, counting, opts, |r| {
            progress(at(r.records, Some(r.imported)))
        })?),
        Format::Wacz => {
            // The zip's entries are read through its central directory: progress counts records only.
            let file = counting.inner;
            ImportReport::Wacz(warc::import_wacz(store, file, opts, |r| {
                progress(at(r.records, Some(r.imported)))
            })?)
        }
    };
    if let ImportReport::Warc(r) | ImportReport::Wacz(r) = &report {
        if r.imported == 0 {
            let _ = store.remove(&opts.snapshot);
            return Err(ArchiveError::Empty {
                file: path.display().to_string(),
                records: r.records,
                damaged: r
                    .damaged
                    .iter()
                    .take(5)
                    .map(|d| format!("{} at offset {}: {}", d.file, d.offset, d.reason))
                    .collect(),
            });
        }
    }
    Ok(Imported { report, replaced_unfinished })
}

/// Counts bytes read, for the progress line.
struct CountingReader<R> {
    inner: R,
    counter: Arc<AtomicU64>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::Format;

    #[test]
    fn formats_are_sniffed_from_the_content() {
        for (head, want) in [
            (&b"WARC/1.1\r\n"[..], Some(Format::Warc)),
            (&[0x1f, 0x8b, 8, 0][..], Some(Format::Warc)),
            (&b"PK\x03\x04rest"[..], Some(Format::Wacz)),
            (&b"{\"log\": {}}"[..], Some(Format::Har)),
            (&b"\xEF\xBB\xBF \n {\"log\""[..], Some(Format::Har)),
            (&b"[1, 2]"[..], None),
            (&b"<html>"[..], None),
            (&b""[..], None),
        ] {
            assert_eq!(Format::sniff(head), want, "{head:?}");
        }
    }
}
