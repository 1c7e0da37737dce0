//! Content-addressed bodies, written and read as streams with bounded memory.
//!
//! A blob is keyed by BLAKE3 of the decoded body. Bodies up to [`CHUNK`] bytes are stored inline in one
//! blob record (zstd, or raw when that is not smaller); larger bodies are cut into [`CHUNK`]-sized chunks,
//! each stored under its own BLAKE3, and the blob record lists the chunk hashes. The writer therefore holds
//! at most one chunk in memory whatever the body size, and identical chunks are stored once.
//!
//! Binary layout (not JSON: these are the bulk bytes):
//! - blob record: `[version=1][kind: 0 raw | 1 zstd | 2 chunked][size: u64 BE][inline bytes | 32-byte hashes]`
//! - chunk record: `[version=1][kind: 0 raw | 1 zstd][bytes]`
//!
//! Cancellation: a writer dropped before [`BlobWriter::finish`] may leave chunks behind but never a blob
//! record, so no exchange can reference a half-written body; `gc` removes the orphaned chunks.

use std::io::Read;

use crate::error::StoreError;
use crate::format::BodyRef;
use crate::key::hex;
use crate::kv::{Batch, Kv, Table};

/// What blobs are read from and written to: a store's tables, and whether it takes writes. The store
/// implements it (`store/mod.rs`) and hands itself to its writers and readers; this room names no store,
/// so the store owns its blobs and the two do not depend on each other.
pub(crate) trait BlobTables: Send + Sync + 'static {
    /// The tables.
    fn kv(&self) -> &dyn Kv;
    /// `Err(ReadOnly)` for a store opened read-only.
    fn check_writable(&self) -> Result<(), StoreError>;
}

/// Decoded bytes per chunk.
pub(crate) const CHUNK: usize = 1 << 20;
use crate::version::BLOB_VERSION;
const KIND_RAW: u8 = 0;
const KIND_ZSTD: u8 = 1;
const KIND_CHUNKED: u8 = 2;
const ZSTD_LEVEL: i32 = 3;
/// Bodies smaller than this are stored raw: compression cannot win much and costs a frame header.
const RAW_BELOW: usize = 64;

fn compress(data: &[u8]) -> (u8, Vec<u8>) {
    if data.len() >= RAW_BELOW {
        if let Ok(c) = zstd::bulk::compress(data, ZSTD_LEVEL) {
            if c.len() < data.len() {
                return (KIND_ZSTD, c);
            }
        }
    }
    (KIND_RAW, data.to_vec())
}

fn decompress(kind: u8, data: &[u8], expect: usize) -> Result<Vec<u8>, StoreError> {
    match kind {
        KIND_RAW => Ok(data.to_vec()),
        KIND_ZSTD => zstd::bulk::decompress(data, expect.max(1))
            .map_err(|e| StoreError::Corrupt { what: "blob", detail: format!("zstd: {e}") }),
        k => Err(StoreError::Corrupt { what: "blob", detail: format!("unknown encoding {k}") }),
    }
}

/// Streams a body into the store: hashes and compresses as bytes arrive.
pub struct BlobWriter {
    store: Box<dyn BlobTables>,
    hasher: blake3::Hasher,
    buf: Vec<u8>,
    chunks: Vec<[u8; 32]>,
    size: u64,
    overwrite: bool,
}

impl std::fmt::Debug for BlobWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlobWriter").field("size", &self.size).finish()
    }
}

impl BlobWriter {
    pub(crate) fn new(store: impl BlobTables) -> Self {
        Self {
            store: Box::new(store),
            hasher: blake3::Hasher::new(),
            buf: Vec::new(),
            chunks: Vec::new(),
            size: 0,
            overwrite: false,
        }
    }

    /// A writer that replaces the records its content hashes to instead of keeping them (stored once per
    /// content hash is the rule; a damaged record would otherwise stay damaged under its name for ever).
    pub(crate) fn overwriting(store: impl BlobTables) -> Self {
        Self { overwrite: true, ..Self::new(store) }
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        self.size
    }

