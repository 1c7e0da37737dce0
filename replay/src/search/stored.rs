//! The frozen search index stored beside its snapshot: built when a recording is sealed or imported (or by
//! `webfreeze snapshots search-index`), kept as one content-addressed blob that the manifest names
//! ([`snapshots::DerivedRef`], with [`INDEX_VERSION`]), so a replay that searches reads it instead of
//! re-reading and re-parsing every recorded page. `verify` re-hashes the blob, `gc` keeps it while the
//! manifest names it; a bundle does not carry it (an import derives it again).
//!
//! The blob is a tar archive (the `tar` crate; fixed headers, entries by name, so the same files make the
//! same bytes): first [`HEAD`], a JSON head naming the version, snapshot and document count, then the
//! tantivy index's files under `index/`. Its bytes differ between two builds of the same documents
//! (tantivy names segments by random ids); its answers do not.
//!
//! What a replay does with a snapshot's stored index:
//! - present, of this version, whole: used;
//! - absent, of another version, or its blob gone (`gc` of an older webfreeze, a copied snapshot): the
//!   index is derived from the documents in memory, as the stored one would have been, and the log says how
//!   to store it;
//! - damaged (its bytes no longer hash to its name, it does not decode, or it names another snapshot):
//!   refused. The frozen search engine answers 503 with the command that rebuilds it, never a page from a
//!   wrong index.

use std::io::Read as _;

use serde::{Deserialize, Serialize};
use snapshots::{DerivedRef, Manifest, Store, StoreError};

use super::{documents, SearchIndex, INDEX_VERSION};

/// The head entry of a stored index.
pub const HEAD: &str = "webfreeze-search.json";
/// Where the index's files sit in the archive.
const FILES: &str = "index/";

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
    /// The index engine failed building or opening an index.
    #[error("the frozen search index of snapshot {snapshot:?}: {source}")]
    Engine {
        /// The snapshot.
        snapshot: String,
        /// What tantivy said.
        #[source]
        source: tantivy::TantivyError,
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

/// The stored index's head: whose index it is.
#[derive(Serialize, Deserialize)]
struct Head {
    v: u32,
    snapshot: String,
    id: u64,
    documents: u64,
}

/// The index's files packed as one archive behind `head`.
fn pack(head: &Head, files: IndexFiles) -> Result<Vec<u8>, std::io::Error> {
    let mut tar = tar::Builder::new(Vec::new());
    let mut add = |name: &str, bytes: &[u8]| {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(0);
        h.set_cksum();
        tar.append_data(&mut h, name, bytes)
    };
    add(HEAD, &serde_json::to_vec(head)?)?;
    for (name, bytes) in files {
        add(&format!("{FILES}{name}"), &bytes)?;
    }
    tar.into_inner()
}

/// An index's files: (name, bytes).
type IndexFiles = Vec<(String, Vec<u8>)>;

/// The head and files of a packed index.
fn unpack(bytes: &[u8]) -> Result<(Head, IndexFiles), std::io::Error> {
    let bad = |detail: String| std::io::Error::new(std::io::ErrorKind::InvalidData, detail);
    let mut archive = tar::Archive::new(bytes);
    let mut head = None;
    let mut files = Vec::new();
    for entry in archive.entries()? {
        let mut entry = entry?;
        let name = entry.path()?.to_string_lossy().into_owned();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).map_err(|e| bad(format!("{name}: {e}")))?;
        if name == HEAD && head.is_none() {
            head = Some(serde_json::from_slice::<Head>(&data).map_err(|e| bad(format!("{HEAD}: {e}")))?);
        } else if let Some(file) = name.strip_prefix(FILES).filter(|_| head.is_some()) {
            files.push((file.to_string(), data));
        } else {
            return Err(bad(format!("unexpected entry {name:?}")));
        }
    }
    Ok((head.ok_or_else(|| bad(format!("no {HEAD}: not a webfreeze search index")))?, files))
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
    let engine = |source| SearchIndexError::Engine { snapshot: m.name.clone(), source };
    let index = SearchIndex::build(documents(store, &m)?).map_err(engine)?;
    let documents = index.len();
    let head = Head { v: INDEX_VERSION, snapshot: m.name.clone(), id: m.id, documents: documents as u64 };
    let bytes = pack(&head, index.files().map_err(engine)?)
        .map_err(|e| SearchIndexError::Damaged { snapshot: m.name.clone(), detail: e.to_string() })?;
    // Replacing: a rebuild is how a damaged index is repaired, and its bytes hash to the damaged record.
    let blob = store.put_blob_replacing(&bytes)?;
    m.search_index = Some(DerivedRef { version: INDEX_VERSION, hash: blob.hash, items: documents as u64 });
    store.put_manifest(&m)?;
    // Written out now: a store left with it in the write-ahead log makes every later open replay the log.
    store.flush()?;
    Ok(StoredIndex { manifest: m, documents, bytes: bytes.len() })
}

/// [`store_index`] for a snapshot just sealed: a failure is logged, not returned (the recording is whole
/// without its index; replay derives it in memory). Every snapshot gets one, whatever its size.
pub fn store_index_after_seal(store: &Store, name: &str) {
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
    let (s, files) = unpack(&bytes).map_err(|e| damaged(format!("undecodable: {e}")))?;
    if s.v != INDEX_VERSION || s.snapshot != m.name || s.id != m.id || s.documents != r.items {
        return Err(damaged(format!(
            "it is the index of {:?} (id {}, version {}, {} documents), not of this snapshot (id {}, version {}, \
             {} documents)",
            s.snapshot, s.id, s.v, s.documents, m.id, r.version, r.items
        )));
    }
    let index = SearchIndex::from_files(files).map_err(|e| damaged(e.to_string()))?;
    if index.len() as u64 != s.documents {
        return Err(damaged(format!("{} documents, its head says {}", index.len(), s.documents)));
    }
    Ok(Some(index))
}
