//! The RocksDB backend. The only module that names a RocksDB type.
//!
//! Blob and chunk tables hold values we already compressed with zstd, so RocksDB compression is off for
//! them; the record tables (exchanges, manifests, indexes) are small JSON/binary records that RocksDB
//! compresses with zstd per block.

use std::path::Path;

use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamilyDescriptor, DBCompressionType, Direction, IteratorMode, Options,
    WriteBatch, DB,
};

/// Memory budget, fixed whatever the store size: memtables across all column families, and one block
/// cache shared by all of them that also holds index and filter blocks (so table readers do not pin them
/// outside the budget as the store grows).
const MEMTABLE_BUDGET: usize = 48 << 20;
const BLOCK_CACHE: usize = 32 << 20;

use crate::kv::{Batch, Kv, Op, Scan, Table};
use crate::StoreError;

pub(crate) struct RocksKv {
    db: DB,
}

fn backend(e: rocksdb::Error) -> StoreError {
    StoreError::Backend(e.into_string())
}

fn cf_options(t: Table, cache: &Cache) -> Options {
    let mut o = Options::default();
    let mut b = BlockBasedOptions::default();
    b.set_block_cache(cache);
    b.set_cache_index_and_filter_blocks(true);
    b.set_pin_l0_filter_and_index_blocks_in_cache(true);
    o.set_max_write_buffer_number(2);
    match t {
        Table::Blobs | Table::Chunks => {
            // Values are zstd-compressed by us already.
            o.set_compression_type(DBCompressionType::None);
            o.set_write_buffer_size(16 << 20);
        }
        _ => {
            o.set_compression_type(DBCompressionType::Zstd);
            o.set_bottommost_compression_type(DBCompressionType::Zstd);
            o.set_write_buffer_size(8 << 20);
            // Point lookups on the indexes: a bloom filter keeps the first lookup to one block read.
            b.set_bloom_filter(10.0, false);
        }
    }
    o.set_block_based_table_factory(&b);
    o
}

impl RocksKv {
    pub(crate) fn open(path: &Path, read_only: bool) -> Result<Self, StoreError> {
        let mut opts = Options::default();
        opts.create_if_missing(!read_only);
        opts.create_missing_column_families(!read_only);
        // Bounded memory whatever the store size: a modest shared block cache and capped open files.
        opts.set_max_open_files(256);
        opts.set_keep_log_file_num(3);
        opts.set_db_write_buffer_size(MEMTABLE_BUDGET);
        let cache = Cache::new_lru_cache(BLOCK_CACHE);
        let open_err =
            |e: rocksdb::Error| StoreError::Open { path: path.to_path_buf(), detail: e.into_string() };
        // A read-only open cannot create a table a newer build added (`Table::Unions`): it opens the ones
        // the store has, and a missing one reads as empty.
        let present: Option<Vec<String>> = match read_only {
            true => Some(DB::list_cf(&opts, path).map_err(open_err)?),
            false => None,
        };
        let cfs: Vec<ColumnFamilyDescriptor> = Table::ALL
            .iter()
            .filter(|t| present.as_ref().is_none_or(|p| p.iter().any(|n| n == t.name())))
            .map(|t| ColumnFamilyDescriptor::new(t.name(), cf_options(*t, &cache)))
            .collect();
        let db = if read_only {
            DB::open_cf_descriptors_read_only(&opts, path, cfs, false).map_err(open_err)?
        } else {
            DB::open_cf_descriptors(&opts, path, cfs).map_err(open_err)?
        };
        Ok(Self { db })
    }

    fn cf(&self, t: Table) -> Result<&rocksdb::ColumnFamily, StoreError> {
        self.db
            .cf_handle(t.name())
            .ok_or_else(|| StoreError::Backend(format!("column family {} missing", t.name())))
    }
}

impl Kv for RocksKv {
    fn get(&self, t: Table, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        if self.db.cf_handle(t.name()).is_none() && t == Table::Unions {
            return Ok(None);
        }
        self.db.get_cf(self.cf(t)?, key).map_err(backend)
    }

    fn write(&self, batch: Batch) -> Result<(), StoreError> {
        let mut wb = WriteBatch::default();
        for op in batch.0 {
            match op {
                Op::Put(t, k, v) => wb.put_cf(self.cf(t)?, k, v),
                Op::Delete(t, k) => wb.delete_cf(self.cf(t)?, k),
                Op::DeleteRange(t, from, to) => wb.delete_range_cf(self.cf(t)?, from, to),
            }
        }
        // The WAL is on (the default): a completed write survives a kill of this process.
        self.db.write(wb).map_err(backend)
    }

    fn scan_prefix<'a>(&'a self, t: Table, prefix: &[u8]) -> Scan<'a> {
        if self.db.cf_handle(t.name()).is_none() && t == Table::Unions {
            return Box::new(std::iter::empty());
        }
        let cf = match self.cf(t) {
            Ok(cf) => cf,
            Err(e) => return Box::new(std::iter::once(Err(e))),
        };
        let prefix = prefix.to_vec();
        let it = self
            .db
            .iterator_cf(cf, IteratorMode::From(&prefix, Direction::Forward))
            .map(|r| r.map(|(k, v)| (k.into_vec(), v.into_vec())).map_err(backend))
            .take_while(move |r| match r {
                Ok((k, _)) => k.starts_with(&prefix),
                Err(_) => true,
            });
        Box::new(it)
    }

    fn approximate_size(&self) -> u64 {
        let mut total = 0;
        for t in Table::ALL {
            if let Ok(cf) = self.cf(t) {
                if let Ok(Some(n)) = self.db.property_int_value_cf(cf, "rocksdb.total-sst-files-size") {
                    total += n;
                }
                if let Ok(Some(n)) = self.db.property_int_value_cf(cf, "rocksdb.cur-size-all-mem-tables") {
                    total += n;
                }
            }
        }
        total
    }

    fn flush(&self) -> Result<(), StoreError> {
        for t in Table::ALL {
            if let Some(cf) = self.db.cf_handle(t.name()) {
                self.db.flush_cf(cf).map_err(backend)?;
            }
        }
        Ok(())
    }
}