    /// Whether nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// Whether [`BlobWriter::write`] of `n` more bytes writes to the store (a chunk fills): the caller
    /// on an async worker then offloads it; smaller writes only copy into the buffer.
    pub fn write_flushes(&self, n: usize) -> bool {
        self.buf.len() + n >= CHUNK
    }

    /// Append bytes. Flushes a chunk to the store each time [`CHUNK`] bytes have accumulated.
    pub fn write(&mut self, mut data: &[u8]) -> Result<(), StoreError> {
        self.hasher.update(data);
        self.size += data.len() as u64;
        while !data.is_empty() {
            let room = CHUNK - self.buf.len();
            let take = room.min(data.len());
            self.buf.extend_from_slice(&data[..take]);
            data = &data[take..];
            if self.buf.len() == CHUNK {
                self.flush_chunk()?;
            }
        }
        Ok(())
    }

    fn flush_chunk(&mut self) -> Result<(), StoreError> {
        let hash = *blake3::hash(&self.buf).as_bytes();
        if self.overwrite || self.store.kv().get(Table::Chunks, &hash)?.is_none() {
            let (kind, data) = compress(&self.buf);
            let mut v = Vec::with_capacity(data.len() + 2);
            v.extend_from_slice(&[BLOB_VERSION, kind]);
            v.extend_from_slice(&data);
            let mut b = Batch::default();
            b.put(Table::Chunks, hash.to_vec(), v);
            self.store.kv().write(b)?;
        }
        self.chunks.push(hash);
        self.buf.clear();
        Ok(())
    }

    /// Store the blob record (once per content hash) and return the reference.
    pub fn finish(mut self) -> Result<BodyRef, StoreError> {
        self.store.check_writable()?;
        let hash = *self.hasher.finalize().as_bytes();
        let body = BodyRef { hash: hex(&hash), size: self.size };
        if !self.overwrite && self.store.kv().get(Table::Blobs, &hash)?.is_some() {
            return Ok(body); // stored once per content hash
        }
        let mut record = vec![BLOB_VERSION, 0];
        if self.chunks.is_empty() {
            let (kind, data) = compress(&self.buf);
            record[1] = kind;
            record.extend_from_slice(&self.size.to_be_bytes());
            record.extend_from_slice(&data);
        } else {
            if !self.buf.is_empty() {
                self.flush_chunk()?;
            }
            record[1] = KIND_CHUNKED;
            record.extend_from_slice(&self.size.to_be_bytes());
            for c in &self.chunks {
                record.extend_from_slice(c);
            }
        }
        let mut b = Batch::default();
        b.put(Table::Blobs, hash.to_vec(), record);
        self.store.kv().write(b)?;
        Ok(body)
    }
}

/// A parsed blob record.
pub(crate) enum BlobRecord {
    Inline { kind: u8, size: u64, data: Vec<u8> },
    Chunked { size: u64, chunks: Vec<[u8; 32]> },
}

impl BlobRecord {
    pub(crate) fn parse(v: &[u8]) -> Result<Self, StoreError> {
        let bad = |d: &str| StoreError::Corrupt { what: "blob", detail: d.to_string() };
        if v.len() < 10 {
            return Err(bad("record too short"));
        }
        if v[0] != BLOB_VERSION {
            return Err(bad(&format!("unknown blob record version {}", v[0])));
        }
        let mut sz = [0u8; 8];
        sz.copy_from_slice(&v[2..10]);
        let size = u64::from_be_bytes(sz);
        match v[1] {
            KIND_CHUNKED => {
                let rest = &v[10..];
                if !rest.len().is_multiple_of(32) {
                    return Err(bad("chunk list length is not a multiple of 32"));
                }
                let chunks = rest
                    .chunks_exact(32)
                    .map(|c| {
                        let mut a = [0u8; 32];
                        a.copy_from_slice(c);
                        a
                    })
                    .collect();
                Ok(BlobRecord::Chunked { size, chunks })
            }
            kind => Ok(BlobRecord::Inline { kind, size, data: v[10..].to_vec() }),
        }
    }

