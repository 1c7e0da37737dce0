//! The frozen search index stored beside its snapshot: built when a recording is sealed or imported (or by
//! `webfreeze snapshots search-index`), kept as a content-addressed blob that the manifest names
//! ([`snapshots::DerivedRef`], with [`INDEX_VERSION`]), so a replay that searches reads it instead of
//! re-reading and re-parsing every recorded page.
//!
//! What a replay does with a snapshot's stored index:
//! - present, of this version, whole: used;
//! - absent, of another version, or its blob gone (`gc` of an older webfreeze, a copied snapshot): the
//!   index is derived from the documents in memory, as the stored one would have been, and the log says how
//!   to store it;
//! - damaged (its bytes no longer hash to its name, it does not decode, or it names another snapshot):
//!   refused. The frozen search engine answers 503 with the command that rebuilds it, never a page from a
//!   wrong index.

use serde::{Deserialize, Serialize};
use snapshots::{DerivedRef, Manifest, Store, StoreError};

use super::{documents, SearchIndex, INDEX_VERSION};

/// Why a stored index cannot be used or made.
#[derive(Debug, thiserror::Error)]
pub enum SearchIndexError {
    /// The store could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A snapshot without a stored index could not be read to build one.
    #[error("reading snapshot {snapshot:?} to index it: {source}")]
    Read {
        /// The snapshot.
        snapshot: String,
        /// What the store said.
        #[source]
        source: StoreError,
    },
    /// The stored index is damaged.
    #[error(
        "the frozen search index of snapshot {snapshot:?} is damaged ({detail}); rebuild it with \
         `webfreeze snapshots search-index {snapshot}`"
    )]
    Damaged {
        /// The snapshot whose index it is.
        snapshot: String,
        /// What is wrong.
        detail: String,
    },
}

/// The stored form: the index, and whose it is.
#[derive(Serialize, Deserialize)]
struct Stored {
    v: u32,
    snapshot: String,
    id: u64,
    index: SearchIndex,
}

/// What [`store_index`] made.
#[derive(Debug, Clone)]
pub struct StoredIndex {
    /// The snapshot's manifest, naming the index.
    pub manifest: Manifest,
    /// Documents indexed.
    pub documents: usize,
    /// Size of the stored index (before the store's compression).
    pub bytes: usize,
}

/// Build the index of snapshot `name` from its recorded documents, store it beside it and name it in its
/// manifest (replacing an older one; the old blob is `gc`'s).
pub fn store_index(store: &Store, name: &str) -> Result<StoredIndex, SearchIndexError> {
    let mut m = store.manifest(name)?;
    let index = SearchIndex::build(documents(store, &m)?);
    let documents = index.len();
    let stored = Stored { v: INDEX_VERSION, snapshot: m.name.clone(), id: m.id, index };
    let bytes = serde_json::to_vec(&stored)
        .map_err(|e| SearchIndexError::Damaged { snapshot: m.name.clone(), detail: e.to_string() })?;
    // Replacing: a rebuild is how a damaged index is repaired, and its bytes hash to the damaged record.
    let blob = store.put_blob_replacing(&bytes)?;
    m.search_index = Some(DerivedRef { version: INDEX_VERSION, hash: blob.hash, items: documents as u64 });
    store.put_manifest(&m)?;
    // Written out now: a store left with it in the write-ahead log makes every later open replay the log.
    store.flush()?;
    Ok(StoredIndex { manifest: m, documents, bytes: bytes.len() })
}

/// Snapshots with more exchanges than this get no index when sealed or imported (a whole-site capture:
/// measured, 100,000 exchanges holding 30,000 pages made a 580 MiB index in 68 s); `snapshots
/// search-index` makes one on request, and a replay that searches derives it.
pub const SEAL_INDEX_MAX_EXCHANGES: u64 = 10_000;

/// [`store_index`] for a snapshot just sealed: a failure is logged, not returned (the recording is whole
/// without its index; replay derives it in memory). Large snapshots are left to `snapshots search-index`.
pub fn store_index_after_seal(store: &Store, name: &str) {
    if let Ok(m) = store.manifest(name) {
        if m.counts.exchanges > SEAL_INDEX_MAX_EXCHANGES {
            tracing::info!(
                "{name}: {} exchanges: no search index stored now (`webfreeze snapshots search-index {name}` \
                 stores one; a replay that searches derives it)",
                m.counts.exchanges
            );
            return;
        }
    }
    match store_index(store, name) {
        Ok(s) => tracing::debug!("{name}: search index stored ({} documents)", s.documents),
        Err(e) => tracing::warn!(
            "{name}: the frozen search index was not stored ({e}); replay derives it in memory, or store it \
             with `webfreeze snapshots search-index {name}`"
        ),
    }
}

/// The stored index of `m`, when it has a usable one (see the module docs): `Ok(None)` when replay should
/// derive it, `Err` when it is damaged.
pub fn load_index(store: &Store, m: &Manifest) -> Result<Option<SearchIndex>, SearchIndexError> {
    let Some(r) = &m.search_index else { return Ok(None) };
    if r.version != INDEX_VERSION {
        tracing::info!(
            "{}: its search index is version {} (this webfreeze derives version {INDEX_VERSION}); deriving it \
             in memory (`webfreeze snapshots search-index {}` stores the new one)",
            m.name,
            r.version,
            m.name
        );
        return Ok(None);
    }
    let damaged = |detail: String| SearchIndexError::Damaged { snapshot: m.name.clone(), detail };
    let bytes = match store.blob_bytes(&r.hash) {
        Ok(b) => b,
        Err(StoreError::BlobMissing(_)) => {
            tracing::warn!(
                "{}: its search index blob {} is missing; deriving it in memory (`webfreeze snapshots \
                 search-index {}` stores it again)",
                m.name,
                r.hash,
                m.name
            );
            return Ok(None);
        }
        Err(StoreError::Corrupt { detail, .. }) => return Err(damaged(detail)),
        Err(e) => return Err(e.into()),
    };
    let s: Stored = serde_json::from_slice(&bytes).map_err(|e| damaged(format!("undecodable: {e}")))?;
    if s.v != INDEX_VERSION || s.snapshot != m.name || s.id != m.id || s.index.len() as u64 != r.items {
        return Err(damaged(format!(
            "it is the index of {:?} (id {}, version {}, {} documents), not of this snapshot (id {}, version {}, \
             {} documents)",
            s.snapshot,
            s.id,
            s.v,
            s.index.len(),
            m.id,
            r.version,
            r.items
        )));
    }
    if let Some(d) = s.index.damage() {
        return Err(damaged(d));
    }
    Ok(Some(s.index))
}
