//! Copying a snapshot from one store into another (or under a new name in the same store): how
//! `webfreeze merge` joins the stores that shards recorded into on different machines.

use std::collections::BTreeMap;

use super::{NewSnapshot, Store};
use crate::format::{BodyRef, Manifest, SnapshotState, RECORDED_AS_LABEL};
use crate::key::parse_hex32;
use crate::kv::Table;
use crate::StoreError;

impl Store {
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
        let m = src.manifest(name)?;
        labels.insert(RECORDED_AS_LABEL.to_string(), m.recorded_as().to_string());
        src.check_snapshot(&m)?;
        if m.state == SnapshotState::Recording {
            return Err(StoreError::BadState {
                name: m.name.clone(),
                state: m.state.to_string(),
                what: "it is still being written and cannot be copied",
            });
        }
        let w = self.create_snapshot(NewSnapshot {
            name: new_name.to_string(),
            created_ms: m.created_ms,
            seed: m.seed.clone(),
            source: m.source.clone(),
            labels,
        })?;
        for x in src.exchanges(&m) {
            let x = x?;
            for body in [&x.request.body, &x.response.body].into_iter().flatten() {
                self.copy_blob(src, body)?;
            }
            w.append(x)?;
        }
        let finished = m.finished_ms.unwrap_or(m.created_ms);
        match m.state {
            SnapshotState::Interrupted => w.interrupt(finished),
            _ => w.finalize(finished),
        }
    }

    fn copy_blob(&self, src: &Store, body: &BodyRef) -> Result<(), StoreError> {
        let digest = parse_hex32(&body.hash).ok_or_else(|| StoreError::Corrupt {
            what: "exchange",
            detail: format!("body hash {:?} is not a 64-digit hex digest", body.hash),
        })?;
        if self.kv().get(Table::Blobs, &digest)?.is_some() {
            return Ok(());
        }
        let mut r = src.read_blob(&body.hash)?;
        let mut w = self.blob_writer();
        while let Some(chunk) = r.next_chunk()? {
            w.write(&chunk)?;
        }
        let copied = w.finish()?;
        if copied.hash != body.hash {
            return Err(StoreError::Corrupt {
                what: "blob",
                detail: format!("{} read back as {} while copying", body.hash, copied.hash),
            });
        }
        Ok(())
    }
}
