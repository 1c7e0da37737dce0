//! The webfreeze snapshot store: content-addressed bodies, recorded exchanges and snapshot manifests.
//!
//! Everything that persists lives here, behind a narrow API ([`Store`]): no RocksDB or zstd type appears in
//! a public signature, and the same store logic runs over RocksDB ([`Store::open`]) or an in-memory twin
//! ([`Store::in_memory`]) for tests. The crate knows nothing about TLS, proxies or browsers.
//!
//! - [`key`]: the one key builder that derives request keys (used by recorder, replay and import alike).
//! - [`format`]: the persisted records, each carrying a format version; the only module that derives serde.
//! - [`Store`]: snapshot lifecycle (create -> append -> finalize), lookups, verify, gc, rm.

mod blob;
pub mod diff;
mod error;
mod fault;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixtures;
pub mod format;
pub mod key;
mod kv;
mod memory;
pub mod names;
mod rocks;
mod store;
pub mod version;

pub use blob::{BlobReader, BlobWriter};
pub use error::StoreError;
pub use format::{
    BodyRef, DerivedRef, Exchange, ExchangeFlags, Header, Manifest, RequestRecord, ResponseRecord, Seed,
    SnapshotSource, SnapshotState, Timings, UnionMember,
};
pub use key::{request_key, KeyBuilder, KeyError, RequestKey};
pub use store::{
    path_digest, GcReport, MergeTarget, Merged, MigrateReport, NewSnapshot, RenderedPages, SnapshotWriter,
    Store, StoreStats, VerifyIssue, VerifyReport, MERGED_FROM_LABEL, RENDERED_TEXT_VERSION, UNION_VERSION,
};
