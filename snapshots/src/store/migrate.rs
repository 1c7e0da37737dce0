//! `webfreeze snapshots migrate`: a snapshot's request keys and path index derived again by this build's
//! [`KEY_VERSION`], from the requests it recorded (method, URL, `Content-Type`, body), then checked: every
//! exchange must be found by its own key. One atomic write per snapshot: a migration killed midway leaves
//! the snapshot as it was, and running it again does the whole of it.

use super::{exchange_key, id_prefix, index_key, path_digest, Store};
use crate::format::{encode_exchange, encode_manifest, SnapshotState};
use crate::key::{parse_hex32, request_key};
use crate::kv::{Batch, Table};
use crate::version::KEY_VERSION;
use crate::StoreError;

/// What a migration did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MigrateReport {
    /// Exchanges whose keys were derived again.
    pub exchanges: u64,
    /// Of those, keys that came out different (exact hits an old build's keys would have missed).
    pub keys_changed: u64,
    /// The key version the snapshot had.
    pub from: u32,
    /// The one it has now.
    pub to: u32,
}

impl Store {
    /// Derive snapshot `name`'s request keys and path index again with [`KEY_VERSION`] and record that
    /// version in its manifest; then check every exchange is found by its own key.
    pub fn migrate_keys(&self, name: &str) -> Result<MigrateReport, StoreError> {
        self.forget_checked();
        self.check_writable()?;
        let mut m = self.manifest(name)?;
        if m.state == SnapshotState::Recording {
            return Err(StoreError::BadState {
                name: m.name.clone(),
                state: m.state.to_string(),
                what: "a snapshot being recorded cannot be migrated",
            });
        }
        let mut report = MigrateReport { from: m.key_version, to: KEY_VERSION, ..Default::default() };
        let mut b = Batch::default();
        // Its unions' entries were derived from the old path index: taken out with it, derived again below.
        let unions = self.unions_of(m.id)?;
        self.leave_unions(m.id, &mut b, None)?;
        // The old index entries go first: a key that did not change is put back after its delete.
        for t in [Table::KeyIndex, Table::PathIndex] {
            for item in self.kv().scan_prefix(t, &id_prefix(m.id)) {
                b.delete(t, item?.0);
            }
        }
        for x in self.exchanges(&m) {
            let mut x = x?;
            let ct = x.request.header("content-type").map(str::to_string);
            let body = match &x.request.body {
                Some(r) => self.blob_bytes(&r.hash)?,
                None => Vec::new(),
            };
            let key = request_key(&x.request.method, &x.request.url, ct.as_deref(), &body).map_err(|e| {
                StoreError::Corrupt { what: "exchange", detail: format!("{name} exchange {}: {e}", x.seq) }
            })?;
            if key.hex() != x.key {
                report.keys_changed += 1;
                x.key = key.hex();
            }
            b.put(Table::Exchanges, exchange_key(m.id, x.seq), encode_exchange(&x));
            b.put(Table::KeyIndex, index_key(m.id, &key.digest(), x.seq), Vec::new());
            b.put(Table::PathIndex, index_key(m.id, &path_digest(&x.request.url), x.seq), Vec::new());
            report.exchanges += 1;
        }
        m.key_version = KEY_VERSION;
        b.put(Table::Manifests, m.name.as_bytes().to_vec(), encode_manifest(&m));
        self.kv().write(b)?;
        // Checked after: the counts agree and each exchange is found under its own key.
        self.check_snapshot(&m)?;
        for x in self.exchanges(&m) {
            let x = x?;
            let found = match parse_hex32(&x.key) {
                Some(d) => self.lookup_seqs(&m, &d)?.contains(&x.seq),
                None => false,
            };
            if !found {
                return Err(StoreError::Corrupt {
                    what: "exchange",
                    detail: format!("{name} exchange {} is not found by its own key after migrating", x.seq),
                });
            }
        }
        for u in unions {
            self.join_union(&u, &m)?;
        }
        Ok(report)
    }
}
