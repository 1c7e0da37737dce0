//! Which snapshots of a site union could answer a request at all: [`PathSieve`] maps each host-and-path
//! (the store's path index digest, [`snapshots::path_digest`]) to the snapshots that recorded something
//! there. Every layer of the matcher (exact, scheme swapped, normalised, fuzzy) answers only from a
//! snapshot holding the request's host and path under one scheme or the other, so the union consults
//! only those, in its order, instead of probing each of its members in turn: a miss costs one hash
//! lookup whatever the number of members, a hit a probe of the members that hold the page.
//!
//! A sieve covers a set of snapshots by id, so the tasks of one site share it whatever each one's own layer
//! order is (`session` keeps one per site union). It reads either the union's entries the store derived
//! when each member was sealed ([`PathSieve::stored`]: nothing read at task start, one prefix read per new
//! address) or, for members sealed before unions were derived, each member's path index ([`PathSieve::build`],
//! one scan each, at the first task start of a process).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use snapshots::{Manifest, Store, StoreError};

/// Host-and-path digest -> ids of the snapshots holding it. See the module docs.
#[derive(Debug)]
pub struct PathSieve {
    source: Source,
    /// The snapshots it covers.
    covered: HashSet<u64>,
}

#[derive(Debug)]
enum Source {
    /// Read from the members' path indexes into memory.
    Built(HashMap<[u8; 32], Vec<u64>>),
    /// The union's entries derived at seal (`snapshots::Store::union_holders`), one prefix read per
    /// address, kept once read.
    Stored { store: Store, union: String, read: Mutex<HashMap<[u8; 32], Arc<[u64]>>> },
}

impl PathSieve {
    /// The sieve of `snapshots` (one scan of each one's path index).
    pub fn build<'a>(
        store: &Store,
        snapshots: impl IntoIterator<Item = &'a Manifest>,
    ) -> Result<Self, StoreError> {
        let mut by_path: HashMap<[u8; 32], Vec<u64>> = HashMap::new();
        let mut covered = HashSet::new();
        for m in snapshots {
            if !covered.insert(m.id) {
                continue;
            }
            for d in store.path_digests(m)? {
                by_path.entry(d).or_default().push(m.id);
            }
        }
        Ok(PathSieve { source: Source::Built(by_path), covered })
    }

    /// The sieve of the union `union` the store derived when its members were sealed
    /// (`snapshots::Store::join_union`), covering the members `ids`: nothing is read until a request asks.
    pub fn stored(store: &Store, union: &str, ids: impl IntoIterator<Item = u64>) -> Self {
        let source =
            Source::Stored { store: store.clone(), union: union.to_string(), read: Default::default() };
        PathSieve { source, covered: ids.into_iter().collect() }
    }

    /// Whether it covers the snapshot with this id.
    pub fn covers(&self, id: u64) -> bool {
        self.covered.contains(&id)
    }

    /// Whether it reads the union's stored entries ([`PathSieve::stored`]) rather than a built map.
    pub fn is_stored(&self) -> bool {
        matches!(self.source, Source::Stored { .. })
    }

    /// Ids of the snapshots holding `url`'s host and path (either scheme); None when the store could not
    /// tell (every covered snapshot may hold it).
    pub(crate) fn holders(&self, url: &str) -> Option<Vec<u64>> {
        let other = crate::matcher::swap_scheme(url);
        let mut out = self.holders_of(&snapshots::path_digest(url))?;
        if let Some(o) = other {
            out.extend(self.holders_of(&snapshots::path_digest(&o))?);
        }
        Some(out)
    }

    fn holders_of(&self, digest: &[u8; 32]) -> Option<Vec<u64>> {
        match &self.source {
            Source::Built(by_path) => Some(by_path.get(digest).cloned().unwrap_or_default()),
            Source::Stored { store, union, read } => {
                if let Some(ids) = read.lock().ok()?.get(digest) {
                    return Some(ids.to_vec());
                }
                let ids: Vec<u64> = match store.union_holders(union, digest) {
                    Ok(ids) => ids.into_iter().filter(|id| self.covered.contains(id)).collect(),
                    Err(e) => {
                        tracing::warn!(
                            "the site union's entries could not be read ({e}); probing each member"
                        );
                        return None;
                    }
                };
                if let Ok(mut r) = read.lock() {
                    r.insert(*digest, ids.clone().into());
                }
                Some(ids)
            }
        }
    }
}

