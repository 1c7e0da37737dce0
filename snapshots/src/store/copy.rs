//! Copying a snapshot from one store into another (or under a new name in the same store): how
//! `webfreeze merge` joins the stores that shards recorded into on different machines.

use std::collections::BTreeMap;

use super::{NewSnapshot, Store};
use crate::format::{Manifest, SnapshotState, RECORDED_AS_LABEL};
use crate::key::parse_hex32;
use crate::kv::Table;
use crate::StoreError;

impl Store {
    /// A snapshot to read whole (copy, merge): its manifest, checked, refused while it is being written.
    fn finished_source(&self, name: &str, refused: &'static str) -> Result<Manifest, StoreError> {
        let m = self.manifest(name)?;
        self.check_snapshot(&m)?;
        if m.state == SnapshotState::Recording {
            return Err(StoreError::BadState {
                name: m.name.clone(),
                state: m.state.to_string(),
                what: refused,
            });
        }
        Ok(m)
    }

    /// Copy `name` from `src` into this store as `new_name`, with `labels` replacing the source's labels.
    /// Exchanges keep their order, keys, seed and time stamps; bodies are streamed chunk by chunk and
    /// stored once per content hash (a blob this store already holds is not copied), each re-hashed on
    /// the way and refused if it no longer matches. The copy ends in the source's state (`complete`,
    /// `imported` or `interrupted`) and labelled with the name it was recorded under
    /// ([`Manifest::recorded_as`]), which replay seeds its shim from; a copy cut short stays `recording` and becomes `interrupted` on the
    /// next writable open, like any dead writer's snapshot. `src` may be this store.
    pub fn copy_snapshot_from(
        &self,
        src: &Store,
        name: &str,
        new_name: &str,
        mut labels: BTreeMap<String, String>,
    ) -> Result<Manifest, StoreError> {
        let m = src.finished_source(name, "it is still being written and cannot be copied")?;
        labels.insert(RECORDED_AS_LABEL.to_string(), m.recorded_as().to_string());
        let w = self.create_snapshot(NewSnapshot {
            name: new_name.to_string(),
            created_ms: m.created_ms,
            seed: m.seed.clone(),
            source: m.source.clone(),
            labels,
        })?;
        for x in src.exchanges(&m) {
            let x = x?;
            for body in x.body_refs() {
                self.copy_blob(src, &body.hash)?;
            }
            w.append(x)?;
        }
        let finished = m.finished_ms.unwrap_or(m.created_ms);
        let copy = match m.state {
            SnapshotState::Interrupted => w.interrupt(finished)?,
            _ => w.finalize(finished)?,
        };
        // The rendered text is recorded data: it goes with the copy (the search index is derived again).
        match &m.rendered_text {
            Some(r) => {
                self.copy_blob(src, &r.hash)?;
                let mut copy = copy;
                copy.rendered_text = Some(r.clone());
                self.put_manifest(&copy)?;
                Ok(copy)
            }
            None => Ok(copy),
        }
    }

    fn copy_blob(&self, src: &Store, hash: &str) -> Result<(), StoreError> {
        let digest = parse_hex32(hash).ok_or_else(|| StoreError::Corrupt {
            what: "exchange",
            detail: format!("body hash {hash:?} is not a 64-digit hex digest"),
        })?;
        if self.kv().get(Table::Blobs, &digest)?.is_some() {
            return Ok(());
        }
        let mut r = src.read_blob(hash)?;
        let mut w = self.blob_writer();
        while let Some(chunk) = r.next_chunk()? {
            w.write(&chunk)?;
        }
        let copied = w.finish()?;
        if copied.hash != hash {
            return Err(StoreError::Corrupt {
                what: "blob",
                detail: format!("{hash} read back as {} while copying", copied.hash),
            });
        }
        Ok(())
    }
}

/// The label a merged snapshot carries: its sources, in order, joined by newlines.
pub const MERGED_FROM_LABEL: &str = "merged_from";

/// What is at a merge's destination already ([`Store::merge_target`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeTarget {
    /// Nothing: merge.
    Free,
    /// The same merge (same sources, same order) finished it: nothing to do.
    Done,
    /// The same merge left it unfinished, with this many exchanges: [`Store::merge_again`] replaces it.
    Unfinished(u64),
}