    pub(crate) fn chunk_hashes(&self) -> &[[u8; 32]] {
        match self {
            BlobRecord::Chunked { chunks, .. } => chunks,
            BlobRecord::Inline { .. } => &[],
        }
    }
}

/// Reads a blob back as a stream, one chunk in memory at a time. Implements [`std::io::Read`].
///
/// Integrity: the reader hashes what it hands out and, at the end, fails with [`StoreError::Corrupt`] if
/// the length or the BLAKE3 differs from the blob's key, so damaged bytes never pass for a whole body.
pub struct BlobReader {
    store: Box<dyn BlobTables>,
    size: u64,
    current: Vec<u8>,
    pos: usize,
    pending: std::vec::IntoIter<[u8; 32]>,
    expect: [u8; 32],
    hasher: blake3::Hasher,
    seen: u64,
    checked: bool,
}

impl std::fmt::Debug for BlobReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlobReader").field("size", &self.size).finish()
    }
}

impl BlobReader {
    pub(crate) fn open(store: impl BlobTables, hash: &[u8; 32]) -> Result<Self, StoreError> {
        let store: Box<dyn BlobTables> = Box::new(store);
        let raw = store.kv().get(Table::Blobs, hash)?.ok_or_else(|| StoreError::BlobMissing(hex(hash)))?;
        match BlobRecord::parse(&raw)? {
            BlobRecord::Inline { kind, size, data } => {
                let current = decompress(kind, &data, usize::try_from(size).unwrap_or(CHUNK))?;
                Ok(Self::new(store, size, current, Vec::new(), *hash))
            }
            BlobRecord::Chunked { size, chunks } => Ok(Self::new(store, size, Vec::new(), chunks, *hash)),
        }
    }

    fn new(
        store: Box<dyn BlobTables>,
        size: u64,
        current: Vec<u8>,
        chunks: Vec<[u8; 32]>,
        expect: [u8; 32],
    ) -> Self {
        let mut r = Self {
            store,
            size,
            current: Vec::new(),
            pos: 0,
            pending: chunks.into_iter(),
            expect,
            hasher: blake3::Hasher::new(),
            seen: 0,
            checked: false,
        };
        r.accept_chunk(current);
        r
    }

    /// Account for bytes about to be handed out.
    fn accept_chunk(&mut self, data: Vec<u8>) {
        self.hasher.update(&data);
        self.seen += data.len() as u64;
        self.current = data;
        self.pos = 0;
    }

    /// At the end: the bytes handed out must be the blob its key names.
    fn check_end(&mut self) -> Result<(), StoreError> {
        if self.checked {
            return Ok(());
        }
        self.checked = true;
        if self.seen != self.size || self.hasher.finalize().as_bytes() != &self.expect {
            return Err(StoreError::Corrupt {
                what: "blob",
                detail: format!(
                    "{} does not match its content hash ({} of {} bytes)",
                    hex(&self.expect),
                    self.seen,
                    self.size
                ),
            });
        }
        Ok(())
    }

    /// Decoded size of the whole blob.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Load the next chunk into `current`; `false` at the end, after the integrity check.
    fn advance(&mut self) -> Result<bool, StoreError> {
        match self.pending.next() {
            None => {
                self.check_end()?;
                Ok(false)
            }
            Some(h) => {
                let v = self.store.kv().get(Table::Chunks, &h)?.ok_or_else(|| StoreError::Corrupt {
                    what: "blob",
                    detail: format!("chunk {} missing", hex(&h)),
                })?;
                if v.len() < 2 {
                    return Err(StoreError::Corrupt { what: "blob", detail: "chunk too short".into() });
                }
                let data = decompress(v[1], &v[2..], CHUNK)?;
                self.accept_chunk(data);
                Ok(true)
            }
        }
    }

