//! The replay path's hot caches, shared by every connection of a replay: request keys by URL, exact
//! matches by key digest (the snapshot's and the overlays'), response heads by exchange, small bodies by
//! hash. Each is bounded by count.
//!
//! They are `quick_cache`'s concurrent caches, not an LRU behind one mutex each: an LRU moves the entry it
//! finds to the front, so even a hit took its cache's lock exclusively, and an exact hit took four such
//! locks (key, match, head, body), each held across a hash, a list update and a clone, shared by every
//! connection of a replay. `quick_cache` splits each cache into shards whose hits take a read lock (its
//! eviction policy, S3-FIFO-like, marks an entry on hit instead of moving it). Measured since, the caches
//! are not what costs at many connections: the allocator, dates parsed on every answer and header names
//! parsed from strings were (docs/BENCHMARKS.md, "Replay's CPU per small request, mended").
//! What is cached never changes while a replay runs, so which entries stay only changes how often the
//! store is read.

use bytes::Bytes;
use quick_cache::sync::Cache;

use crate::matcher::Match;
use crate::overlay::OverlayMatch;
use crate::serving::Head;
use crate::Keyed;

/// Entries of each cache but the bodies'.
const CACHE_MATCHES: usize = 4096;
/// Entries in the body cache (at most [`crate::serving::CACHE_BODY_MAX`] each: <= 128 MiB, typically far less).
const CACHE_BODIES: usize = 512;

/// See the module docs.
pub(crate) struct Caches {
    /// Keys of GET requests without a body already derived, by URL.
    pub(crate) keys: Cache<String, Keyed>,
    /// Exact-key matches already looked up (the snapshot is immutable while replayed).
    pub(crate) exact: Cache<[u8; 32], Match>,
    /// Exact-key answers of the overlays already looked up (overlays are immutable and keep no sequence
    /// state, so the same key gets the same overlay's answer).
    pub(crate) overlay_exact: Cache<[u8; 32], OverlayMatch>,
    /// Response heads already built, by snapshot id and exchange number (`serving::Head`).
    pub(crate) heads: Cache<(u64, u64), std::sync::Arc<Head>>,
    /// Hot bodies (up to [`crate::serving::CACHE_BODY_MAX`] each), so repeated requests skip the store.
    pub(crate) bodies: Cache<String, Bytes>,
}

impl Default for Caches {
    fn default() -> Self {
        Caches {
            keys: Cache::new(CACHE_MATCHES),
            exact: Cache::new(CACHE_MATCHES),
            overlay_exact: Cache::new(CACHE_MATCHES),
            heads: Cache::new(CACHE_MATCHES),
            bodies: Cache::new(CACHE_BODIES),
        }
    }
}
