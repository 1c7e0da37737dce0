//! The frozen search index stored beside its snapshot: built when a recording is sealed or imported (or by
//! `webfreeze snapshots search-index`), kept as one content-addressed blob that the manifest names
//! ([`snapshots::DerivedRef`], with [`INDEX_VERSION`]), so a replay that searches reads it instead of
//! re-reading and re-parsing every recorded page. `verify` re-hashes the blob, `gc` keeps it while the
//! manifest names it; a bundle does not carry it (an import derives it again).
//!
//! The blob is a JSON head (version, snapshot, id, document count, and each index file's name and length)
//! after a magic and its length, then the files' bytes in the head's order. Not tar: the task proxy alone
//! compiles no archive crate (`tests/architecture.rs`), and a list of named byte runs needs none. Segments
//! are named by the hash of their files (`index`), so the same documents store the same blob.

use serde::{Deserialize, Serialize};
use snapshots::{DerivedRef, Manifest, Store, StoreError};

use super::{documents, SearchIndex, INDEX_VERSION};

/// The first bytes of a stored index.
const MAGIC: &[u8; 8] = b"WFSEARCH";

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

/// The stored index's head: whose index it is, and its files.
#[derive(Serialize, Deserialize)]
struct Head {
    v: u32,
    snapshot: String,
    id: u64,
    documents: u64,
    /// (name, length) of each file, in the order their bytes follow.
    files: Vec<(String, u64)>,
}

/// An index's files: (name, bytes).
type IndexFiles<B = Vec<u8>> = Vec<(String, B)>;

/// `head` (its file list filled in) and the index's files as one blob.
fn pack(mut head: Head, files: IndexFiles) -> Result<Vec<u8>, serde_json::Error> {
    head.files = files.iter().map(|(n, b)| (n.clone(), b.len() as u64)).collect();
    let h = serde_json::to_vec(&head)?;
    let mut out = Vec::with_capacity(16 + h.len() + files.iter().map(|(_, b)| b.len()).sum::<usize>());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(h.len() as u64).to_le_bytes());
    out.extend_from_slice(&h);
    for (_, b) in files {
        out.extend_from_slice(&b);
    }
    Ok(out)
}

/// The head and files of a packed index (borrowed from `bytes`: an index is not copied to be opened).
fn unpack(bytes: &[u8]) -> Result<(Head, IndexFiles<&[u8]>), std::io::Error> {
    let bad = |detail: String| std::io::Error::new(std::io::ErrorKind::InvalidData, detail);
    let rest =
        bytes.strip_prefix(MAGIC.as_slice()).ok_or_else(|| bad("not a webfreeze search index".into()))?;
    let (len, rest) = rest.split_at_checked(8).ok_or_else(|| bad("cut short in its head".into()))?;
    let len = usize::try_from(u64::from_le_bytes(len.try_into().unwrap_or_default()))
        .map_err(|e| bad(e.to_string()))?;
    let (h, mut rest) = rest.split_at_checked(len).ok_or_else(|| bad("cut short in its head".into()))?;
    let head: Head = serde_json::from_slice(h).map_err(|e| bad(format!("its head: {e}")))?;
    let mut files = Vec::with_capacity(head.files.len());
    for (name, len) in &head.files {
        let n = usize::try_from(*len).map_err(|e| bad(e.to_string()))?;
        let (b, r) = rest.split_at_checked(n).ok_or_else(|| bad(format!("cut short in {name}")))?;
        files.push((name.clone(), b));
        rest = r;
    }
    if !rest.is_empty() {
        return Err(bad(format!("{} bytes after its last file", rest.len())));
    }
    Ok((head, files))
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
    let head = Head {
        v: INDEX_VERSION,
        snapshot: m.name.clone(),
        id: m.id,
        documents: documents as u64,
        files: Vec::new(),
    };
    let bytes = pack(head, index.files().map_err(engine)?)
        .map_err(|e| SearchIndexError::Damaged { snapshot: m.name.clone(), detail: e.to_string() })?;
    // Replacing: a rebuild is how a damaged index is repaired, and its bytes hash to the damaged record.
    let blob = store.put_blob_replacing(&bytes)?;
    m.search_index = Some(DerivedRef { version: INDEX_VERSION, hash: blob.hash, items: documents as u64 });
    store.put_manifest(&m)?;
    // Written out now: a store left with it in the write-ahead log makes every later open replay the log.
    store.flush()?;
    Ok(StoredIndex { manifest: m, documents, bytes: bytes.len() })
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
