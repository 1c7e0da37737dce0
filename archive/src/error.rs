//! The one error type of every archive format's import and export.

use snapshots::StoreError;

/// Errors of an archive import or export (HAR, WARC, WACZ): one type for every format.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The file is not a readable archive at all.
    #[error("{file}: {detail}")]
    Malformed {
        /// The file.
        file: String,
        /// What is wrong.
        detail: String,
    },
    /// Reading or writing failed.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file is none of the formats webfreeze reads.
    #[error("{file} is neither HAR (JSON), WARC nor WACZ; nothing was imported")]
    UnknownFormat {
        /// The file.
        file: String,
    },
    /// The archive held no exchange webfreeze could import (the snapshot is not kept: it would replay as
    /// "everything missed").
    #[error(
        "no exchanges in {file} ({records} records; no HTTP response, resource or revisit record could be imported){}",
        if damaged.is_empty() { String::new() } else { format!("; damaged: {}", damaged.join("; ")) }
    )]
    Empty {
        /// The file.
        file: String,
        /// Records read.
        records: u64,
        /// The first damaged records, where and why.
        damaged: Vec<String>,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<std::io::Error> for ArchiveError {
    fn from(e: std::io::Error) -> Self {
        ArchiveError::Io { file: String::new(), source: e }
    }
}
