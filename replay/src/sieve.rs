//! Which snapshots of a site union could answer a request at all: [`PathSieve`] maps each host-and-path
//! (the store's path index digest, [`snapshots::path_digest`]) to the snapshots that recorded something
//! there. Every layer of the matcher (exact, scheme swapped, normalised, fuzzy) answers only from a
//! snapshot holding the request's host and path under one scheme or the other, so the union consults
//! only those, in its order, instead of probing each of its members in turn: a miss costs one hash
//! lookup whatever the number of members, a hit a probe of the members that hold the page.
//!
//! A sieve is built from the snapshots' path indexes (one scan each) and covers a set of snapshots by id,
//! so the tasks of one site share it whatever each one's own layer order is (`session` keeps one per
//! site union).

use std::collections::HashMap;

use snapshots::{Manifest, Store, StoreError};

/// Host-and-path digest -> ids of the snapshots holding it. See the module docs.
#[derive(Debug, Default)]
pub struct PathSieve {
    by_path: HashMap<[u8; 32], Vec<u64>>,
    /// The snapshots it covers.
    covered: std::collections::HashSet<u64>,
}

impl PathSieve {
    /// The sieve of `snapshots` (one scan of each one's path index).
    pub fn build<'a>(
        store: &Store,
        snapshots: impl IntoIterator<Item = &'a Manifest>,
    ) -> Result<Self, StoreError> {
        let mut s = PathSieve::default();
        for m in snapshots {
            if !s.covered.insert(m.id) {
                continue;
            }
            for d in store.path_digests(m)? {
                s.by_path.entry(d).or_default().push(m.id);
            }
        }
        Ok(s)
    }

    /// Whether it covers the snapshot with this id.
    pub fn covers(&self, id: u64) -> bool {
        self.covered.contains(&id)
    }

    /// Distinct host-and-path entries.
    pub fn len(&self) -> usize {
        self.by_path.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.by_path.is_empty()
    }

    /// Ids of the snapshots holding `url`'s host and path (either scheme).
    pub(crate) fn holders(&self, url: &str) -> impl Iterator<Item = u64> + '_ {
        let other = crate::matcher::swap_scheme(url);
        let a = self.by_path.get(&snapshots::path_digest(url));
        let b = other.and_then(|o| self.by_path.get(&snapshots::path_digest(&o)));
        a.into_iter().chain(b).flatten().copied()
    }
}

/// A [`PathSieve`] laid over one replay's layers: for a request, the indexes of the layers to probe, in
/// order (those holding its address, and any the sieve does not cover). Made once per task start.
#[derive(Debug)]
pub struct LayerSieve {
    sieve: std::sync::Arc<PathSieve>,
    /// Layer indexes by snapshot id.
    at: HashMap<u64, Vec<usize>>,
    /// Layers the sieve does not cover: always probed.
    uncovered: Vec<usize>,
}

impl LayerSieve {
    /// `sieve` over the layers whose snapshot ids are `layer_ids` (in the replay's order).
    pub fn new(sieve: std::sync::Arc<PathSieve>, layer_ids: impl IntoIterator<Item = u64>) -> Self {
        let mut at: HashMap<u64, Vec<usize>> = HashMap::new();
        let mut uncovered = Vec::new();
        for (i, id) in layer_ids.into_iter().enumerate() {
            if sieve.covers(id) {
                at.entry(id).or_default().push(i);
            } else {
                uncovered.push(i);
            }
        }
        LayerSieve { sieve, at, uncovered }
    }

    /// The layers to probe for `url`, in the replay's order.
    pub(crate) fn probed(&self, url: &str) -> Vec<usize> {
        let mut out = self.uncovered.clone();
        out.extend(self.sieve.holders(url).filter_map(|id| self.at.get(&id)).flatten().copied());
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether the snapshot with this id recorded nothing at `url`'s host and path (either scheme); false
    /// when the sieve does not cover it.
    pub(crate) fn lacks(&self, id: u64, url: &str) -> bool {
        self.sieve.covers(id) && !self.sieve.holders(url).any(|h| h == id)
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
        let sieve = PathSieve::build(&store, [&a, &b]).unwrap();
        for (url, want) in [
            ("https://s.test/p?x=2", vec![a.id, b.id]),
            ("https://s.test/q", vec![a.id]),
            ("https://t.test/p", vec![b.id]),
            ("https://s.test/nowhere", vec![]),
        ] {
            let mut got: Vec<u64> = sieve.holders(url).collect();
            got.sort();
            assert_eq!(got, want, "{url}");
        }
        assert!(sieve.covers(a.id) && sieve.covers(b.id) && !sieve.covers(a.id + b.id + 1));
    }
}