/// What [`Store::merge_again`] did.
#[derive(Debug, Clone)]
pub enum Merged {
    /// The merge ran; `replaced` is the exchange count of the same merge's unfinished result it replaced.
    Now {
        /// The merged snapshot.
        manifest: Box<Manifest>,
        /// An unfinished earlier attempt that was removed first.
        replaced: Option<u64>,
    },
    /// The same merge had finished it already: nothing was written.
    Before,
}

impl Store {
    /// Whether `sources` may be merged into `into`: a free name, or a snapshot this same merge made
    /// (finished or not). Anything else at `into` is [`StoreError::SnapshotExists`]: a merge never replaces
    /// a snapshot it did not make.
    pub fn merge_target(&self, sources: &[&str], into: &str) -> Result<MergeTarget, StoreError> {
        let Ok(m) = self.manifest(into) else { return Ok(MergeTarget::Free) };
        let same_merge = m.labels.get(MERGED_FROM_LABEL) == Some(&sources.join("\n"));
        let unfinished = matches!(m.state, SnapshotState::Recording | SnapshotState::Interrupted);
        match (same_merge, unfinished) {
            (true, true) => Ok(MergeTarget::Unfinished(m.counts.exchanges)),
            (true, false) => Ok(MergeTarget::Done),
            (false, _) => Err(StoreError::SnapshotExists(into.to_string())),
        }
    }

    /// [`Store::merge_snapshots`], safe to run again: a destination the same merge finished is left as it
    /// is ([`Merged::Before`]), one it left unfinished (killed mid-way) is replaced, and any other
    /// snapshot of that name is refused ([`Store::merge_target`]).
    pub fn merge_again(
        &self,
        sources: &[&str],
        into: &str,
        labels: BTreeMap<String, String>,
    ) -> Result<Merged, StoreError> {
        let replaced = match self.merge_target(sources, into)? {
            MergeTarget::Done => return Ok(Merged::Before),
            MergeTarget::Unfinished(n) => {
                self.remove(into)?;
                Some(n)
            }
            MergeTarget::Free => None,
        };
        let manifest = Box::new(self.merge_snapshots(sources, into, labels)?);
        Ok(Merged::Now { manifest, replaced })
    }
}

impl Store {
    /// Union snapshots `sources` of this store into a new snapshot `into` (`webfreeze snapshots merge`):
    /// every exchange of the first source in its order, then every exchange of the second, and so on,
    /// renumbered; bodies are shared, not copied. Replay walks a request's responses in that order, so for
    /// a request several sources recorded the first source's answers come first (then the next's; past the
    /// end the last repeats), and requests only later sources recorded fill the gaps. The merge takes the
    /// first source's seed (replay's clock and random seed) and recording name; it is `interrupted` if any
    /// source is. A merge cut short stays `recording`, becomes `interrupted` on the next writable open, and
    /// carries [`MERGED_FROM_LABEL`], so the same merge can replace it.
    pub fn merge_snapshots(
        &self,
        sources: &[&str],
        into: &str,
        mut labels: BTreeMap<String, String>,
    ) -> Result<Manifest, StoreError> {
        let mut ms = Vec::with_capacity(sources.len());
        for name in sources {
            ms.push(self.finished_source(name, "it is still being written and cannot be merged")?);
        }
        let Some(first) = ms.first() else {
            return Err(StoreError::Corrupt { what: "merge", detail: "no snapshot to merge".into() });
        };
        labels.insert(RECORDED_AS_LABEL.to_string(), first.recorded_as().to_string());
        labels.insert(MERGED_FROM_LABEL.to_string(), sources.join("\n"));
        let w = self.create_snapshot(NewSnapshot {
            name: into.to_string(),
            created_ms: first.created_ms,
            seed: first.seed.clone(),
            source: first.source.clone(),
            labels,
        })?;
        let mut seq = 0;
        for m in &ms {
            for x in self.exchanges(m) {
                let mut x = x?;
                x.seq = seq;
                seq += 1;
                w.append(x)?;
            }
        }
        let finished = ms.iter().filter_map(|m| m.finished_ms).max().unwrap_or(first.created_ms);
        let merged = if ms.iter().any(|m| m.state == SnapshotState::Interrupted) {
            w.interrupt(finished)?
        } else {
            w.finalize(finished)?
        };
        // Every source's rendered text; for a page several observed, the first source's (as replay serves).
        let mut pages = super::rendered::RenderedPages::new();
        for m in ms.iter().rev() {
            pages.extend(self.rendered_text(m)?);
        }
        self.add_rendered_text(&merged.name, pages)
    }
}
