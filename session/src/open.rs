//! Opening one snapshot for recording or for replay: what `webfreeze record` and `webfreeze replay` (one
//! proxy, one snapshot, the user's options) and the task proxy (one per task, a run's options) share, so
//! each rule is written once:
//! - a replay's store is writable only when it records its misses ([`replay_store`]);
//! - a replayed snapshot must resolve ([`replay_target`]), and its misses go to `SNAPSHOT/misses` unless
//!   named ([`ReplayTarget::open`], after the caller has decided the replay's layers);
//! - a replay's handler is assembled in one place ([`OpenedReplay::assemble`]: `replay::ReplayConfig` from
//!   what the caller decided, [`ReplayServing`]), and its misses are guarded exactly when they can reach
//!   the live web ([`misses_go_live`]);
//! - a recording is seeded with its start and time zone, and the page gets the shim its replays will
//!   inject, seeded by the snapshot's name and start ([`open_record`]).
//!
//! What each caller adds stays with it: what the replay serves (layers, search, refresh: its flags or its
//! run's settings) and how the proxy is served.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use clock::Clock;
use proxy_report::wire::WireTap;
use recorder::{HostFilter, Recorder};
use replay::overlay::Overlays;
use replay::rules::Rules;
use replay::search::SearchConfig;
use replay::websocket::WsPacing;
use replay::{MissPolicy, NotCaptured, OnMiss, Replay, ReplayConfig};
use snapshots::{Manifest, NewSnapshot, Seed, SnapshotSource, SnapshotWriter, Store, StoreError};

use crate::error::SessionError;

/// The store a replay with miss policy `on_miss` opens: read-only unless it records its misses, so sealed
/// replays (and a recorder) can share one store.
pub fn replay_store(path: &Path, on_miss: MissPolicy) -> Result<Store, StoreError> {
    match on_miss {
        MissPolicy::Record => Store::open(path),
        MissPolicy::NotFound | MissPolicy::Live => Store::open_read_only(path),
    }
}

/// Whether a replay with miss policy `on_miss` can reach the live web, so that its misses go through the
/// side-effect and contamination guards: every policy but answering 404. What replay answers never leaves.
pub fn misses_go_live(on_miss: MissPolicy) -> bool {
    !matches!(on_miss, MissPolicy::NotFound)
}

/// A snapshot checked for replay: its index resolves. What the caller decides from it (the layers of its
/// frozen web) comes before [`ReplayTarget::open`], which is the first step that writes (a misses snapshot),
/// so a refused replay leaves nothing behind.
pub struct ReplayTarget<'a> {
    store: &'a Store,
    manifest: Manifest,
}

/// Checks a snapshot for replay: a snapshot whose index does not resolve would answer 404 to every page.
/// The caller looks it up (and says whose it is when it is missing).
pub fn replay_target(store: &Store, manifest: Manifest) -> Result<ReplayTarget<'_>, SessionError> {
    store.check_snapshot(&manifest)?;
    Ok(ReplayTarget { store, manifest })
}

/// What a replay does with its misses.
pub struct MissesOpening {
    /// What a miss does.
    pub on_miss: MissPolicy,
    /// Where recorded misses go (None: `SNAPSHOT/misses`).
    pub misses: Option<String>,
    /// An earlier misses snapshot of the same name is the caller's own, replaced (a run's task); when
    /// false it is refused by the store, never replaced (a name the user gave).
    pub replace_misses: bool,
    /// The clock the misses' recording is seeded with.
    pub clock: Arc<dyn Clock>,
}

/// A snapshot opened for replay.
pub struct OpenedReplay {
    /// The replayed snapshot.
    pub manifest: Manifest,
    /// The miss policy asked for.
    pub policy: MissPolicy,
    /// What a miss does.
    pub on_miss: OnMiss,
    /// The misses' recording (`--on-miss record`), sealed by the caller when the replay ends.
    pub miss_writer: Option<Arc<SnapshotWriter>>,
    /// Where misses are recorded.
    pub misses: String,
}

impl ReplayTarget<'_> {
    /// The checked snapshot.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Sets up the misses as asked: the replay is open.
    pub fn open(self, o: MissesOpening) -> Result<OpenedReplay, SessionError> {
        let misses = o.misses.unwrap_or_else(|| crate::names::misses_name(&self.manifest.name));
        if o.replace_misses && o.on_miss == MissPolicy::Record && self.store.manifest(&misses).is_ok() {
            self.store.remove(&misses)?;
        }
        let (on_miss, miss_writer) = OnMiss::start(o.on_miss, self.store, &misses, &self.manifest, o.clock)?;
        Ok(OpenedReplay { manifest: self.manifest, policy: o.on_miss, on_miss, miss_writer, misses })
    }
}

/// What a replay serves besides its snapshot, and how: decided by its caller (`webfreeze replay`'s flags,
/// a run's frozen web), turned into `replay::ReplayConfig` by [`OpenedReplay::assemble`] alone.
pub struct ReplayServing {
    /// Volatile-parameter rules.
    pub rules: Rules,
    /// The proxy injects the determinism shim into HTML (false when the browser installs it itself).
    pub inject_shim: bool,
    /// Fuzzy candidates scoring under this are misses (clamped to 0..1).
    pub fuzzy_min_score: f64,
    /// Exchanges recorded without their body.
    pub not_captured: NotCaptured,
    /// Serve freshness as recorded, relative to now on this clock; None serves it as stored.
    pub refresh: Option<Arc<dyn Clock>>,
    /// What else answers what the snapshot lacks.
    pub overlays: Overlays,
    /// The frozen search engine.
    pub search: SearchConfig,
    /// How recorded WebSocket server messages are timed.
    pub ws_pacing: WsPacing,
    /// Where each answered request goes (a wire log).
    pub wire: Option<Arc<dyn WireTap>>,
    /// Answer only from the overlays, never from the snapshot itself.
    pub hide_own: bool,
}

