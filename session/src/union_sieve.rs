//! A site union as a replay reads it: the members the store vouches for ([`StoredUnion`], derived when
//! each was sealed: `crate::seal`) and one path sieve ([`replay::sieve::PathSieve`]) per union, shared by
//! every task of a replay that consults it. With the sieve a request probes only the members holding its
//! address, so a union of a thousand recordings costs a miss one lookup instead of a thousand store probes.
//!
//! When the store holds the union's entries for every layer (each joined it when sealed, and has not
//! changed since), a task start reads nothing per member: the sieve reads the union's entries per address
//! as requests ask. Otherwise (members sealed by a webfreeze before unions were derived) each member is
//! checked and the sieve is built from every member's path index on the first task start of the process,
//! and found again by the next tasks, whose layers are the same snapshots in another order.
//!
//! Kept per process, keyed by the store's directory and each covered snapshot's id, exchange count and
//! creation time (a snapshot replaced under the same name is another key); a few unions at most are kept.
//! An in-memory store (tests, embedders) gets a sieve per task start. Small unions get none: probing a
//! handful of members costs less than building it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use replay::overlay::Overlay;
use replay::sieve::{LayerSieve, PathSieve};
use snapshots::{Manifest, SnapshotState, Store, UnionMember};

/// The members of a site union the store holds entries for (`snapshots::Store::join_union`).
#[derive(Debug, Clone, Default)]
pub struct StoredUnion {
    name: String,
    members: HashMap<u64, UnionMember>,
}

impl StoredUnion {
    /// The stored entries of the site union of `web_name` in recording `run` (empty when none were stored,
    /// or they cannot be read: the members are then checked one by one).
    pub fn load(store: &Store, run: &str, web_name: &str) -> Self {
        let name = crate::names::site_union_name(run, web_name);
        let members = match store.union_members(&name) {
            Ok(m) => m.into_iter().map(|m| (m.id, m)).collect(),
            Err(e) => {
                tracing::warn!(
                    "the site union's stored entries could not be read ({e}); checking each member"
                );
                HashMap::new()
            }
        };
        StoredUnion { name, members }
    }

    /// Whether `m` joined the union sealed as it is now (same id, exchange count and key version, which is
    /// this build's): it was checked then and its path entries are the union's.
    pub fn vouches(&self, m: &Manifest) -> bool {
        m.state != SnapshotState::Recording
            && m.key_version == snapshots::version::KEY_VERSION
            && self.members.get(&m.id).is_some_and(|u| {
                u.name == m.name && u.exchanges == m.counts.exchanges && u.key_version == m.key_version
            })
    }
}

/// Unions with fewer layers than this are probed layer by layer.
const MIN_LAYERS: usize = 8;
/// Unions kept at once.
const KEPT: usize = 4;

/// The store's directory, whether the sieve reads the stored entries, and the covered snapshots.
type Key = (PathBuf, bool, Vec<(u64, u64, i64)>);

static SIEVES: Mutex<Vec<(Key, Arc<PathSieve>)>> = Mutex::new(Vec::new());

/// The sieve of `layers` and `own` laid over `layers` (read from the union's stored entries when `stored`
/// vouches for all of them, else built once per union per process), or None for a small union or when a
/// path index cannot be read (the union is then probed layer by layer, as without a sieve).
pub(crate) fn sieve_for(
    store: &Store,
    own: &Manifest,
    layers: &[Overlay],
    stored: &StoredUnion,
) -> Option<Arc<LayerSieve>> {
    let sieve = path_sieve(store, own, layers, stored)?;
    Some(Arc::new(LayerSieve::new(sieve, layers.iter().map(|l| l.manifest.id))))
}

