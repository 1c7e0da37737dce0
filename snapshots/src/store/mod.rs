//! The store: snapshot lifecycle, lookups and maintenance over the [`Kv`] seam.
//!
//! Lifecycle: [`Store::create_snapshot`] writes a manifest in state `recording`; each
//! [`SnapshotWriter::append`] writes the exchange, its two index entries and the updated manifest counts in
//! one atomic batch (with the WAL, so a completed append survives a kill); [`SnapshotWriter::finalize`]
//! marks it `complete` (or `imported`). A writer that is dropped, or a process that dies, leaves the
//! snapshot `recording`; the next writable open marks it `interrupted`, with every completed exchange
//! readable.
//!
//! One writer process at a time: a writable open takes an exclusive lock on `webfreeze.lock` in the store
//! directory (and records its pid and command line there), so a second writer gets
//! [`StoreError::Locked`] at once instead of hanging. Read-only opens take no lock and work beside a writer.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::blob::{BlobReader, BlobTables, BlobWriter};
use crate::format::{
    decode_exchange, decode_manifest, encode_manifest, Counts, Exchange, Manifest, Seed, SnapshotSource,
    SnapshotState,
};
use crate::key::{host_path, parse_hex32, RequestKey};
use crate::kv::{Batch, Kv, Table};
use crate::memory::MemoryKv;
use crate::rocks::RocksKv;
use crate::StoreError;

mod copy;
mod lock;
mod maintenance;
mod migrate;
mod rendered;
pub use rendered::{RenderedPages, RENDERED_TEXT_VERSION};
mod union;
pub use union::UNION_VERSION;
mod writer;

pub use copy::{MergeTarget, Merged, MERGED_FROM_LABEL};
use lock::take_lock;
pub use maintenance::{GcReport, VerifyIssue, VerifyReport};
pub use migrate::MigrateReport;
pub use writer::SnapshotWriter;
use writer::{add_counts, WriterState};

const META_NEXT_ID: &[u8] = b"next_snapshot_id";
const META_STORE_VERSION: &[u8] = b"store_version";
use crate::version::STORE_VERSION;
/// Deletes are applied in batches of this many operations.
const DELETE_BATCH: usize = 1000;

struct Inner {
    kv: Box<dyn Kv>,
    path: Option<PathBuf>,
    read_only: bool,
    /// Held for the store's lifetime: the exclusive lock that makes this the one writer process.
    _lock: Option<File>,
    /// Serialises snapshot creation (id allocation and the name check).
    create: Mutex<()>,
    /// Finished snapshots that passed [`Store::check_snapshot`] in this process (id, exchanges): a
    /// finished snapshot does not change, so a replay of many tasks checks each member of a site union once.
    checked: Mutex<std::collections::HashSet<(u64, u64)>>,
}

/// Handle to a snapshot store. Cheap to clone; all clones share one backend.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.inner.path)
            .field("read_only", &self.inner.read_only)
            .finish()
    }
}

/// What a new snapshot starts with.
#[derive(Debug, Clone)]
pub struct NewSnapshot {
    /// Unique name.
    pub name: String,
    /// Creation time, Unix ms (from the caller's clock).
    pub created_ms: i64,
    /// Determinism seed.
    pub seed: Seed,
    /// Where the data comes from.
    pub source: SnapshotSource,
    /// Free-form labels.
    pub labels: BTreeMap<String, String>,
}

/// Whole-store figures.
#[derive(Debug, Clone, Default)]
pub struct StoreStats {
    /// Number of snapshots.
    pub snapshots: u64,
    /// Number of distinct blobs.
    pub blobs: u64,
    /// Bytes used on disk, as the backend estimates it.
    pub disk_bytes: u64,
}

fn id_prefix(id: u64) -> [u8; 8] {
    id.to_be_bytes()
}

fn exchange_key(id: u64, seq: u64) -> Vec<u8> {
    [id.to_be_bytes(), seq.to_be_bytes()].concat()
}

