//! A writer process killed with SIGKILL mid-recording leaves a store that opens (its lock died with it),
//! with the snapshot `interrupted` and every exchange whose append had returned present and readable.
//! While it writes, a second writer is refused naming it, and read-only openers see a consistent prefix.
//!
//! The test re-executes its own binary as the child (selected by an environment variable), which appends
//! exchanges forever and prints `wrote N` after each append returns.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use webfreeze_snapshots::{
    request_key, Exchange, ExchangeFlags, NewSnapshot, RequestRecord, ResponseRecord, Seed, SnapshotSource,
    SnapshotState, Store, StoreError, Timings,
};

const CHILD_ENV: &str = "WEBFREEZE_TEST_KILL_CHILD_STORE";

fn child_writer(dir: &str) -> ! {
    let store = Store::open(std::path::Path::new(dir)).unwrap();
    let w = store
        .create_snapshot(NewSnapshot {
            name: "victim".into(),
            created_ms: 1,
            seed: Seed { start_ms: 1, time_zone: "UTC".into() },
            source: SnapshotSource::Record,
            labels: BTreeMap::new(),
        })
        .unwrap();
    for i in 0u64.. {
        let url = format!("https://a.test/page/{i}");
        let body = format!("body number {i} ").repeat(50);
        let x = Exchange {
            seq: i,
            started_ms: i as i64,
            key: request_key("GET", &url, None, b"").unwrap().hex(),
            request: RequestRecord {
                method: "GET".into(),
                url,
                version: "HTTP/1.1".into(),
                headers: vec![],
                body: None,
            },
            response: ResponseRecord {
                status: 200,
                version: "HTTP/1.1".into(),
                headers: vec![],
                body: Some(store.put_blob(body.as_bytes()).unwrap()),
                content_encoding: None,
            },
            timings: Timings::default(),
            alpn: None,
            server_addr: None,
            flags: ExchangeFlags::default(),
            websocket: None,
        };
        w.append(x).unwrap();
        println!("wrote {i}");
    }
    unreachable!()
}

#[test]
fn sigkill_during_recording_leaves_an_interrupted_readable_snapshot() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        child_writer(&dir);
    }
    let dir = tempfile::tempdir().unwrap();
    let store_dir = dir.path().join("store");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "sigkill_during_recording_leaves_an_interrupted_readable_snapshot", "--nocapture"])
        .env(CHILD_ENV, &store_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut last_confirmed = None;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix("wrote ") {
            let n: u64 = n.trim().parse().unwrap();
            last_confirmed = Some(n);
            if n.is_multiple_of(100) && n < 300 {
                // A read-only opener in the middle of the writes sees a consistent prefix: the manifest
                // counts at least what the writer confirmed, and every exchange it confirmed reads back
                // whole (bodies hashed again by `verify`).
                let ro = Store::open_read_only(&store_dir).unwrap();
                let m = ro.manifest("victim").unwrap();
                assert_eq!(m.state, SnapshotState::Recording);
                assert!(m.counts.exchanges > n, "{} exchanges counted, {n} confirmed", m.counts.exchanges);
                for seq in 0..=n {
                    let x = ro.exchange(&m, seq).unwrap().unwrap_or_else(|| panic!("exchange {seq} unseen"));
                    let body = ro.blob_bytes(&x.response.body.unwrap().hash).unwrap();
                    assert_eq!(body, format!("body number {seq} ").repeat(50).into_bytes());
                }
                assert!(ro.verify(Some("victim")).unwrap().issues.is_empty(), "read-only verify mid-write");
            }
            if n == 300 {
                break;
            }
        }
    }
    // While the child writes: a second writer is refused with the holder named, a reader works.
    let err = Store::open(&store_dir).unwrap_err();
    assert!(matches!(err, StoreError::Locked { .. }), "{err}");
    assert!(err.to_string().contains(&format!("pid {}", child.id())), "{err}");
    let ro = Store::open_read_only(&store_dir).unwrap();
    assert_eq!(ro.manifest("victim").unwrap().state, SnapshotState::Recording);
    drop(ro);

    // SIGKILL (std's kill sends SIGKILL on Unix).
    child.kill().unwrap();
    child.wait().unwrap();
    let last = last_confirmed.expect("child wrote something");

    let store = Store::open(&store_dir).unwrap();
    let m = store.manifest("victim").unwrap();
    assert_eq!(m.state, SnapshotState::Interrupted);
    assert!(m.counts.exchanges > last, "counts recomputed: {} > {last}", m.counts.exchanges);
    for seq in 0..=last {
        let x = store.exchange(&m, seq).unwrap().unwrap_or_else(|| panic!("exchange {seq} lost"));
        let body = store.blob_bytes(&x.response.body.unwrap().hash).unwrap();
        assert_eq!(body, format!("body number {seq} ").repeat(50).into_bytes());
    }
    assert!(store.verify(None).unwrap().issues.is_empty());
}
