//! Keeping a store healthy: verify (every body re-hashed, every reference checked), gc (unreferenced
//! blobs), rm, and whole-store figures.

use std::collections::HashSet;

use super::{id_prefix, seq_of_index_key, Store, StoreStats, DELETE_BATCH};
use crate::blob::{check_blob, BlobRecord};
use crate::format::{decode_exchange, Manifest, SnapshotState};
use crate::key::{hex, parse_hex32};
use crate::kv::{Batch, Table};
use crate::StoreError;

/// One problem found by [`Store::verify`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyIssue {
    /// A blob whose content does not match its hash, or does not decode.
    CorruptBlob {
        /// The blob's hash.
        hash: String,
        /// What is wrong.
        detail: String,
    },
    /// An exchange references a blob that is not stored.
    MissingBlob {
        /// The blob's hash.
        hash: String,
        /// Snapshot of the referencing exchange.
        snapshot: String,
        /// Its sequence number.
        seq: u64,
    },
    /// An exchange or manifest record that does not decode.
    BadRecord {
        /// Snapshot concerned.
        snapshot: String,
        /// What is wrong.
        detail: String,
    },
}

/// Result of [`Store::verify`].
#[derive(Debug, Clone, Default)]
pub struct VerifyReport {
    /// Snapshots whose exchanges were checked.
    pub snapshots: u64,
    /// Exchanges checked.
    pub exchanges: u64,
    /// Blobs whose hash was recomputed.
    pub blobs: u64,
    /// Decoded bytes hashed.
    pub bytes: u64,
    /// Everything found wrong.
    pub issues: Vec<VerifyIssue>,
}

/// Result of [`Store::gc`].
#[derive(Debug, Clone, Default)]
pub struct GcReport {
    /// Blobs still referenced.
    pub blobs_kept: u64,
    /// Blobs deleted.
    pub blobs_deleted: u64,
    /// Chunks deleted (parts of large bodies, including orphans of interrupted writes).
    pub chunks_deleted: u64,
    /// Stored bytes freed (record sizes).
    pub bytes_freed: u64,
}

impl Store {
    /// Recompute the hash of every blob (or only those `snapshot` references) and check that every
    /// referenced blob exists.
    pub fn verify(&self, snapshot: Option<&str>) -> Result<VerifyReport, StoreError> {
        let mut report = VerifyReport::default();
        let manifests = match snapshot {
            Some(n) => vec![self.manifest(n)?],
            None => self.manifests()?,
        };
        let mut referenced: HashSet<[u8; 32]> = HashSet::new();
        for m in &manifests {
            report.snapshots += 1;
            for item in self.kv().scan_prefix(Table::Exchanges, &id_prefix(m.id)) {
                let (k, v) = item?;
                let x = match decode_exchange(&v) {
                    Ok(x) => x,
                    Err(e) => {
                        report.issues.push(VerifyIssue::BadRecord {
                            snapshot: m.name.clone(),
                            detail: format!("exchange {}: {e}", seq_of_index_key(&k).unwrap_or(0)),
                        });
                        continue;
                    }
                };
                report.exchanges += 1;
                for body in x.body_refs() {
                    match parse_hex32(&body.hash) {
                        Some(h) if self.kv().get(Table::Blobs, &h)?.is_some() => {
                            referenced.insert(h);
                        }
                        _ => report.issues.push(VerifyIssue::MissingBlob {
                            hash: body.hash.clone(),
                            snapshot: m.name.clone(),
                            seq: x.seq,
                        }),
                    }
                }
            }
            // A side blob (the search index, the rendered text) is checked like a body; it has no exchange (seq 0 is
            // reported, and the detail names it).
            for (what, d) in m.side_blobs() {
                match parse_hex32(&d.hash) {
                    Some(h) if self.kv().get(Table::Blobs, &h)?.is_some() => {
                        referenced.insert(h);
                    }
                    _ => report.issues.push(VerifyIssue::BadRecord {
                        snapshot: m.name.clone(),
                        detail: match what {
                            "search index" => format!(
                                "its search index blob {} is missing (rebuild it: webfreeze snapshots \
                                 search-index {})",
                                d.hash, m.name
                            ),
                            _ => format!("its {what} blob {} is missing", d.hash),
                        },
                    }),
                }
            }
        }
        for item in self.kv().scan_prefix(Table::Blobs, b"") {
            let (k, v) = item?;
            let Ok(hash) = <[u8; 32]>::try_from(k.as_slice()) else {
                report
                    .issues
                    .push(VerifyIssue::CorruptBlob { hash: hex(&k), detail: "bad key length".into() });
                continue;
            };
            if snapshot.is_some() && !referenced.contains(&hash) {
                continue;
            }
            report.blobs += 1;
            match check_blob(self, &hash, &v)? {
                Ok(n) => report.bytes += n,
                Err(damage) => report
                    .issues
                    .push(VerifyIssue::CorruptBlob { hash: hex(&hash), detail: damage.to_string() }),
            }
        }
        Ok(report)
    }

