//! One frozen search index per process and set of snapshots, shared by every replay that searches them.
//!
//! A task's replay searches its own snapshot and its overlays (the site union, explorations, the crawl):
//! for every task of a site the same snapshots, each task's own first. Loading and joining their indexes
//! per replay cost each concurrent task 531-699 ms and about 190 MiB at 100,000 pages (issue 61). Here
//! the first replay to search loads and joins them ([`Joined`]); the next replays over the same set, in
//! any order, get a view of the same files ([`Joined::view`]: only which copy of a URL held twice is
//! hidden depends on the order, and the ranking statistics do not). A replay that starts while the first
//! is still loading waits for that load instead of making its own. A held-out task's replay
//! (`webfreeze coverage`: its own snapshot not searched) shares the index of its whole site, own snapshot
//! included, and its view hides that snapshot's documents: every held-out task of a site shares one load.
//!
//! Kept per process by the store's directory and, per snapshot, what its index is made of (id, name,
//! exchange count, creation time, and its stored index's version and blob): a snapshot replaced or
//! re-indexed is another key. The process keeps only weak references: once no replay holds an index its
//! memory is released, and the next replay loads it again. An in-memory store (tests, embedders) has no
//! directory to name it by: each of its replays loads its own.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use snapshots::{Manifest, Store};

use super::index::{Joined, SearchIndex};
use super::{documents, load_index, SearchIndexError};

/// A snapshot as its index is made of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct PartKey {
    id: u64,
    name: String,
    exchanges: u64,
    created_ms: i64,
    /// The stored index's version, blob and document count.
    stored: Option<(u32, String, u64)>,
}

/// The store's directory and the snapshots, by id.
type Key = (PathBuf, Vec<PartKey>);

/// One joined index, loaded once by whichever replay asked first.
#[derive(Debug)]
struct Slot {
    /// The snapshot ids in the order they were joined.
    ids: Vec<u64>,
    joined: OnceLock<Result<Loaded, Arc<SearchIndexError>>>,
}

#[derive(Debug)]
struct Loaded {
    joined: Joined,
    /// Which load of this process made it (counted from 1).
    load: u64,
}

static SHARED: Mutex<Vec<(Key, Weak<Slot>)>> = Mutex::new(Vec::new());
static LOADS: AtomicU64 = AtomicU64::new(0);

/// A replay's frozen search index: its view of the index it shares with the other replays of the same
/// snapshots (see the module docs).
#[derive(Debug)]
pub struct SharedIndex {
    slot: Arc<Slot>,
    view: Result<SearchIndex, Arc<SearchIndexError>>,
}

impl SharedIndex {
    /// The index, or why it could not be loaded (the same error for every replay sharing it).
    pub fn get(&self) -> Result<&SearchIndex, &SearchIndexError> {
        self.view.as_ref().map_err(|e| e.as_ref())
    }

    /// Which load of this process made the index (replays sharing it have the same), None if it failed.
    pub fn load(&self) -> Option<u64> {
        self.slot.joined.get().and_then(|l| l.as_ref().ok()).map(|l| l.load)
    }
}

/// The frozen search index of `snapshots` (in replay order: the first that holds a URL answers for it),
/// loaded once per process and set of snapshots and shared (see the module docs). `held_out`: a snapshot the
/// replay does not search (a held-out task's own, `webfreeze coverage`) but whose siblings do: the index
/// shared is the one of `snapshots` and it, so every held-out task of a site shares one load, and this
/// replay's view hides its documents. Store work: call it off the async workers.
pub fn shared_index(store: &Store, snapshots: &[&Manifest], held_out: Option<&Manifest>) -> SharedIndex {
    let mut ordered: Vec<&Manifest> = Vec::with_capacity(snapshots.len());
    for m in snapshots {
        if !ordered.iter().any(|o| o.id == m.id) {
            ordered.push(m);
        }
    }
    let mut loaded_set = ordered.clone();
    if let Some(h) = held_out.filter(|h| !ordered.iter().any(|o| o.id == h.id)) {
        loaded_set.push(h);
    }
    let slot = slot_for(store, &loaded_set);
    let loaded = slot.joined.get_or_init(|| {
        let joined = load(store, &loaded_set).map_err(Arc::new)?;
        Ok(Loaded { joined, load: LOADS.fetch_add(1, Ordering::Relaxed) + 1 })
    });
    let view = match loaded {
        Ok(l) => {
            let order: Vec<usize> =
                ordered.iter().filter_map(|m| slot.ids.iter().position(|id| *id == m.id)).collect();
            Ok(l.joined.view(&order))
        }
        Err(e) => Err(e.clone()),
    };
    SharedIndex { slot, view }
}

/// The slot of `snapshots`' index: the one a live replay holds, else a new one (kept when the store has a
/// directory to name it by).
fn slot_for(store: &Store, snapshots: &[&Manifest]) -> Arc<Slot> {
    let new = || Arc::new(Slot { ids: snapshots.iter().map(|m| m.id).collect(), joined: OnceLock::new() });
    let Some(dir) = store.path() else { return new() };
    let mut parts: Vec<PartKey> = snapshots
        .iter()
        .map(|m| PartKey {
            id: m.id,
            name: m.name.clone(),
            exchanges: m.counts.exchanges,
            created_ms: m.created_ms,
            stored: m.search_index.as_ref().map(|r| (r.version, r.hash.clone(), r.items)),
        })
        .collect();
    parts.sort();
    let key: Key = (dir.to_path_buf(), parts);
    let Ok(mut shared) = SHARED.lock() else { return new() };
    shared.retain(|(_, w)| w.strong_count() > 0);
    if let Some(slot) = shared.iter().find(|(k, _)| *k == key).and_then(|(_, w)| w.upgrade()) {
        return slot;
    }
    let slot = new();
    shared.push((key, Arc::downgrade(&slot)));
    slot
}

/// Each snapshot's stored index (derived in memory when it has none usable), joined.
fn load(store: &Store, snapshots: &[&Manifest]) -> Result<Joined, SearchIndexError> {
    let mut parts = Vec::new();
    for m in snapshots {
        let engine = |source| SearchIndexError::Engine { snapshot: m.name.clone(), source };
        match load_index(store, m)? {
            Some(ix) => parts.push(ix),
            None => parts.push(
                SearchIndex::build(
                    documents(store, m)
                        .map_err(|source| SearchIndexError::Read { snapshot: m.name.clone(), source })?,
                )
                .map_err(engine)?,
            ),
        }
    }
    let name = snapshots.first().map(|m| m.name.clone()).unwrap_or_default();
    Joined::new(parts).map_err(|source| SearchIndexError::Engine { snapshot: name, source })
}