    /// The next piece of the body, or `None` at the end. At most one chunk is held at a time. The last
    /// call fails with [`StoreError::Corrupt`] if the body does not match its hash.
    pub fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, StoreError> {
        if self.pos >= self.current.len() && !self.advance()? {
            return Ok(None);
        }
        let out =
            if self.pos == 0 { std::mem::take(&mut self.current) } else { self.current[self.pos..].to_vec() };
        self.current.clear();
        self.pos = 0;
        Ok(Some(out))
    }

    /// Read the whole blob into memory (for bodies known to be small).
    pub fn read_all(mut self) -> Result<Vec<u8>, StoreError> {
        let mut out = Vec::with_capacity(usize::try_from(self.size).unwrap_or(0).min(64 << 20));
        while let Some(c) = self.next_chunk()? {
            out.extend_from_slice(&c);
        }
        Ok(out)
    }
}

impl Read for BlobReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.current.len() {
            match self.advance() {
                Ok(true) => {}
                Ok(false) => return Ok(0),
                Err(e) => return Err(std::io::Error::other(e)),
            }
        }
        let n = buf.len().min(self.current.len() - self.pos);
        buf[..n].copy_from_slice(&self.current[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// What is wrong with a stored blob (`snapshots verify` reports it against the blob's hash).
#[derive(Debug, thiserror::Error)]
pub(crate) enum BlobDamage {
    /// The blob's record does not parse, or its inline data does not decompress.
    #[error("{0}")]
    Record(StoreError),
    /// A chunk the blob names is not in the store.
    #[error("chunk {0} missing")]
    ChunkMissing(String),
    /// A chunk is too short to hold its header, or does not decompress.
    #[error("chunk {chunk}: {detail}")]
    Chunk {
        /// The chunk's hash (hex).
        chunk: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The content's length differs from the recorded size.
    #[error("size {found} differs from recorded {recorded}")]
    Size {
        /// Bytes found.
        found: u64,
        /// Bytes recorded.
        recorded: u64,
    },
    /// The content does not hash to the blob's key.
    #[error("content does not match its hash")]
    Hash,
}

/// Recompute a stored blob's hash: its size, or what is damaged. `Err` of the outer result: the store
/// itself failed (reading a chunk), which says nothing about the blob.
pub(crate) fn check_blob(
    store: &dyn BlobTables,
    hash: &[u8; 32],
    raw: &[u8],
) -> Result<Result<u64, BlobDamage>, StoreError> {
    let rec = match BlobRecord::parse(raw) {
        Ok(r) => r,
        Err(e) => return Ok(Err(BlobDamage::Record(e))),
    };
    let mut h = blake3::Hasher::new();
    let mut total = 0u64;
    let size = match &rec {
        BlobRecord::Inline { kind, size, data } => {
            match decompress(*kind, data, usize::try_from(*size).unwrap_or(CHUNK)) {
                Ok(d) => {
                    h.update(&d);
                    total += d.len() as u64;
                }
                Err(e) => return Ok(Err(BlobDamage::Record(e))),
            }
            *size
        }
        BlobRecord::Chunked { size, chunks } => {
            for c in chunks {
                let Some(v) = store.kv().get(Table::Chunks, c)? else {
                    return Ok(Err(BlobDamage::ChunkMissing(hex(c))));
                };
                if v.len() < 2 {
                    return Ok(Err(BlobDamage::Chunk { chunk: hex(c), detail: "too short".into() }));
                }
                match decompress(v[1], &v[2..], CHUNK) {
                    Ok(d) => {
                        h.update(&d);
                        total += d.len() as u64;
                    }
                    Err(e) => return Ok(Err(BlobDamage::Chunk { chunk: hex(c), detail: e.to_string() })),
                }
            }
            *size
        }
    };
    if total != size {
        return Ok(Err(BlobDamage::Size { found: total, recorded: size }));
    }
    if h.finalize().as_bytes() != hash {
        return Ok(Err(BlobDamage::Hash));
    }
    Ok(Ok(size))
}
