//! Appending to one snapshot: sequence numbers, atomic appends (exchange + index entries + manifest
//! counts in one batch), and sealing (`complete`, `imported`, `interrupted`; `interrupted` on drop).

use std::sync::Mutex;

use super::{exchange_key, index_key, path_digest, Store};
use crate::format::{
    encode_exchange, encode_manifest, Counts, Exchange, Manifest, SnapshotSource, SnapshotState,
};
use crate::key::{hex, parse_hex32};
use crate::kv::{Batch, Table};
use crate::StoreError;

pub(super) fn add_counts(c: &mut Counts, x: &Exchange) {
    c.exchanges += 1;
    if let Some(b) = &x.request.body {
        c.body_bytes += b.size;
    }
    if let Some(b) = &x.response.body {
        c.body_bytes += b.size;
        c.with_body += 1;
    }
    for m in x.websocket.iter().flat_map(|w| &w.messages) {
        c.body_bytes += m.payload.size;
    }
}

/// The stored manifest is rewritten with the first exchange and then with every this many.
const MANIFEST_EVERY: u64 = 64;

pub(super) struct WriterState {
    pub(super) manifest: Manifest,
    pub(super) next_seq: u64,
    pub(super) finished: bool,
}

/// Appends exchanges to one snapshot. Shareable across tasks (`&self` methods, internally locked).
///
/// Dropping it without [`SnapshotWriter::finalize`] marks the snapshot `interrupted`: a cancelled
/// recording never looks complete.
pub struct SnapshotWriter {
    pub(super) store: Store,
    pub(super) state: Mutex<WriterState>,
}

impl std::fmt::Debug for SnapshotWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotWriter").finish_non_exhaustive()
    }
}

fn poisoned() -> StoreError {
    StoreError::Backend("snapshot writer lock poisoned by a panic".into())
}

impl SnapshotWriter {
    /// The store this writer writes to.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The manifest as it stands.
    pub fn manifest(&self) -> Result<Manifest, StoreError> {
        Ok(self.state.lock().map_err(|_| poisoned())?.manifest.clone())
    }

    /// Reserve the next sequence number: call when a request starts, so recorded order is start order.
    pub fn reserve_seq(&self) -> Result<u64, StoreError> {
        let mut s = self.state.lock().map_err(|_| poisoned())?;
        let seq = s.next_seq;
        s.next_seq += 1;
        Ok(seq)
    }

    /// Store one exchange (its bodies must already be stored), atomically with its index entries and the
    /// manifest's counts. If `x.seq` was not reserved it is assigned here.
    pub fn append(&self, mut x: Exchange) -> Result<u64, StoreError> {
        let mut s = self.state.lock().map_err(|_| poisoned())?;
        if s.finished {
            return Err(StoreError::BadState {
                name: s.manifest.name.clone(),
                state: s.manifest.state.to_string(),
                what: "no more exchanges can be added",
            });
        }
        if x.seq >= s.next_seq {
            s.next_seq = x.seq + 1;
        }
        let digest = parse_hex32(&x.key).ok_or_else(|| StoreError::Corrupt {
            what: "exchange",
            detail: format!("request key {:?} is not a 64-digit hex digest", x.key),
        })?;
        x.key = hex(&digest);
        let id = s.manifest.id;
        add_counts(&mut s.manifest.counts, &x);
        let mut b = Batch::default();
        b.put(Table::Exchanges, exchange_key(id, x.seq), encode_exchange(&x));
        b.put(Table::KeyIndex, index_key(id, &digest, x.seq), Vec::new());
        b.put(Table::PathIndex, index_key(id, &path_digest(&x.request.url), x.seq), Vec::new());
        // The stored manifest at a bounded rate: its counts are exact in memory (`manifest()`), written
        // exactly when the snapshot is sealed or interrupted, and recounted from the exchanges when a
        // crashed recording is recovered; meanwhile a reader in another process sees them at most
        // `MANIFEST_EVERY - 1` exchanges behind.
        if s.manifest.counts.exchanges % MANIFEST_EVERY == 1 {
            b.put(Table::Manifests, s.manifest.name.as_bytes().to_vec(), encode_manifest(&s.manifest));
        }
        self.store.kv().write(b)?;
        fail::fail_point!("snapshot-append", |_| crate::fault::hold("snapshot-append"));
        Ok(x.seq)
    }

    /// Seal the snapshot: `complete` for recordings, `imported` for imports.
    pub fn finalize(&self, finished_ms: i64) -> Result<Manifest, StoreError> {
        let imported = {
            let s = self.state.lock().map_err(|_| poisoned())?;
            !matches!(s.manifest.source, SnapshotSource::Record)
        };
        self.finish_as(
            if imported { SnapshotState::Imported } else { SnapshotState::Complete },
            Some(finished_ms),
        )
    }

    /// Seal the snapshot as `interrupted` (a recording stopped by an error).
    pub fn interrupt(&self, finished_ms: i64) -> Result<Manifest, StoreError> {
        self.finish_as(SnapshotState::Interrupted, Some(finished_ms))
    }

    fn finish_as(&self, state: SnapshotState, finished_ms: Option<i64>) -> Result<Manifest, StoreError> {
        let mut s = self.state.lock().map_err(|_| poisoned())?;
        s.manifest.state = state;
        s.manifest.finished_ms = finished_ms;
        s.finished = true;
        let mut b = Batch::default();
        b.put(Table::Manifests, s.manifest.name.as_bytes().to_vec(), encode_manifest(&s.manifest));
        self.store.kv().write(b)?;
        self.store.kv().flush()?;
        Ok(s.manifest.clone())
    }
}

impl Drop for SnapshotWriter {
    fn drop(&mut self) {
        let unfinished = self.state.lock().map(|s| !s.finished).unwrap_or(false);
        if unfinished {
            // Best effort; if this fails the next writable open marks it interrupted anyway.
            let _ = self.finish_as(SnapshotState::Interrupted, None);
        }
    }
}
