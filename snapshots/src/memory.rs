//! The in-memory twin of the RocksDB backend: same semantics (atomic batches, ordered prefix scans), used by
//! tests that do not need a disk and by tools that want a scratch store.

use std::collections::BTreeMap;
use std::sync::RwLock;

use crate::kv::{Batch, Kv, Op, Scan, Table};
use crate::StoreError;

type Tables = BTreeMap<Table, BTreeMap<Vec<u8>, Vec<u8>>>;

/// A `BTreeMap` per table behind one lock; a batch is applied under the write lock, so it is atomic.
#[derive(Debug, Default)]
pub(crate) struct MemoryKv {
    tables: RwLock<Tables>,
}

fn poisoned() -> StoreError {
    StoreError::Backend("in-memory store lock poisoned by a panic in another thread".into())
}

impl Kv for MemoryKv {
    fn get(&self, t: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let g = self.tables.read().map_err(|_| poisoned())?;
        Ok(g.get(&t).and_then(|m| m.get(key)).cloned())
    }

    fn write(&self, batch: Batch) -> Result<(), StoreError> {
        let mut g = self.tables.write().map_err(|_| poisoned())?;
        for op in batch.0 {
            match op {
                Op::Put(t, k, v) => {
                    g.entry(t).or_default().insert(k, v);
                }
                Op::Delete(t, k) => {
                    g.entry(t).or_default().remove(&k);
                }
                Op::DeleteRange(t, from, to) => {
                    let m = g.entry(t).or_default();
                    let doomed: Vec<Vec<u8>> = m.range(from..to).map(|(k, _)| k.clone()).collect();
                    for k in doomed {
                        m.remove(&k);
                    }
                }
            }
        }
        Ok(())
    }

    fn scan_prefix<'a>(&'a self, t: Table, prefix: &[u8]) -> Scan<'a> {
        // The twin copies the matching range out; it serves tests, not 100k-exchange stores.
        let items: Vec<_> = match self.tables.read() {
            Ok(g) => g
                .get(&t)
                .map(|m| {
                    m.range(prefix.to_vec()..)
                        .take_while(|(k, _)| k.starts_with(prefix))
                        .map(|(k, v)| Ok((k.clone(), v.clone())))
                        .collect()
                })
                .unwrap_or_default(),
            Err(_) => vec![Err(poisoned())],
        };
        Box::new(items.into_iter())
    }

    fn approximate_size(&self) -> u64 {
        self.tables
            .read()
            .map(|g| g.values().flat_map(|m| m.iter()).map(|(k, v)| (k.len() + v.len()) as u64).sum())
            .unwrap_or(0)
    }

    fn flush(&self) -> Result<(), StoreError> {
        Ok(())
    }
}