fn index_key(id: u64, digest: &[u8; 32], seq: u64) -> Vec<u8> {
    let mut k = Vec::with_capacity(48);
    k.extend_from_slice(&id.to_be_bytes());
    k.extend_from_slice(digest);
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// The digest of a URL's host and path (without the query) that the path index is keyed by.
pub fn path_digest(url: &str) -> [u8; 32] {
    let hp = host_path(url).unwrap_or_else(|_| url.to_string());
    *blake3::hash(hp.as_bytes()).as_bytes()
}

fn seq_of_index_key(k: &[u8]) -> Option<u64> {
    let tail: [u8; 8] = k.get(k.len().checked_sub(8)?..)?.try_into().ok()?;
    Some(u64::from_be_bytes(tail))
}

fn validate_name(name: &str) -> Result<(), StoreError> {
    if name.is_empty() || name.chars().count() > 200 || name.chars().any(char::is_control) {
        return Err(StoreError::InvalidName(name.to_string()));
    }
    Ok(())
}

impl Store {
    /// Open (creating if needed) the store at `dir` for writing. Fails fast with [`StoreError::Locked`] if
    /// another process has it open for writing. Snapshots left `recording` by a dead writer become
    /// `interrupted`.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| StoreError::io(format!("cannot create store directory {}", dir.display()), e))?;
        let lock = take_lock(dir)?;
        let kv = RocksKv::open(dir, false)?;
        let store = Self::from_parts(Box::new(kv), Some(dir.to_path_buf()), false, Some(lock));
        store.init_meta()?;
        store.recover_interrupted()?;
        Ok(store)
    }

    /// Open an existing store read-only. Works while a writer process runs; sees what it had written at
    /// open time.
    pub fn open_read_only(dir: &Path) -> Result<Self, StoreError> {
        if !dir.join("CURRENT").exists() {
            return Err(StoreError::Open {
                path: dir.to_path_buf(),
                detail: "no store here (import or record a snapshot first, or pass --store)".into(),
            });
        }
        let kv = RocksKv::open(dir, true)?;
        Ok(Self::from_parts(Box::new(kv), Some(dir.to_path_buf()), true, None))
    }

    /// A store that lives in memory only: the twin of the RocksDB store, for tests and scratch work.
    pub fn in_memory() -> Self {
        let s = Self::from_parts(Box::new(MemoryKv::default()), None, false, None);
        // The in-memory backend cannot fail these writes.
        let _ = s.init_meta();
        s
    }

    fn from_parts(kv: Box<dyn Kv>, path: Option<PathBuf>, read_only: bool, lock: Option<File>) -> Self {
        Self {
            inner: Arc::new(Inner {
                kv,
                path,
                read_only,
                _lock: lock,
                create: Mutex::new(()),
                checked: Mutex::default(),
            }),
        }
    }

    pub(crate) fn kv(&self) -> &dyn Kv {
        self.inner.kv.as_ref()
    }

    pub(crate) fn check_writable(&self) -> Result<(), StoreError> {
        if self.inner.read_only {
            Err(StoreError::ReadOnly)
        } else {
            Ok(())
        }
    }

    /// The store directory (None for an in-memory store).
    pub fn path(&self) -> Option<&Path> {
        self.inner.path.as_deref()
    }

    fn init_meta(&self) -> Result<(), StoreError> {
        match self.kv().get(Table::Meta, META_STORE_VERSION)? {
            None => {
                let mut b = Batch::default();
                b.put(Table::Meta, META_STORE_VERSION, STORE_VERSION.to_be_bytes().to_vec());
                self.kv().write(b)
            }
            Some(v) => {
                let found = v.get(..4).and_then(|s| s.try_into().ok()).map(u32::from_be_bytes).unwrap_or(0);
                if found > STORE_VERSION {
                    Err(StoreError::NewerFormat { what: "store", found, supported: STORE_VERSION })
                } else {
                    Ok(())
                }
            }
        }
    }

    fn recover_interrupted(&self) -> Result<(), StoreError> {
        for m in self.manifests()? {
            if m.state == SnapshotState::Recording {
                let mut m = m;
                m.counts = self.count_exchanges(m.id)?;
                m.state = SnapshotState::Interrupted;
                let mut b = Batch::default();
                b.put(Table::Manifests, m.name.as_bytes().to_vec(), encode_manifest(&m));
                self.kv().write(b)?;
            }
        }
        Ok(())
    }

    fn count_exchanges(&self, id: u64) -> Result<Counts, StoreError> {
        let mut c = Counts::default();
        for item in self.kv().scan_prefix(Table::Exchanges, &id_prefix(id)) {
            let (_, v) = item?;
            if let Ok(x) = decode_exchange(&v) {
                add_counts(&mut c, &x);
            }
        }
        Ok(c)
    }

    /// Start a new snapshot in state `recording`.
    pub fn create_snapshot(&self, new: NewSnapshot) -> Result<SnapshotWriter, StoreError> {
        self.check_writable()?;
        validate_name(&new.name)?;
        let _g = self.inner.create.lock().map_err(|_| StoreError::Backend("lock poisoned".into()))?;
        if self.kv().get(Table::Manifests, new.name.as_bytes())?.is_some() {
            return Err(StoreError::SnapshotExists(new.name));
        }
        let id = match self.kv().get(Table::Meta, META_NEXT_ID)? {
            Some(v) => v.get(..8).and_then(|s| s.try_into().ok()).map(u64::from_be_bytes).unwrap_or(1),
            None => 1,
        };
        let manifest = Manifest {
            name: new.name,
            id,
            state: SnapshotState::Recording,
            created_ms: new.created_ms,
            finished_ms: None,
            seed: new.seed,
            source: new.source,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            counts: Counts::default(),
            labels: new.labels,
            search_index: None,
            rendered_text: None,
            key_version: crate::version::KEY_VERSION,
        };
        let mut b = Batch::default();
        b.put(Table::Meta, META_NEXT_ID, (id + 1).to_be_bytes().to_vec());
        b.put(Table::Manifests, manifest.name.as_bytes().to_vec(), encode_manifest(&manifest));
        self.kv().write(b)?;
        Ok(SnapshotWriter {
            store: self.clone(),
            state: Mutex::new(WriterState { manifest, next_seq: 0, finished: false }),
        })
    }

    /// Every snapshot's manifest, ordered by name.
    pub fn manifests(&self) -> Result<Vec<Manifest>, StoreError> {
        self.kv()
            .scan_prefix(Table::Manifests, b"")
            .map(|r| r.and_then(|(_, v)| decode_manifest(&v)))
            .collect()
    }

    /// The manifests of the snapshots whose names start with `prefix`, ordered by name (one prefix read).
    pub fn manifests_under(&self, prefix: &str) -> Result<Vec<Manifest>, StoreError> {
        self.kv()
            .scan_prefix(Table::Manifests, prefix.as_bytes())
            .map(|r| r.and_then(|(_, v)| decode_manifest(&v)))
            .collect()
    }

    /// One snapshot's manifest.
    pub fn manifest(&self, name: &str) -> Result<Manifest, StoreError> {
        match self.kv().get(Table::Manifests, name.as_bytes())? {
            Some(v) => decode_manifest(&v),
            None => Err(StoreError::SnapshotNotFound(name.to_string())),
        }
    }

    /// A quick consistency check before serving a snapshot: the manifest's exchange count must match the
    /// exchange records and exact-key index entries the store holds for it (keys only, no bodies read).
    /// [`StoreError::Damaged`] otherwise; `snapshots verify` finds the details.
    pub fn check_snapshot(&self, m: &Manifest) -> Result<(), StoreError> {
        if m.key_version != crate::version::KEY_VERSION {
            return Err(StoreError::KeyVersion {
                name: m.name.clone(),
                found: m.key_version,
                current: crate::version::KEY_VERSION,
            });
        }
        let count = |t: Table| -> Result<u64, StoreError> {
            let mut n = 0;
            for item in self.kv().scan_prefix(t, &id_prefix(m.id)) {
                item?;
                n += 1;
            }
            Ok(n)
        };
        // Complete or interrupted: no writer adds to it any more.
        let sealed = m.state != crate::SnapshotState::Recording;
        let memo = (m.id, m.counts.exchanges);
        if sealed && self.inner.checked.lock().is_ok_and(|c| c.contains(&memo)) {
            return Ok(());
        }
        let (exchanges, indexed) = (count(Table::Exchanges)?, count(Table::KeyIndex)?);
        let listed = m.counts.exchanges;
        if exchanges != listed || indexed != listed {
            return Err(StoreError::Damaged { name: m.name.clone(), listed, exchanges, indexed });
        }
        if sealed {
            if let Ok(mut c) = self.inner.checked.lock() {
                c.insert(memo);
            }
        }
        Ok(())
    }

    /// Forget which snapshots passed their check (their records are being changed).
    pub(crate) fn forget_checked(&self) {
        if let Ok(mut c) = self.inner.checked.lock() {
            c.clear();
        }
    }

    /// The host-and-path digests a snapshot holds (its path index, one entry per distinct page address
    /// without the query): what a site union reads once to know which members could answer a request.
    pub fn path_digests(&self, m: &Manifest) -> Result<std::collections::HashSet<[u8; 32]>, StoreError> {
        let mut out = std::collections::HashSet::new();
        for item in self.kv().scan_prefix(Table::PathIndex, &id_prefix(m.id)) {
            let (k, _) = item?;
            if let Some(d) = k.get(8..40).and_then(|d| <[u8; 32]>::try_from(d).ok()) {
                out.insert(d);
            }
        }
        Ok(out)
    }

    /// Every exchange of a snapshot in recorded order, streamed from the store.
    pub fn exchanges<'a>(&'a self, m: &Manifest) -> impl Iterator<Item = Result<Exchange, StoreError>> + 'a {
        self.kv()
            .scan_prefix(Table::Exchanges, &id_prefix(m.id))
            .map(|r| r.and_then(|(_, v)| decode_exchange(&v)))
    }

    /// One exchange by sequence number.
    pub fn exchange(&self, m: &Manifest, seq: u64) -> Result<Option<Exchange>, StoreError> {
        self.kv().get(Table::Exchanges, &exchange_key(m.id, seq))?.map(|v| decode_exchange(&v)).transpose()
    }

    fn exchanges_from_index(
        &self,
        m: &Manifest,
        t: Table,
        prefix: Vec<u8>,
    ) -> Result<Vec<Exchange>, StoreError> {
        let mut out = Vec::new();
        for item in self.kv().scan_prefix(t, &prefix) {
            let (k, _) = item?;
            let seq = seq_of_index_key(&k)
                .ok_or_else(|| StoreError::Corrupt { what: "index", detail: "short key".into() })?;
            if let Some(x) = self.exchange(m, seq)? {
                out.push(x);
            }
        }
        Ok(out)
    }

    /// The sequence numbers of every exchange whose request key digest is `digest`, in recorded order,
    /// from the index alone (no exchange decoded): for keys recorded thousands of times.
    pub fn lookup_seqs(&self, m: &Manifest, digest: &[u8; 32]) -> Result<Vec<u64>, StoreError> {
        fail::fail_point!("store-lookup", |_| crate::fault::hold("store-lookup"));
        let mut p = id_prefix(m.id).to_vec();
        p.extend_from_slice(digest);
        self.kv()
            .scan_prefix(Table::KeyIndex, &p)
            .map(|item| {
                let (k, _) = item?;
                seq_of_index_key(&k)
                    .ok_or_else(|| StoreError::Corrupt { what: "index", detail: "short key".into() })
            })
            .collect()
    }

    /// Every exchange whose request key equals `key`, in recorded order.
    pub fn lookup(&self, m: &Manifest, key: &RequestKey) -> Result<Vec<Exchange>, StoreError> {
        self.lookup_digest(m, &key.digest())
    }

    /// Like [`Store::lookup`], by key digest.
    pub fn lookup_digest(&self, m: &Manifest, digest: &[u8; 32]) -> Result<Vec<Exchange>, StoreError> {
        let mut p = id_prefix(m.id).to_vec();
        p.extend_from_slice(digest);
        self.exchanges_from_index(m, Table::KeyIndex, p)
    }

    /// Every exchange to the same scheme, host, port and path as `url` (any query, any method), in
    /// recorded order: the candidates for fuzzy matching.
    pub fn scan_host_path(&self, m: &Manifest, url: &str) -> Result<Vec<Exchange>, StoreError> {
        let mut p = id_prefix(m.id).to_vec();
        p.extend_from_slice(&path_digest(url));
        self.exchanges_from_index(m, Table::PathIndex, p)
    }

    /// A streaming writer for a new body blob.
    pub fn blob_writer(&self) -> BlobWriter {
        BlobWriter::new(self.clone())
    }

    /// Store a body held in memory.
    pub fn put_blob(&self, body: &[u8]) -> Result<crate::BodyRef, StoreError> {
        let mut w = self.blob_writer();
        w.write(body)?;
        w.finish()
    }

    /// Store a body held in memory, replacing the record (and chunks) its hash names if there is one:
    /// what repairs a damaged blob when its content is made again (a rebuilt search index). Slower than
    /// [`Store::put_blob`], which keeps an existing record unread.
    pub fn put_blob_replacing(&self, body: &[u8]) -> Result<crate::BodyRef, StoreError> {
        let mut w = BlobWriter::overwriting(self.clone());
        w.write(body)?;
        w.finish()
    }

    /// A streaming reader for a stored body, by hex hash.
    pub fn read_blob(&self, hash: &str) -> Result<BlobReader, StoreError> {
        let h = parse_hex32(hash).ok_or_else(|| StoreError::BlobMissing(hash.to_string()))?;
        BlobReader::open(self.clone(), &h)
    }

    /// A stored body, whole, in memory.
    pub fn blob_bytes(&self, hash: &str) -> Result<Vec<u8>, StoreError> {
        self.read_blob(hash)?.read_all()
    }

    /// Rewrite a manifest (labels, seed) of an existing snapshot.
    pub fn put_manifest(&self, m: &Manifest) -> Result<(), StoreError> {
        self.check_writable()?;
        self.manifest(&m.name)?;
        let mut b = Batch::default();
        b.put(Table::Manifests, m.name.as_bytes().to_vec(), encode_manifest(m));
        self.kv().write(b)
    }

    /// Flush everything to disk (compaction-free); used before measuring size.
    pub fn flush(&self) -> Result<(), StoreError> {
        self.kv().flush()
    }

    #[doc(hidden)]
    /// Overwrite a blob record with raw bytes, bypassing every check. For tests of `verify` only.
    pub fn damage_blob_for_tests(&self, hash: &str, raw: &[u8]) -> Result<(), StoreError> {
        let h = parse_hex32(hash).ok_or_else(|| StoreError::BlobMissing(hash.to_string()))?;
        let mut b = Batch::default();
        b.put(Table::Blobs, h.to_vec(), raw.to_vec());
        self.kv().write(b)
    }

    #[doc(hidden)]
    /// Delete a snapshot's exchange records and index entries but not its manifest, as a damaged
    /// database leaves it (tests of [`Store::check_snapshot`]).
    pub fn drop_exchange_records_for_tests(&self, m: &Manifest) -> Result<(), StoreError> {
        self.forget_checked();
        let mut b = Batch::default();
        for t in [Table::Exchanges, Table::KeyIndex] {
            for item in self.kv().scan_prefix(t, &id_prefix(m.id)) {
                b.delete(t, item?.0);
            }
        }
        self.kv().write(b)
    }

    #[doc(hidden)]
    /// The raw blob record, for tests that damage it.
    pub fn raw_blob_for_tests(&self, hash: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let h = parse_hex32(hash).ok_or_else(|| StoreError::BlobMissing(hash.to_string()))?;
        self.kv().get(Table::Blobs, &h)
    }
}

/// Blobs are read and written through the store that holds them.
impl BlobTables for Store {
    fn kv(&self) -> &dyn Kv {
        Store::kv(self)
    }

    fn check_writable(&self) -> Result<(), StoreError> {
        Store::check_writable(self)
    }
}