    /// Delete blobs and chunks that no snapshot references (mark and sweep).
    pub fn gc(&self) -> Result<GcReport, StoreError> {
        self.gc_with_progress(&mut |_| {})
    }

    /// [`Store::gc`], calling `progress` with the figures so far after each batch of deletions is written.
    /// Each batch is atomic and deletes only what nothing references, so a gc killed between batches leaves
    /// a consistent store and running it again finishes the job.
    pub fn gc_with_progress(&self, progress: &mut dyn FnMut(&GcReport)) -> Result<GcReport, StoreError> {
        self.check_writable()?;
        let manifests = self.manifests()?;
        if let Some(m) = manifests.iter().find(|m| m.state == SnapshotState::Recording) {
            return Err(StoreError::BadState {
                name: m.name.clone(),
                state: m.state.to_string(),
                what: "gc cannot run while a snapshot is being recorded",
            });
        }
        let mut marked: HashSet<[u8; 32]> = HashSet::new();
        for m in &manifests {
            marked.extend(m.side_blobs().filter_map(|(_, d)| parse_hex32(&d.hash)));
            for x in self.exchanges(m) {
                let x = x?;
                for body in x.body_refs() {
                    if let Some(h) = parse_hex32(&body.hash) {
                        marked.insert(h);
                    }
                }
            }
        }
        let mut report = GcReport::default();
        let mut keep_chunks: HashSet<[u8; 32]> = HashSet::new();
        let mut batch = Batch::default();
        for item in self.kv().scan_prefix(Table::Blobs, b"") {
            let (k, v) = item?;
            let key: Option<[u8; 32]> = k.as_slice().try_into().ok();
            if key.is_some_and(|h| marked.contains(&h)) {
                report.blobs_kept += 1;
                if let Ok(rec) = BlobRecord::parse(&v) {
                    keep_chunks.extend(rec.chunk_hashes().iter().copied());
                }
            } else {
                report.blobs_deleted += 1;
                report.bytes_freed += (k.len() + v.len()) as u64;
                batch.delete(Table::Blobs, k);
                if batch.0.len() >= DELETE_BATCH {
                    self.kv().write(std::mem::take(&mut batch))?;
                    progress(&report);
                    fail::fail_point!("gc-batch", |_| crate::fault::hold("gc-batch"));
                }
            }
        }
        self.kv().write(std::mem::take(&mut batch))?;
        for item in self.kv().scan_prefix(Table::Chunks, b"") {
            let (k, v) = item?;
            let key: Option<[u8; 32]> = k.as_slice().try_into().ok();
            if !key.is_some_and(|h| keep_chunks.contains(&h)) {
                report.chunks_deleted += 1;
                report.bytes_freed += (k.len() + v.len()) as u64;
                batch.delete(Table::Chunks, k);
                if batch.0.len() >= DELETE_BATCH {
                    self.kv().write(std::mem::take(&mut batch))?;
                    progress(&report);
                    fail::fail_point!("gc-batch", |_| crate::fault::hold("gc-batch"));
                }
            }
        }
        self.kv().write(batch)?;
        progress(&report);
        Ok(report)
    }

    /// Delete a snapshot: its manifest, exchanges and index entries. Bodies stay until `gc`.
    pub fn remove(&self, name: &str) -> Result<Manifest, StoreError> {
        self.forget_checked();
        self.check_writable()?;
        let m = self.manifest(name)?;
        let from = id_prefix(m.id).to_vec();
        let to = id_prefix(m.id + 1).to_vec();
        let mut b = Batch::default();
        self.leave_unions(m.id, &mut b, None)?;
        b.delete(Table::Manifests, name.as_bytes().to_vec());
        for t in [Table::Exchanges, Table::KeyIndex, Table::PathIndex] {
            b.delete_range(t, from.clone(), to.clone());
        }
        self.kv().write(b)?;
        Ok(m)
    }

    /// Whole-store figures.
    pub fn stats(&self) -> Result<StoreStats, StoreError> {
        let mut s = StoreStats {
            snapshots: self.kv().scan_prefix(Table::Manifests, b"").count() as u64,
            ..Default::default()
        };
        s.blobs = self.kv().scan_prefix(Table::Blobs, b"").count() as u64;
        s.disk_bytes = self.kv().approximate_size();
        Ok(s)
    }
}
