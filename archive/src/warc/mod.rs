//! Web archives in and out: WARC (1.0/1.1, and 0.17 heads; plain or gzip) and WACZ.
//!
//! - [`import_warc`] / [`import_wacz`] read an archive into a new snapshot, streaming: memory is bounded
//!   by a window of unpaired records and small per-payload tables, never by the file (see `import`).
//! - [`export_warc`] / [`export_wacz`] write a snapshot as WARC 1.1 (request, response and revisit
//!   records with payload digests) or as a WACZ (the WARC, a CDXJ index, pages.jsonl, datapackage.json).
//!
//! Why not the `warc` crate: it reads a `.warc.gz` as one multi-member stream, so a damaged member ends
//! the walk and record offsets are lost, and it has no notion of resynchronising after a bad head; both
//! matter for the archives people actually have. The framing itself is small (see `record`). Zip (WACZ),
//! gzip, SHA-1/SHA-256 and base 32 come from well-kept crates.

mod export;
mod http;
mod import;
mod record;

use std::collections::BTreeMap;
use std::io::{Read, Seek};

use snapshots::Store;

use crate::{ArchiveError, ImportOptions};

/// A damaged record: where, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// The file (for a WACZ, `file.wacz!archive/x.warc.gz`).
    pub file: String,
    /// Byte offset of the record (of its gzip member in a compressed file).
    pub offset: u64,
    /// What is wrong.
    pub reason: String,
}

/// Outcome of an import.
#[derive(Debug, Clone, Default)]
pub struct WarcImportReport {
    /// WARC files read (one, or the WACZ's archive members).
    pub warc_files: u64,
    /// Records read.
    pub records: u64,
    /// Records by `WARC-Type`.
    pub record_types: BTreeMap<String, u64>,
    /// Exchanges stored.
    pub imported: u64,
    /// Responses paired with their request record.
    pub paired: u64,
    /// Responses stored with a synthesised GET (no request record found).
    pub without_request: u64,
    /// Request records whose response never came.
    pub requests_without_response: u64,
    /// Revisit records given their original's body.
    pub revisits_resolved: u64,
    /// Revisit records whose original is not in the archive (stored as "body not captured").
    pub revisits_unresolved: u64,
    /// Of the resolved revisits, those whose original came after them in the archive.
    pub revisits_resolved_forward: u64,
    /// Exchanges stored without a body.
    pub body_not_captured: u64,
    /// Request/response/revisit records of non-HTTP URIs (`dns:`, `urn:`, ...), skipped.
    pub skipped_not_http: u64,
    /// Exchanges skipped (URI, reason).
    pub skipped: Vec<(String, String)>,
    /// Damaged records, reported and skipped.
    pub damaged: Vec<Damage>,
}

/// Outcome of an export.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WarcExportReport {
    /// Exchanges in the snapshot.
    pub exchanges: u64,
    /// Response records written.
    pub responses: u64,
    /// Revisit records written (a payload seen before).
    pub revisits: u64,
    /// Request records written.
    pub requests: u64,
    /// Exchanges left out: their body was never captured.
    pub not_captured: u64,
    /// Bytes of WARC written.
    pub bytes: u64,
    /// Pages listed (WACZ).
    pub pages: u64,
}

/// Imports a WARC stream (plain or gzip, sniffed) into a new snapshot. `progress` sees the report as it
/// grows. A store failure or an unreadable input removes the half-made snapshot; damaged records do not.
pub fn import_warc<R: Read>(
    store: &Store,
    reader: R,
    opts: &ImportOptions,
    mut progress: impl FnMut(&WarcImportReport),
) -> Result<WarcImportReport, ArchiveError> {
    import_with(store, opts, |imp| imp.read(reader, &opts.source_file, &mut progress))
}

/// Imports every WARC of a WACZ into a new snapshot.
pub fn import_wacz<R: Read + Seek>(
    store: &Store,
    reader: R,
    opts: &ImportOptions,
    mut progress: impl FnMut(&WarcImportReport),
) -> Result<WarcImportReport, ArchiveError> {
    import_with(store, opts, |imp| import::read_wacz(imp, reader, &opts.source_file, &mut progress))
}

/// One import into a new snapshot: sealed when `read` succeeds, removed when it fails.
fn import_with(
    store: &Store,
    opts: &ImportOptions,
    read: impl FnOnce(&mut import::Importer<'_>) -> Result<(), ArchiveError>,
) -> Result<WarcImportReport, ArchiveError> {
    let mut imp = import::Importer::new(store, opts)?;
    match read(&mut imp) {
        Ok(()) => imp.finish(opts.now_ms),
        Err(e) => {
            imp.abandon(opts.now_ms);
            Err(fill_file(e, &opts.source_file))
        }
    }
}

pub use export::{export_wacz, export_warc, surt};

fn fill_file(e: ArchiveError, file: &str) -> ArchiveError {
    match e {
        ArchiveError::Io { file: f, source } if f.is_empty() => {
            ArchiveError::Io { file: file.to_string(), source }
        }
        other => other,
    }
}
