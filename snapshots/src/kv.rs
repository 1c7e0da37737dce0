//! The narrow key-value seam under the store: tables, point reads, atomic batches and ordered prefix scans.
//!
//! Two implementations: RocksDB ([`crate::rocks`]) and an in-memory twin ([`crate::memory`]). Store logic
//! is written once against this trait.

use crate::StoreError;

/// The tables (RocksDB column families) of the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Table {
    /// blob hash (32 bytes) -> blob record (inline body or list of chunk hashes).
    Blobs,
    /// chunk hash (32 bytes) -> one compressed chunk of a large body.
    Chunks,
    /// snapshot id (8, BE) + seq (8, BE) -> exchange record.
    Exchanges,
    /// snapshot name (UTF-8) -> manifest record.
    Manifests,
    /// snapshot id + request key digest (32) + seq -> empty: exact-key lookup in recorded order.
    KeyIndex,
    /// snapshot id + host/path digest (32) + seq -> empty: every exchange of one host+path.
    PathIndex,
    /// small store-wide values (next snapshot id, store format version).
    Meta,
    /// derived at seal: the site unions' members and which member holds each host-and-path
    /// (`store::union`). Added after the first stores: a read-only open of a store without it reads it empty.
    Unions,
}

impl Table {
    pub(crate) const ALL: [Table; 8] = [
        Table::Blobs,
        Table::Chunks,
        Table::Exchanges,
        Table::Manifests,
        Table::KeyIndex,
        Table::PathIndex,
        Table::Meta,
        Table::Unions,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Table::Blobs => "blobs",
            Table::Chunks => "chunks",
            Table::Exchanges => "exchanges",
            Table::Manifests => "manifests",
            Table::KeyIndex => "key_index",
            Table::PathIndex => "path_index",
            Table::Meta => "meta",
            Table::Unions => "unions",
        }
    }
}

/// One operation of an atomic batch.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    Put(Table, Vec<u8>, Vec<u8>),
    Delete(Table, Vec<u8>),
    /// Delete every key in [from, to).
    DeleteRange(Table, Vec<u8>, Vec<u8>),
}

/// Operations applied all-or-nothing.
#[derive(Debug, Default, Clone)]
pub(crate) struct Batch(pub(crate) Vec<Op>);

impl Batch {
    pub(crate) fn put(&mut self, t: Table, k: impl Into<Vec<u8>>, v: impl Into<Vec<u8>>) {
        self.0.push(Op::Put(t, k.into(), v.into()));
    }
    pub(crate) fn delete(&mut self, t: Table, k: impl Into<Vec<u8>>) {
        self.0.push(Op::Delete(t, k.into()));
    }
    pub(crate) fn delete_range(&mut self, t: Table, from: Vec<u8>, to: Vec<u8>) {
        self.0.push(Op::DeleteRange(t, from, to));
    }
}

/// A key-value pair yielded by a scan.
pub(crate) type Pair = (Vec<u8>, Vec<u8>);

/// Ordered iterator over a prefix; items may fail (a backend read error).
pub(crate) type Scan<'a> = Box<dyn Iterator<Item = Result<Pair, StoreError>> + 'a>;

/// The storage seam.
pub(crate) trait Kv: Send + Sync {
    fn get(&self, t: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError>;
    fn write(&self, batch: Batch) -> Result<(), StoreError>;
    /// Every pair whose key starts with `prefix`, in key order (an empty prefix scans the table).
    fn scan_prefix<'a>(&'a self, t: Table, prefix: &[u8]) -> Scan<'a>;
    /// Bytes on disk (or in memory) used by the backend, as well as it can tell.
    fn approximate_size(&self) -> u64;
    /// Flush buffered writes to durable storage.
    fn flush(&self) -> Result<(), StoreError>;
}
