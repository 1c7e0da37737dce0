//! Every version a snapshot's bytes and keys depend on, in one place. A change to what one of them covers
//! bumps it here, and the golden fixtures (`tests/golden.rs`: a store and a bundle made by version 1,
//! checked in, and the key derivation's table) fail until the bump is made and the old fixtures still
//! replay the same.
//!
//! | version | covers | written where | an older one |
//! |---|---|---|---|
//! | [`STORE_VERSION`] | the store's tables and their key layout | the store's meta table | refused ([`crate::StoreError::NewerFormat`] for newer) |
//! | [`RECORD_VERSION`] | exchange and manifest records (JSON with `"v"`; 2 adds WebSocket messages, written only where there are some) | each record | read by its reader |
//! | [`BLOB_VERSION`] | body blob and chunk records | each record's first byte | read by its reader |
//! | [`KEY_VERSION`] | request keys (URL, body normalisation) and the path index | each manifest (`key_version`) | replay refuses it until `webfreeze snapshots migrate` re-derives its keys |
//! | [`BUNDLE_VERSION`] | bundle archives | each bundle's manifest | read by its reader |
//! | [`crate::UNION_VERSION`] | the site unions' entries derived at seal (the `unions` table, added to version-1 stores without a bump: a build before it never reads it, a read-only open of a store without it reads it empty) | each membership record | ignored: the replay checks and scans that member itself |
//!
//! Records are at version 2 (WebSocket messages; `format.rs` has the history), every other one at 1:
//! "read by its reader" is the rule each new version keeps.

/// The store's tables and the layout of their keys.
pub const STORE_VERSION: u32 = 1;
/// Exchange and manifest records.
pub const RECORD_VERSION: u32 = 2;
/// Blob and chunk records.
pub const BLOB_VERSION: u8 = 1;
/// How request keys and the path index are derived ([`crate::key`]): a snapshot's exact hits depend on
/// deriving its keys the way it was recorded.
pub const KEY_VERSION: u32 = 1;
/// Bundle archives (`webfreeze bundle`).
pub const BUNDLE_VERSION: u32 = 1;

/// The key version of manifests written before they recorded one (they were all made with version 1).
pub(crate) fn key_version_before_it_was_recorded() -> u32 {
    1
}