fn path_sieve(
    store: &Store,
    own: &Manifest,
    layers: &[Overlay],
    stored: &StoredUnion,
) -> Option<Arc<PathSieve>> {
    if layers.len() < MIN_LAYERS {
        return None;
    }
    let all = || std::iter::once(own).chain(layers.iter().map(|l| &l.manifest));
    let from_store = all().all(|m| stored.vouches(m));
    let build = || match from_store {
        true => Some(Arc::new(PathSieve::stored(store, &stored.name, all().map(|m| m.id)))),
        false => match PathSieve::build(store, all()) {
            Ok(s) => Some(Arc::new(s)),
            Err(e) => {
                tracing::warn!("the site union's path sieve could not be built ({e}); probing each member");
                None
            }
        },
    };
    let Some(dir) = store.path() else { return build() };
    let mut ids: Vec<(u64, u64, i64)> = all().map(|m| (m.id, m.counts.exchanges, m.created_ms)).collect();
    ids.sort_unstable();
    ids.dedup();
    let key: Key = (dir.to_path_buf(), from_store, ids);
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

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::BTreeMap;

    use snapshots::{NewSnapshot, Seed, SnapshotSource};

    use super::*;
    use crate::frozen_web::{union_layers, UnionLayers};

    /// Task `i` of recording `run` on site `S`: a page every task saw and `pages` of its own.
    fn record(store: &Store, i: usize, pages: usize) -> Manifest {
        let labels =
            BTreeMap::from([("run".to_string(), "run".to_string()), ("web_name".into(), "S".into())]);
        let urls: Vec<String> = std::iter::once("https://s.test/".to_string())
            .chain((0..pages).map(|p| format!("https://s.test/t{i}/{p}")))
            .collect();
        record_named(store, &format!("run/t{i:02}"), labels, &urls)
    }

    /// A sealed snapshot `name` of plain-text GETs of `urls` (each body its URL).
    pub(crate) fn record_named(
        store: &Store,
        name: &str,
        labels: BTreeMap<String, String>,
        urls: &[String],
    ) -> Manifest {
        let w = store
            .create_snapshot(NewSnapshot {
                name: name.into(),
                created_ms: 1,
                seed: Seed { start_ms: 1, time_zone: "UTC".into() },
                source: SnapshotSource::Record,
                labels,
            })
            .unwrap();
        for (seq, url) in urls.iter().enumerate() {
            w.append(
                snapshots::fixtures::exchange(store, seq as u64, "GET", url, "text/plain", url.as_bytes())
                    .unwrap(),
            )
            .unwrap();
        }
        w.finalize(2).unwrap()
    }

    fn layers(store: &Store) -> replay::overlay::Overlays {
        let own = store.manifest("run/t00").unwrap();
        union_layers(store, &own, UnionLayers { run: Some("run"), explore: true, ..Default::default() })
            .unwrap()
    }

    fn stored(o: &replay::overlay::Overlays) -> bool {
        o.sieve.as_ref().expect("a union of 12 gets a sieve").sieve().is_stored()
    }

    /// Sealed now, a union is read from the store's entries; a member sealed before them, or changed since
    /// it joined, makes the replay check and scan every member instead, with the same layers.
    #[test]
    fn a_union_is_read_from_the_store_only_when_it_vouches_for_every_layer() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        for i in 0..12 {
            let m = record(&store, i, 2);
            assert!(crate::seal::join_site_union(&store, &m.name).unwrap().is_some());
        }
        let o = layers(&store);
        assert_eq!(o.layers.len(), 11);
        assert!(stored(&o));
        let names = |o: &replay::overlay::Overlays| -> Vec<String> {
            o.layers.iter().map(|l| l.manifest.name.clone()).collect()
        };
        let first = names(&o);

        // Recorded again without joining (a webfreeze before unions, or a seal whose step failed).
        store.remove("run/t05").unwrap();
        record(&store, 5, 3);
        let o = layers(&store);
        assert_eq!(names(&o), first);
        assert!(!stored(&o), "a member the store does not vouch for: the sieve is built");
        let holders = |o: &replay::overlay::Overlays, url: &str| o.sieve.as_ref().unwrap().probed(url).len();
        assert_eq!(holders(&o, "https://s.test/t5/2"), 1, "the new page is found by the built sieve");

        // Joined: read from the store again, and it holds the new page.
        crate::seal::join_site_union(&store, "run/t05").unwrap();
        let o = layers(&store);
        assert!(stored(&o));
        assert_eq!((holders(&o, "https://s.test/t5/2"), holders(&o, "https://s.test/")), (1, 11));
        assert_eq!(holders(&o, "https://s.test/nowhere"), 0);
    }
}
