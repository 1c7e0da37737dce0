//! One path sieve ([`replay::sieve::PathSieve`]) per site union, shared by every task of a replay that
//! consults it: the sieve is built on the first task start (one scan of each member's path index) and
//! found again by the next tasks, whose layers are the same snapshots in another order. With it a request
//! probes only the members holding its address, so a union of a thousand recordings costs a miss one hash
//! lookup instead of a thousand store probes.
//!
//! Kept per process, keyed by the store's directory and each covered snapshot's id, exchange count and
//! creation time (a snapshot replaced under the same name is another key); a few unions at most are kept.
//! An in-memory store (tests, embedders) gets a sieve per task start. Small unions get none: probing a
//! handful of members costs less than building it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use replay::overlay::Overlay;
use replay::sieve::{LayerSieve, PathSieve};
use snapshots::{Manifest, Store};

/// Unions with fewer layers than this are probed layer by layer.
const MIN_LAYERS: usize = 8;
/// Unions kept at once.
const KEPT: usize = 4;

type Key = (PathBuf, Vec<(u64, u64, i64)>);

static SIEVES: Mutex<Vec<(Key, Arc<PathSieve>)>> = Mutex::new(Vec::new());

/// The sieve of `layers` and `own` (its path part built once per union per process) laid over `layers`, or
/// None for a small union or
/// when a path index cannot be read (the union is then probed layer by layer, as without a sieve).
pub fn sieve_for(store: &Store, own: &Manifest, layers: &[Overlay]) -> Option<Arc<LayerSieve>> {
    let sieve = path_sieve(store, own, layers)?;
    Some(Arc::new(LayerSieve::new(sieve, layers.iter().map(|l| l.manifest.id))))
}

fn path_sieve(store: &Store, own: &Manifest, layers: &[Overlay]) -> Option<Arc<PathSieve>> {
    if layers.len() < MIN_LAYERS {
        return None;
    }
    let all = || std::iter::once(own).chain(layers.iter().map(|l| &l.manifest));
    let build = || match PathSieve::build(store, all()) {
        Ok(s) => Some(Arc::new(s)),
        Err(e) => {
            tracing::warn!("the site union's path sieve could not be built ({e}); probing each member");
            None
        }
    };
    let Some(dir) = store.path() else { return build() };
    let mut ids: Vec<(u64, u64, i64)> = all().map(|m| (m.id, m.counts.exchanges, m.created_ms)).collect();
    ids.sort_unstable();
    ids.dedup();
    let key: Key = (dir.to_path_buf(), ids);
    if let Some(s) = SIEVES.lock().ok()?.iter().find(|(k, _)| *k == key).map(|(_, s)| s.clone()) {
        return Some(s);
    }
    let sieve = build()?;
    if let Ok(mut kept) = SIEVES.lock() {
        if kept.len() >= KEPT {
            kept.remove(0);
        }
        kept.push((key, sieve.clone()));
    }
    Some(sieve)
}