/// The shim's clock step per read, in ms: record and replay alike, whoever serves them.
pub const SHIM_STEP_MS: u32 = 1;

/// A replay ready to serve.
pub struct AssembledReplay {
    /// The handler.
    pub replay: Arc<Replay>,
    /// The misses' recording (`--on-miss record`), sealed by the caller when the replay ends
    /// (`crate::seal::finalize`).
    pub miss_writer: Option<Arc<SnapshotWriter>>,
    /// Where misses are recorded.
    pub misses: String,
    /// Its misses can reach the live web: serve it behind the guards ([`misses_go_live`]).
    pub guard_misses: bool,
}

impl OpenedReplay {
    /// The replay handler over `store`, serving as `s` says.
    pub fn assemble(self, store: &Store, s: ReplayServing) -> AssembledReplay {
        let config = ReplayConfig {
            on_miss: self.on_miss,
            rules: s.rules,
            inject_shim: s.inject_shim,
            shim_step_ms: SHIM_STEP_MS,
            fuzzy_min_score: s.fuzzy_min_score.clamp(0.0, 1.0),
            not_captured: s.not_captured,
            refresh: s.refresh.map(replay::Refresh),
            overlays: s.overlays,
            search: s.search,
            ws_pacing: s.ws_pacing,
            wire: s.wire,
            hide_own: s.hide_own,
        };
        AssembledReplay {
            replay: Arc::new(Replay::new(store.clone(), self.manifest, config)),
            miss_writer: self.miss_writer,
            misses: self.misses,
            guard_misses: misses_go_live(self.policy),
        }
    }
}

/// A snapshot opened for recording.
pub struct OpenedRecording {
    /// Its writer, sealed (or marked interrupted) by the caller.
    pub writer: Arc<SnapshotWriter>,
    /// A recorder into it (wrap it in an `Arc` once configured).
    pub recorder: Recorder,
    /// The determinism shim its replays inject, seeded by the snapshot's name and start: the page gets
    /// the same clock and random numbers now as in every replay.
    pub shim_js: String,
    /// When it started (its seed's start).
    pub started_ms: i64,
}

/// How to open a snapshot for recording.
pub struct RecordOpening<'a> {
    /// The store.
    pub store: &'a Store,
    /// The new snapshot.
    pub name: &'a str,
    /// The time zone the pages see.
    pub time_zone: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// Which hosts are recorded.
    pub hosts: HostFilter,
    /// The shim's clock step, ms.
    pub shim_step_ms: u32,
    /// The recording's clock (its start is the snapshot's seed).
    pub clock: Arc<dyn Clock>,
}

/// Opens a new snapshot for recording (the store refuses a name in use).
pub fn open_record(o: RecordOpening<'_>) -> Result<OpenedRecording, StoreError> {
    let started = o.clock.now_ms();
    let writer = Arc::new(o.store.create_snapshot(NewSnapshot {
        name: o.name.to_string(),
        created_ms: started,
        seed: Seed { start_ms: started, time_zone: o.time_zone },
        source: SnapshotSource::Record,
        labels: o.labels,
    })?);
    let recorder = Recorder::new(writer.clone(), o.clock, o.hosts);
    let shim_js = replay::shim::for_snapshot(o.name, started, o.shim_step_ms);
    Ok(OpenedRecording { writer, recorder, shim_js, started_ms: started })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock() -> Arc<dyn Clock> {
        Arc::new(clock::FixedClock::new(1_000))
    }

    #[test]
    fn misses_go_where_asked_and_a_runs_own_are_replaced() {
        let store = Store::in_memory();
        let own = crate::union_sieve::tests::record_named(
            &store,
            "r/t",
            Default::default(),
            &["https://s.test/".into()],
        );
        let open = |on_miss: MissPolicy, misses: Option<&str>, replace: bool| {
            replay_target(&store, own.clone()).unwrap().open(MissesOpening {
                on_miss,
                misses: misses.map(String::from),
                replace_misses: replace,
                clock: clock(),
            })
        };
        let first = open(MissPolicy::Record, None, true).unwrap();
        assert_eq!(first.misses, "r/t/misses");
        first.miss_writer.unwrap().finalize(2).unwrap();
        // A run's own misses are replaced; a name the user gave is never.
        assert!(open(MissPolicy::Record, None, true).is_ok());
        assert!(open(MissPolicy::Record, Some("r/t/misses"), false).is_err());
        assert!(open(MissPolicy::NotFound, None, false).unwrap().miss_writer.is_none());
    }

    #[test]
    fn a_recording_is_seeded_and_its_shim_is_its_replays() {
        let store = Store::in_memory();
        let r = open_record(RecordOpening {
            store: &store,
            name: "rec",
            time_zone: "Europe/Paris".into(),
            labels: BTreeMap::from([("k".to_string(), "v".to_string())]),
            hosts: HostFilter::new(&[], &[]),
            shim_step_ms: 1,
            clock: clock(),
        })
        .unwrap();
        let m = r.writer.finalize(2).unwrap();
        assert_eq!((m.seed.start_ms, m.seed.time_zone.as_str()), (1_000, "Europe/Paris"));
        assert_eq!(m.labels["k"], "v");
        assert_eq!(r.shim_js, replay::shim::for_snapshot("rec", 1_000, 1));
    }
}
