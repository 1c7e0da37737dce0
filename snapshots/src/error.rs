//! The store's typed error. Messages name the thing that failed and say what to do next.

use std::path::PathBuf;

/// Everything the store can fail with.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another process holds the store's write lock.
    #[error(
        "the store at {path} is open for writing by another process ({holder}; lock file {lock}). \
         Stop that process, or use a read-only command (list, show, verify, export)"
    )]
    Locked {
        /// The store directory.
        path: PathBuf,
        /// What the lock file says about its holder (pid and command line).
        holder: String,
        /// The lock file itself.
        lock: PathBuf,
    },
    /// The store directory could not be opened.
    #[error("cannot open the store at {path}: {detail}")]
    Open {
        /// The store directory.
        path: PathBuf,
        /// What the backend said.
        detail: String,
    },
    /// A read or write in the storage backend failed.
    #[error("storage backend error: {0}")]
    Backend(String),
    /// A request to be stored cannot be keyed (its URL does not normalise).
    #[error(transparent)]
    Key(#[from] crate::KeyError),
    /// No snapshot by that name.
    #[error(
        "no snapshot named {0:?} in this store; `webfreeze snapshots list` shows the snapshots there are"
    )]
    SnapshotNotFound(String),
    /// A snapshot by that name exists already.
    #[error("a snapshot named {0:?} exists already; choose another name or remove it with `webfreeze snapshots rm`")]
    SnapshotExists(String),
    /// A snapshot name that cannot be used.
    #[error("invalid snapshot name {0:?}: use 1-200 printable characters, no control characters")]
    InvalidName(String),
    /// A stored record does not decode.
    #[error("corrupt {what} record ({detail}); run `webfreeze snapshots verify` to see the damage")]
    Corrupt {
        /// Which kind of record.
        what: &'static str,
        /// What is wrong with it.
        detail: String,
    },
    /// A record written by a newer webfreeze.
    #[error(
        "{what} record has format version {found}, but this webfreeze reads up to version {supported}; \
         upgrade webfreeze to read this store"
    )]
    NewerFormat {
        /// Which kind of record.
        what: &'static str,
        /// Version found in the record.
        found: u32,
        /// Highest version this build reads.
        supported: u32,
    },
    /// A body referenced by an exchange is not in the store.
    #[error("body blob {0} is missing from the store; run `webfreeze snapshots verify`")]
    BlobMissing(String),
    /// A write was attempted on a store opened read-only.
    #[error("the store was opened read-only; this operation needs write access")]
    ReadOnly,
    /// The snapshot is not in a state that allows the operation.
    #[error("snapshot {name:?} is {state}; {what}")]
    BadState {
        /// Snapshot name.
        name: String,
        /// Its current state.
        state: String,
        /// What cannot be done.
        what: &'static str,
    },
    /// A snapshot whose index no longer resolves: its manifest counts more exchanges than the store holds
    /// (a damaged or partly restored database). Replaying it would answer misses for recorded pages.
    #[error(
        "snapshot {name:?} is damaged: its manifest lists {listed} exchanges but the store holds {exchanges} \
         exchange records and {indexed} index entries for it; run `webfreeze snapshots verify {name}` and \
         re-record or re-import it"
    )]
    Damaged {
        /// Snapshot name.
        name: String,
        /// Exchanges the manifest counts.
        listed: u64,
        /// Exchange records found.
        exchanges: u64,
        /// Exact-key index entries found.
        indexed: u64,
    },
    /// A snapshot whose request keys were derived by another version of the key derivation: its exact
    /// hits would silently turn into misses.
    #[error(
        "snapshot {name:?} was recorded with request-key derivation version {found}, and this webfreeze derives \
         version {current}: run `webfreeze snapshots migrate {name}` (re-derives its keys from the recorded \
         requests, then checks every exchange is found by its own key)"
    )]
    KeyVersion {
        /// Snapshot name.
        name: String,
        /// The version it was recorded with.
        found: u32,
        /// This build's.
        current: u32,
    },
    /// An I/O error outside the backend (lock file, import file).
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

impl StoreError {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io { context: context.into(), source }
    }
}