/// A [`PathSieve`] laid over one replay's layers: for a request, the indexes of the layers to probe, in
/// order (those holding its address, and any the sieve does not cover). Made once per task start.
#[derive(Debug)]
pub struct LayerSieve {
    sieve: Arc<PathSieve>,
    /// Layer indexes by snapshot id.
    at: HashMap<u64, Vec<usize>>,
    /// Layers the sieve does not cover: always probed.
    uncovered: Vec<usize>,
    /// Number of layers.
    layers: usize,
}

impl LayerSieve {
    /// `sieve` over the layers whose snapshot ids are `layer_ids` (in the replay's order).
    pub fn new(sieve: Arc<PathSieve>, layer_ids: impl IntoIterator<Item = u64>) -> Self {
        let mut at: HashMap<u64, Vec<usize>> = HashMap::new();
        let mut uncovered = Vec::new();
        let mut layers = 0;
        for (i, id) in layer_ids.into_iter().enumerate() {
            layers = i + 1;
            if sieve.covers(id) {
                at.entry(id).or_default().push(i);
            } else {
                uncovered.push(i);
            }
        }
        LayerSieve { sieve, at, uncovered, layers }
    }

    /// The layers to probe for `url`, in the replay's order.
    pub fn probed(&self, url: &str) -> Vec<usize> {
        let Some(holders) = self.sieve.holders(url) else {
            return (0..self.layers).collect();
        };
        let mut out = self.uncovered.clone();
        out.extend(holders.iter().filter_map(|id| self.at.get(id)).flatten().copied());
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether the snapshot with this id recorded nothing at `url`'s host and path (either scheme); false
    /// when the sieve does not cover it.
    pub(crate) fn lacks(&self, id: u64, url: &str) -> bool {
        self.sieve.covers(id) && self.sieve.holders(url).is_some_and(|h| !h.contains(&id))
    }

    /// The sieve under it.
    pub fn sieve(&self) -> &PathSieve {
        &self.sieve
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holders_by_host_and_path_either_scheme() {
        let store = Store::in_memory();
        let snap = |name: &str, urls: &[&str]| {
            let rows: Vec<(&str, &str, &str)> = urls.iter().map(|u| ("GET", *u, "x")).collect();
            crate::tests::add_snapshot(&store, name, &rows)
        };
        let a = snap("r/a", &["https://s.test/p?x=1", "https://s.test/q"]);
        let b = snap("r/b", &["http://s.test/p", "https://t.test/p"]);
        // A third snapshot in the store's union but not covered: never named by the stored sieve.
        let c = snap("r/c", &["https://s.test/q"]);
        for m in [&a, &b, &c] {
            store.join_union("u", m).unwrap();
        }
        let built = PathSieve::build(&store, [&a, &b]).unwrap();
        let stored = PathSieve::stored(&store, "u", [a.id, b.id]);
        for sieve in [&built, &stored] {
            for (url, want) in [
                ("https://s.test/p?x=2", vec![a.id, b.id]),
                ("https://s.test/q", vec![a.id]),
                ("https://t.test/p", vec![b.id]),
                ("https://s.test/nowhere", vec![]),
            ] {
                // Twice: the stored sieve's second answer is the one it kept.
                for _ in 0..2 {
                    let mut got: Vec<u64> = sieve.holders(url).unwrap();
                    got.sort();
                    assert_eq!(got, want, "{url}");
                }
            }
            assert!(sieve.covers(a.id) && sieve.covers(b.id) && !sieve.covers(c.id));
        }
    }
}
