//! Task proxies without a browser: what record and replay must agree on, and sealing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use clock::FixedClock;
use proxy::{CertificateAuthority, ProxyConfig};
use session::{snapshot_name, FrozenWeb, MissPolicy, ProxyMode, SessionError, TaskProxy, TaskProxyOptions};
use snapshots::{SnapshotState, Store};

fn setup() -> (tempfile::TempDir, Arc<CertificateAuthority>, TaskProxyOptions) {
    let home = tempfile::tempdir().unwrap();
    #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
    let now = time::OffsetDateTime::now_utc();
    let ca = Arc::new(CertificateAuthority::init(&home.path().join("ca"), true, now).unwrap());
    let opts = TaskProxyOptions {
        task_id: "Shop--1".into(),
        web_name: "Shop".into(),
        proxy: ProxyConfig::default(),
        clock: Arc::new(FixedClock::new(1_700_000_000_000)),
        time_zone: "Europe/Paris".into(),
        locale: "fr_FR".into(),
        explore: false,
        guard: None,
        wire: None,
    };
    (home, ca, opts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_and_replay_install_the_same_shim_and_emulation() {
    let (_home, ca, opts) = setup();
    let store = Store::in_memory();
    let rec = ProxyMode::Record { store: store.clone(), run: "runA".into(), run_dir: "/runs/runA".into() };
    let tp = TaskProxy::start(&rec, ca.clone(), &opts).await.unwrap();
    assert_eq!(tp.snapshot(), Some(snapshot_name("runA", "Shop--1").as_str()));
    let recorded = (tp.init_scripts().to_vec(), tp.time_zone().map(str::to_string), tp.locale().to_string());
    assert_eq!(tp.ca_spki(), ca.info().spki_sha256);
    tp.finish().await.unwrap();
    let m = store.manifest("runA/Shop--1").unwrap();
    assert_eq!(m.state, SnapshotState::Complete);
    assert_eq!(m.seed.start_ms, 1_700_000_000_000);
    assert_eq!(m.labels["run_dir"], "/runs/runA");

    // Replay reads locale and time zone from the snapshot, whatever the replaying side asks for.
    let mut other = opts.clone();
    other.time_zone = "UTC".into();
    other.locale = "en_US".into();
    other.clock = Arc::new(FixedClock::new(5));
    let rep = ProxyMode::Replay {
        store: store.clone(),
        run: "runA".into(),
        on_miss: MissPolicy::NotFound,
        frozen_web: FrozenWeb::recorded(),
    };
    let tp = TaskProxy::start(&rep, ca.clone(), &other).await.unwrap();
    let replayed = (tp.init_scripts().to_vec(), tp.time_zone().map(str::to_string), tp.locale().to_string());
    assert_eq!(replayed, recorded);
    assert_eq!(recorded.0.len(), 1);
    assert!(recorded.0[0].contains("var seed = 1700000000000"), "the shim starts at the recording's start");
    tp.finish().await.unwrap();

    // Another snapshot name seeds the generator differently.
    let rec_b = ProxyMode::Record { store: store.clone(), run: "runB".into(), run_dir: "/runs/runB".into() };
    let tp = TaskProxy::start(&rec_b, ca, &opts).await.unwrap();
    assert_ne!(tp.init_scripts(), recorded.0.as_slice());
    tp.finish().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_session_seals_its_snapshots_interrupted() {
    let (_home, ca, opts) = setup();
    let store = Store::in_memory();
    let rec = ProxyMode::Record { store: store.clone(), run: "r".into(), run_dir: "d".into() };
    let tp = TaskProxy::start(&rec, ca.clone(), &opts).await.unwrap();
    let addr = tp.addr();
    drop(tp);
    assert_eq!(store.manifest("r/Shop--1").unwrap().state, SnapshotState::Interrupted);
    // The proxy stopped with it.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while tokio::net::TcpStream::connect(addr).await.is_ok() {
        assert!(tokio::time::Instant::now() < deadline, "the dropped session's proxy still accepts");
        tokio::task::yield_now().await;
    }

    // Replay with record-on-miss: the misses snapshot is sealed too.
    let tp = TaskProxy::start(&rec, ca.clone(), &opts).await.unwrap();
    tp.finish().await.unwrap();
    let rep = ProxyMode::Replay {
        store: store.clone(),
        run: "r".into(),
        on_miss: MissPolicy::Record,
        frozen_web: FrozenWeb::recorded(),
    };
    let tp = TaskProxy::start(&rep, ca.clone(), &opts).await.unwrap();
    drop(tp);
    assert_eq!(store.manifest("r/Shop--1/misses").unwrap().state, SnapshotState::Interrupted);
    assert_eq!(store.manifest("r/Shop--1").unwrap().state, SnapshotState::Complete);

    // Replaying a task that was never recorded says how to record it.
    let mut missing = opts.clone();
    missing.task_id = "Nope--9".into();
    let e = TaskProxy::start(&rep, ca, &missing).await.unwrap_err();
    assert!(matches!(e, SessionError::NoSnapshot { .. }), "{e}");
    assert!(e.to_string().contains("--mode record"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_refuses_a_snapshot_whose_index_no_longer_resolves() {
    let (_home, ca, opts) = setup();
    let store = Store::in_memory();
    let rec = ProxyMode::Record { store: store.clone(), run: "r".into(), run_dir: "d".into() };
    TaskProxy::start(&rec, ca.clone(), &opts).await.unwrap().finish().await.unwrap();
    // An empty recording is consistent; one whose manifest counts exchanges the store lost is not.
    let mut m = store.manifest("r/Shop--1").unwrap();
    store.check_snapshot(&m).unwrap();
    m.counts.exchanges = 3;
    store.put_manifest(&m).unwrap();
    let rep = ProxyMode::Replay {
        store,
        run: "r".into(),
        on_miss: MissPolicy::NotFound,
        frozen_web: FrozenWeb::recorded(),
    };
    let e = TaskProxy::start(&rep, ca, &opts).await.unwrap_err();
    assert!(e.to_string().contains("snapshots verify r/Shop--1"), "{e}");
}
