//! Store behaviour, run against both backends (RocksDB on a temp dir, and the in-memory twin).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use std::collections::BTreeMap;
use std::io::Read;

use webfreeze_snapshots::format::{decode_exchange, decode_manifest, encode_exchange};
use webfreeze_snapshots::{
    request_key, Exchange, ExchangeFlags, Header, NewSnapshot, RequestRecord, ResponseRecord, Seed,
    SnapshotSource, SnapshotState, Store, StoreError, Timings, VerifyIssue,
};

struct Backend {
    name: &'static str,
    store: Store,
    _dir: Option<tempfile::TempDir>,
}

fn backends() -> Vec<Backend> {
    let dir = tempfile::tempdir().unwrap();
    let rocks = Store::open(&dir.path().join("store")).unwrap();
    vec![
        Backend { name: "rocksdb", store: rocks, _dir: Some(dir) },
        Backend { name: "memory", store: Store::in_memory(), _dir: None },
    ]
}

fn new_snapshot(name: &str) -> NewSnapshot {
    NewSnapshot {
        name: name.into(),
        created_ms: 1_000,
        seed: Seed { start_ms: 1_000, time_zone: "UTC".into() },
        source: SnapshotSource::Record,
        labels: BTreeMap::new(),
    }
}

fn exchange(store: &Store, method: &str, url: &str, body: &[u8], seq: u64) -> Exchange {
    let key = request_key(method, url, None, b"").unwrap();
    Exchange {
        seq,
        started_ms: 1_000 + seq as i64,
        key: key.hex(),
        request: RequestRecord {
            method: method.into(),
            url: url.into(),
            version: "HTTP/1.1".into(),
            headers: vec![Header::new("Host", "a.test")],
            body: None,
        },
        response: ResponseRecord {
            status: 200,
            version: "HTTP/1.1".into(),
            headers: vec![Header::new("Content-Type", "text/plain")],
            body: Some(store.put_blob(body).unwrap()),
            content_encoding: None,
        },
        timings: Timings::default(),
        alpn: None,
        server_addr: None,
        flags: ExchangeFlags::default(),
        websocket: None,
    }
}

#[test]
fn lifecycle_lookup_and_scan() {
    for b in backends() {
        let s = &b.store;
        let w = s.create_snapshot(new_snapshot("snap")).unwrap();
        assert_eq!(s.manifest("snap").unwrap().state, SnapshotState::Recording, "{}", b.name);
        // Three identical requests, one other query on the same path, one other path.
        for (i, (url, body)) in [
            ("https://a.test/p?x=1", "first"),
            ("https://a.test/p?x=2", "other-query"),
            ("https://a.test/p?x=1", "second"),
            ("https://a.test/q", "other-path"),
            ("https://a.test/p?x=1", "third"),
        ]
        .iter()
        .enumerate()
        {
            w.append(exchange(s, "GET", url, body.as_bytes(), i as u64)).unwrap();
        }
        let m = w.finalize(2_000).unwrap();
        assert_eq!(m.state, SnapshotState::Complete);
        assert_eq!(m.counts.exchanges, 5);
        let key = request_key("GET", "https://A.test:443/p?x=1#frag", None, b"").unwrap();
        let hits = s.lookup(&m, &key).unwrap();
        let bodies: Vec<String> = hits
            .iter()
            .map(|x| {
                String::from_utf8(s.blob_bytes(&x.response.body.as_ref().unwrap().hash).unwrap()).unwrap()
            })
            .collect();
        assert_eq!(bodies, ["first", "second", "third"], "{}", b.name);
        let scan = s.scan_host_path(&m, "https://a.test/p?anything").unwrap();
        assert_eq!(scan.iter().map(|x| x.seq).collect::<Vec<_>>(), [0, 1, 2, 4], "{}", b.name);
        assert!(s
            .lookup(&m, &request_key("GET", "https://a.test/none", None, b"").unwrap())
            .unwrap()
            .is_empty());
        // Names are unique.
        assert!(matches!(s.create_snapshot(new_snapshot("snap")), Err(StoreError::SnapshotExists(_))));
        assert!(matches!(s.manifest("nope"), Err(StoreError::SnapshotNotFound(_))));
    }
}

#[test]
fn bodies_are_stored_once_and_stream_back() {
    for b in backends() {
        let s = &b.store;
        let r1 = s.put_blob(b"same body").unwrap();
        let r2 = s.put_blob(b"same body").unwrap();
        assert_eq!(r1, r2);
        assert_eq!(s.stats().unwrap().blobs, 1, "{}", b.name);
        // A body of several chunks, written in odd-sized pieces.
        let big: Vec<u8> = (0..(5 * 1024 * 1024 + 123)).map(|i| (i % 251) as u8).collect();
        let mut w = s.blob_writer();
        for piece in big.chunks(77_777) {
            w.write(piece).unwrap();
        }
        let r = w.finish().unwrap();
        assert_eq!(r.size, big.len() as u64);
        assert_eq!(r.hash, blake3::hash(&big).to_hex().to_string());
        let mut back = Vec::new();
        s.read_blob(&r.hash).unwrap().read_to_end(&mut back).unwrap();
        assert!(back == big, "{}: streamed body differs", b.name);
        assert_eq!(s.stats().unwrap().blobs, 2);
    }
}

#[test]
fn verify_reports_corrupt_and_missing_blobs() {
    for b in backends() {
        let s = &b.store;
        let w = s.create_snapshot(new_snapshot("v")).unwrap();
        let x = exchange(s, "GET", "https://a.test/1", &vec![b'a'; 10_000], 0);
        let good_hash = x.response.body.clone().unwrap().hash;
        w.append(x).unwrap();
        let mut missing = exchange(s, "GET", "https://a.test/2", b"x", 1);
        missing.response.body.as_mut().unwrap().hash = "11".repeat(32);
        w.append(missing).unwrap();
        w.finalize(5).unwrap();
        let r = s.verify(None).unwrap();
        assert_eq!(r.issues.len(), 1, "{}: {:?}", b.name, r.issues);
        assert!(matches!(&r.issues[0], VerifyIssue::MissingBlob { seq: 1, .. }));
        // Damage the stored bytes of the good blob (flip a byte of its compressed payload).
        let mut raw = s.raw_blob_for_tests(&good_hash).unwrap().unwrap();
        let last = raw.len() - 1;
        raw[last] ^= 0xff;
        s.damage_blob_for_tests(&good_hash, &raw).unwrap();
        let r = s.verify(Some("v")).unwrap();
        assert!(
            r.issues.iter().any(|i| matches!(i, VerifyIssue::CorruptBlob { hash, .. } if *hash == good_hash)),
            "{}: {:?}",
            b.name,
            r.issues
        );
    }
}

#[test]
fn rm_then_gc_frees_only_unreferenced_bodies() {
    for b in backends() {
        let s = &b.store;
        let w1 = s.create_snapshot(new_snapshot("one")).unwrap();
        w1.append(exchange(s, "GET", "https://a.test/shared", b"shared body", 0)).unwrap();
        // Three distinct 1 MiB chunks (identical chunks would be stored once).
        let big: Vec<u8> = (0..(3usize << 20)).map(|i| (i % 251) as u8).collect();
        w1.append(exchange(s, "GET", "https://a.test/only1", &big, 1)).unwrap();
        w1.finalize(1).unwrap();
        let w2 = s.create_snapshot(new_snapshot("two")).unwrap();
        w2.append(exchange(s, "GET", "https://a.test/shared", b"shared body", 0)).unwrap();
        w2.finalize(1).unwrap();
        let r = s.gc().unwrap();
        assert_eq!((r.blobs_deleted, r.chunks_deleted), (0, 0), "{}", b.name);
        s.remove("one").unwrap();
        assert!(matches!(s.manifest("one"), Err(StoreError::SnapshotNotFound(_))));
        let r = s.gc().unwrap();
        assert_eq!(r.blobs_deleted, 1, "{}", b.name);
        assert_eq!(r.chunks_deleted, 3, "{}", b.name);
        assert!(r.bytes_freed > 0);
        assert_eq!(r.blobs_kept, 1);
        let two = s.manifest("two").unwrap();
        let x = s.exchanges(&two).next().unwrap().unwrap();
        assert_eq!(s.blob_bytes(&x.response.body.unwrap().hash).unwrap(), b"shared body");
        assert!(s.verify(None).unwrap().issues.is_empty());
    }
}

#[test]
fn dropped_writer_leaves_snapshot_interrupted() {
    for b in backends() {
        let s = &b.store;
        let w = s.create_snapshot(new_snapshot("cut")).unwrap();
        w.append(exchange(s, "GET", "https://a.test/", b"x", 0)).unwrap();
        drop(w);
        let m = s.manifest("cut").unwrap();
        assert_eq!(m.state, SnapshotState::Interrupted, "{}", b.name);
        assert_eq!(m.counts.exchanges, 1);
    }
}

#[test]
fn second_writer_gets_a_clear_error_and_readers_still_work() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let s = Store::open(&path).unwrap();
    let w = s.create_snapshot(new_snapshot("live")).unwrap();
    w.append(exchange(&s, "GET", "https://a.test/", b"x", 0)).unwrap();
    let err = Store::open(&path).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, StoreError::Locked { .. }), "{msg}");
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains(&format!("pid {}", std::process::id())), "{msg}");
    let ro = Store::open_read_only(&path).unwrap();
    assert_eq!(ro.manifest("live").unwrap().state, SnapshotState::Recording);
    assert!(matches!(ro.create_snapshot(new_snapshot("x")), Err(StoreError::ReadOnly)));
    let missing = Store::open_read_only(&dir.path().join("nothing")).unwrap_err();
    assert!(missing.to_string().contains("no store here"), "{missing}");
}

#[test]
fn format_v1_fixtures_still_decode() {
    let x = decode_exchange(include_bytes!("fixtures/format-v1/exchange.json")).unwrap();
    assert_eq!(x.seq, 7);
    assert_eq!(x.request.method, "POST");
    assert_eq!(x.request.body.as_ref().unwrap().size, 2);
    assert_eq!(x.response.status, 200);
    assert_eq!(x.response.content_encoding.as_deref(), Some("br"));
    assert_eq!(x.alpn.as_deref(), Some("h2"));
    assert!(x.flags.truncated && !x.flags.decode_failed);
    assert_eq!(x.timings.wait_ms, Some(12.5));
    let m = decode_manifest(include_bytes!("fixtures/format-v1/manifest.json")).unwrap();
    assert_eq!(m.name, "run-1/task-3");
    assert_eq!(m.state, SnapshotState::Interrupted);
    assert_eq!(m.seed.time_zone, "Europe/Berlin");
    assert_eq!(m.counts.exchanges, 12);
    assert_eq!(m.labels.get("task").map(String::as_str), Some("Allrecipes--3"));
    // Re-encoding keeps the version and the content.
    assert_eq!(decode_exchange(&encode_exchange(&x)).unwrap(), x);
}

#[test]
fn format_v2_websocket_fixture_decodes_and_only_websockets_are_written_as_v2() {
    use webfreeze_snapshots::format::{WsOpcode, WsSide};
    let x = decode_exchange(include_bytes!("fixtures/format-v2/exchange-websocket.json")).unwrap();
    assert_eq!(x.response.status, 101);
    let log = x.websocket.as_ref().unwrap();
    let kinds: Vec<_> = log.messages.iter().map(|m| (m.from, m.opcode, m.close_code)).collect();
    assert_eq!(
        kinds,
        vec![
            (WsSide::Server, WsOpcode::Text, None),
            (WsSide::Client, WsOpcode::Binary, None),
            (WsSide::Client, WsOpcode::Close, Some(1000))
        ]
    );
    assert_eq!(log.messages[1].at_ms, 40.5);
    // Every body it names, payloads included, is what gc, verify, copy and bundles walk.
    assert_eq!(x.body_refs().count(), 4);
    let bytes = encode_exchange(&x);
    assert!(bytes.starts_with(br#"{"v":2,"#), "{}", String::from_utf8_lossy(&bytes));
    assert_eq!(decode_exchange(&bytes).unwrap(), x);
    // Without messages the record stays version 1: older builds keep reading stores without WebSockets.
    let plain = webfreeze_snapshots::Exchange { websocket: None, ..x };
    assert!(encode_exchange(&plain).starts_with(br#"{"v":1,"#));
}

#[test]
fn newer_or_missing_versions_are_clear_errors() {
    let newer = br#"{"v":99,"seq":1}"#;
    let e = decode_exchange(newer).unwrap_err();
    assert!(matches!(e, StoreError::NewerFormat { found: 99, .. }), "{e}");
    assert!(e.to_string().contains("upgrade webfreeze"));
    assert!(matches!(decode_exchange(br#"{"seq":1}"#), Err(StoreError::Corrupt { .. })));
    assert!(matches!(decode_manifest(b"\x00garbage"), Err(StoreError::Corrupt { .. })));
}

#[test]
fn a_snapshot_copies_into_another_store_whole_and_verified() {
    for si in 0..2 {
        for di in 0..2 {
            let (src, dst) = (backends().swap_remove(si), backends().swap_remove(di));
            let (s, d) = (&src.store, &dst.store);
            let w = s.create_snapshot(new_snapshot("shard-0/T--1")).unwrap();
            let big: Vec<u8> = (0..(3 * 1024 * 1024 + 7)).map(|i| (i % 253) as u8).collect();
            w.append(exchange(s, "GET", "https://a.test/", b"page", 0)).unwrap();
            w.append(exchange(s, "GET", "https://a.test/big", &big, 1)).unwrap();
            w.append(exchange(s, "GET", "https://a.test/again", b"page", 2)).unwrap();
            w.finalize(2_000).unwrap();
            // A blob the target already has is kept, not rewritten.
            d.put_blob(b"page").unwrap();
            let labels = BTreeMap::from([("run_dir".to_string(), "/runs/merged".to_string())]);
            let m = d.copy_snapshot_from(s, "shard-0/T--1", "merged/T--1", labels.clone()).unwrap();
            let orig = s.manifest("shard-0/T--1").unwrap();
            let ctx = format!("{} -> {}", src.name, dst.name);
            assert_eq!(m.state, SnapshotState::Complete, "{ctx}");
            let mut want_labels = labels.clone();
            want_labels.insert("recorded_as".into(), "shard-0/T--1".into());
            assert_eq!(
                (m.seed.clone(), m.counts.clone(), m.labels.clone()),
                (orig.seed.clone(), orig.counts.clone(), want_labels)
            );
            assert_eq!(m.recorded_as(), "shard-0/T--1", "the shim's seed name survives the copy");
            assert_eq!(m.finished_ms, Some(2_000));
            let a: Vec<Exchange> = s.exchanges(&orig).map(Result::unwrap).collect();
            let b: Vec<Exchange> = d.exchanges(&m).map(Result::unwrap).collect();
            assert_eq!(a, b, "{ctx}: exchanges differ");
            let mut back = Vec::new();
            d.read_blob(&b[1].response.body.as_ref().unwrap().hash).unwrap().read_to_end(&mut back).unwrap();
            assert!(back == big, "{ctx}: big body differs");
            assert!(d.verify(Some("merged/T--1")).unwrap().issues.is_empty(), "{ctx}");
            // Exact lookups work under the new name.
            let key = request_key("GET", "https://a.test/big", None, b"").unwrap();
            assert_eq!(d.lookup(&m, &key).unwrap().len(), 1);
            // The name is taken now.
            assert!(d.copy_snapshot_from(s, "shard-0/T--1", "merged/T--1", BTreeMap::new()).is_err());
        }
    }
    // Within one store, and an interrupted snapshot stays interrupted.
    let s = Store::in_memory();
    let w = s.create_snapshot(new_snapshot("cut")).unwrap();
    w.append(exchange(&s, "GET", "https://a.test/", b"x", 0)).unwrap();
    drop(w);
    let m = s.copy_snapshot_from(&s, "cut", "cut-copy", BTreeMap::new()).unwrap();
    assert_eq!(m.state, SnapshotState::Interrupted);
    assert_eq!(m.counts.exchanges, 1);
    // A copy of a copy still names the first recording.
    let m2 = s.copy_snapshot_from(&s, "cut-copy", "cut-copy-2", BTreeMap::new()).unwrap();
    assert_eq!(m2.recorded_as(), "cut");
    assert!(
        matches!(
            s.copy_snapshot_from(&s, "nope", "x", BTreeMap::new()),
            Err(StoreError::SnapshotNotFound(_))
        ),
        "missing source"
    );
}

/// `diff`: documents and resources apart; added, removed, changed (body or status), unchanged counted;
/// URLs matched normalised, each compared by its first response.
#[test]
fn diff_table() {
    use webfreeze_snapshots::diff::{diff, ChangeKind};
    let s = Store::in_memory();
    let page = |s: &Store, url: &str, body: &str, seq: u64, html: bool, status: u16| {
        let mut x = exchange(s, "GET", url, body.as_bytes(), seq);
        if html {
            x.response.headers = vec![Header::new("Content-Type", "text/html; charset=utf-8")];
        }
        x.response.status = status;
        x
    };
    #[rustfmt::skip]
    let a: &[(&str, &str, bool, u16)] = &[
        ("https://a.test/", "<p>price $24</p>", true, 200),
        ("https://a.test/same", "<p>same</p>", true, 200),
        ("https://a.test/gone", "<p>old</p>", true, 200),
        ("https://a.test/app.js?b=2&a=1", "v1", false, 200),
        ("https://a.test/logo.png", "png", false, 200),
        ("https://a.test/status", "x", false, 200),
        ("https://a.test/seq", "first", false, 200),
        ("https://a.test/seq", "second", false, 200),
    ];
    #[rustfmt::skip]
    let b: &[(&str, &str, bool, u16)] = &[
        ("https://a.test/", "<p>price $26</p>", true, 200),
        ("https://a.test/same", "<p>same</p>", true, 200),
        ("https://a.test/new", "<p>new</p>", true, 200),
        ("https://a.test/app.js?a=1&b=2", "v2", false, 200),
        ("https://a.test/logo.png", "png", false, 200),
        ("https://a.test/status", "x", false, 404),
        ("https://a.test/seq", "first", false, 200),
        ("https://a.test/seq", "other second", false, 200),
    ];
    for (name, rows) in [("a", a), ("b", b)] {
        let w = s.create_snapshot(new_snapshot(name)).unwrap();
        for (i, (url, body, html, status)) in rows.iter().enumerate() {
            w.append(page(&s, url, body, i as u64, *html, *status)).unwrap();
        }
        w.finalize(2_000).unwrap();
    }
    let d = diff(&s, "a", &s, "b").unwrap();
    let kinds = |v: &[webfreeze_snapshots::diff::Change]| {
        v.iter().map(|c| (c.kind, c.url.rsplit('/').next().unwrap().to_string())).collect::<Vec<_>>()
    };
    assert_eq!(
        kinds(&d.documents),
        vec![
            (ChangeKind::Changed, String::new()),
            (ChangeKind::Removed, "gone".into()),
            (ChangeKind::Added, "new".into())
        ]
    );
    assert_eq!(
        kinds(&d.resources),
        vec![(ChangeKind::Changed, "app.js?b=2&a=1".into()), (ChangeKind::Changed, "status".into())]
    );
    assert_eq!(d.unchanged, 3, "same, logo.png, seq (first response equal)");
    let status = d.resources.iter().find(|c| c.url.ends_with("status")).unwrap();
    assert_eq!((status.a.as_ref().unwrap().status, status.b.as_ref().unwrap().status), (200, 404));
    assert!(diff(&s, "a", &s, "a").unwrap().is_empty());
    assert!(matches!(diff(&s, "a", &s, "nope"), Err(StoreError::SnapshotNotFound(_))));
}

/// Issue 35.4: a snapshot whose keys were derived by another key version is refused (its exact hits would
/// silently be misses) until `migrate_keys` derives them again from the recorded requests; afterwards every
/// request is found by this build's key, and migrating again changes nothing. Manifests written before
/// they recorded a key version read as version 1.
#[test]
fn a_snapshot_of_another_key_version_is_refused_until_migrated() {
    for b in backends() {
        let s = &b.store;
        let w = s.create_snapshot(new_snapshot("old")).unwrap();
        let urls = ["https://a.test/?b=2&a=1", "https://A.test:443/x/../y#frag", "https://a.test/p"];
        for (i, u) in urls.iter().enumerate() {
            let mut x = exchange(s, "GET", u, b"body", i as u64);
            // What an older derivation might have made: another digest for the same request.
            x.key = blake3::hash(format!("old derivation {u}").as_bytes()).to_hex().to_string();
            w.append(x).unwrap();
        }
        let mut m = w.finalize(2_000).unwrap();
        m.key_version = 0;
        s.put_manifest(&m).unwrap();
        let refused = s.check_snapshot(&s.manifest("old").unwrap()).unwrap_err();
        assert!(
            matches!(refused, StoreError::KeyVersion { found: 0, .. })
                && refused.to_string().contains("webfreeze snapshots migrate old"),
            "{}: {refused}",
            b.name
        );
        let r = s.migrate_keys("old").unwrap();
        assert_eq!(
            (r.exchanges, r.keys_changed, r.from, r.to),
            (3, 3, 0, webfreeze_snapshots::version::KEY_VERSION)
        );
        let m = s.manifest("old").unwrap();
        s.check_snapshot(&m).unwrap();
        for (i, u) in urls.iter().enumerate() {
            let found = s.lookup(&m, &request_key("GET", u, None, b"").unwrap()).unwrap();
            assert_eq!(found.iter().map(|x| x.seq).collect::<Vec<_>>(), vec![i as u64], "{}: {u}", b.name);
            assert_eq!(s.scan_host_path(&m, u).unwrap().len(), 1, "{}: {u}", b.name);
        }
        assert_eq!(s.migrate_keys("old").unwrap().keys_changed, 0, "{}", b.name);
    }
    let legacy = br#"{"v":1,"name":"n","id":3,"state":"complete","created_ms":1,"seed":{"start_ms":1,"time_zone":"UTC"},"source":{"kind":"record"},"tool_version":"0.1.0"}"#;
    assert_eq!(decode_manifest(legacy).unwrap().key_version, 1);
}

/// A merge run again: done before, left unfinished, or blocked by a snapshot it did not make.
#[test]
fn a_merge_run_again_resumes_its_own_result_and_never_replaces_another_snapshot() {
    use webfreeze_snapshots::{MergeTarget, Merged, MERGED_FROM_LABEL};
    for b in backends() {
        let s = &b.store;
        for (name, url) in [("a", "https://a.test/"), ("b", "https://b.test/")] {
            let w = s.create_snapshot(new_snapshot(name)).unwrap();
            w.append(exchange(s, "GET", url, b"x", 0)).unwrap();
            w.finalize(2_000).unwrap();
        }
        // The same merge killed mid-way: its label, still `interrupted`, one exchange written.
        let mut labels = BTreeMap::new();
        labels.insert(MERGED_FROM_LABEL.to_string(), "a\nb".to_string());
        let w = s.create_snapshot(NewSnapshot { labels, ..new_snapshot("half") }).unwrap();
        w.append(exchange(s, "GET", "https://a.test/", b"x", 0)).unwrap();
        w.interrupt(2_000).unwrap();
        drop(w);
        let other = s.create_snapshot(new_snapshot("other")).unwrap();
        other.finalize(2_000).unwrap();
        // (destination, what merge_target says (None: refused), what merge_again does)
        let cases: [(&str, Option<MergeTarget>, &str); 4] = [
            ("fresh", Some(MergeTarget::Free), "merged now"),
            ("half", Some(MergeTarget::Unfinished(1)), "merged now, replacing 1"),
            ("fresh", Some(MergeTarget::Done), "merged before"),
            ("other", None, "refused"),
        ];
        for (into, target, want) in cases {
            let got_target = s.merge_target(&["a", "b"], into);
            let got = match s.merge_again(&["a", "b"], into, BTreeMap::new()) {
                Ok(Merged::Now { manifest, replaced: None }) => {
                    assert_eq!(manifest.counts.exchanges, 2, "{}: {into}", b.name);
                    "merged now".to_string()
                }
                Ok(Merged::Now { manifest, replaced: Some(n) }) => {
                    assert_eq!(manifest.counts.exchanges, 2, "{}: {into}", b.name);
                    format!("merged now, replacing {n}")
                }
                Ok(Merged::Before) => "merged before".into(),
                Err(StoreError::SnapshotExists(n)) => {
                    assert_eq!(n, into);
                    "refused".into()
                }
                Err(e) => panic!("{}: {into}: {e}", b.name),
            };
            assert_eq!(got, want, "{}: {into}", b.name);
            assert_eq!(got_target.ok(), target, "{}: {into}", b.name);
        }
        // The refused destination is untouched.
        assert_eq!(s.manifest("other").unwrap().counts.exchanges, 0);
    }
}

#[test]
fn rendered_text_adds_up_and_goes_with_copies_merges_gc_and_verify() {
    use webfreeze_snapshots::RenderedPages;
    let page = |u: &str, t: &str| RenderedPages::from([(u.to_string(), t.to_string())]);
    for b in backends() {
        let s = &b.store;
        for name in ["a", "b"] {
            let w = s.create_snapshot(new_snapshot(name)).unwrap();
            w.append(exchange(s, "GET", &format!("https://s.test/{name}"), b"<p>x</p>", 0)).unwrap();
            w.finalize(2_000).unwrap();
        }
        assert!(s.rendered_text(&s.manifest("a").unwrap()).unwrap().is_empty(), "{}", b.name);
        s.add_rendered_text("a", page("https://s.test/1", "one")).unwrap();
        s.add_rendered_text("a", page("https://s.test/2", "two")).unwrap();
        let m = s.add_rendered_text("a", page("https://s.test/1", "one again")).unwrap();
        assert_eq!(m.rendered_text.as_ref().unwrap().items, 2, "{}", b.name);
        let got = s.rendered_text(&m).unwrap();
        assert_eq!(got["https://s.test/1"], "one again", "{}", b.name);
        assert_eq!(got["https://s.test/2"], "two", "{}", b.name);
        s.add_rendered_text("b", page("https://s.test/1", "b's view")).unwrap();
        s.add_rendered_text("b", page("https://s.test/3", "three")).unwrap();
        // A copy carries it; a merge joins its sources', the first source's text winning.
        let copy = s.copy_snapshot_from(s, "a", "a-copy", BTreeMap::new()).unwrap();
        assert_eq!(s.rendered_text(&copy).unwrap(), got, "{}", b.name);
        let merged = s.merge_snapshots(&["a", "b"], "ab", BTreeMap::new()).unwrap();
        let joined = s.rendered_text(&merged).unwrap();
        assert_eq!(joined.len(), 3, "{}", b.name);
        assert_eq!(joined["https://s.test/1"], "one again", "{}", b.name);
        // gc keeps what a manifest names; verify checks it is there.
        s.remove("a").unwrap();
        s.gc().unwrap();
        assert_eq!(s.rendered_text(&s.manifest("a-copy").unwrap()).unwrap(), got, "{}", b.name);
        assert!(s.verify(None).unwrap().issues.is_empty(), "{}", b.name);
    }
}

/// A union derived at seal: joined by sealed snapshots only, each one's path entries listed by address,
/// written anew on a second join, dropped with the snapshot, derived again by a key migration; unions by
/// other names do not mix.
#[test]
fn unions_follow_their_members() {
    use webfreeze_snapshots::path_digest;
    for b in backends() {
        let s = &b.store;
        let make = |name: &str, urls: &[&str]| {
            let w = s.create_snapshot(new_snapshot(name)).unwrap();
            for (i, u) in urls.iter().enumerate() {
                w.append(exchange(s, "GET", u, b"x", i as u64)).unwrap();
            }
            w
        };
        let recording = make("r/open", &["https://a.test/p"]);
        let open = s.manifest("r/open").unwrap();
        assert!(matches!(s.join_union("u", &open), Err(StoreError::BadState { .. })), "{}", b.name);
        recording.finalize(2).unwrap();
        let one = make("r/one", &["https://a.test/p?x=1", "https://a.test/q", "https://a.test/p?x=2"])
            .finalize(2)
            .unwrap();
        let two = make("r/two", &["http://a.test/p", "https://b.test/p"]).finalize(2).unwrap();
        for m in [&one, &two, &one] {
            s.join_union("u", m).unwrap();
        }
        s.join_union("other", &two).unwrap();
        let holders = |u: &str, url: &str| s.union_holders(u, &path_digest(url)).unwrap();
        let members: Vec<(String, u64)> =
            s.union_members("u").unwrap().into_iter().map(|m| (m.name, m.exchanges)).collect();
        assert_eq!(members, [("r/one".to_string(), 3), ("r/two".to_string(), 2)], "{}", b.name);
        assert_eq!(holders("u", "https://a.test/p?y"), [one.id], "{}", b.name);
        assert_eq!(holders("u", "http://a.test/p"), [two.id], "{}", b.name);
        assert_eq!(holders("u", "https://a.test/q"), [one.id], "{}", b.name);
        assert_eq!(holders("u", "https://c.test/"), Vec::<u64>::new(), "{}", b.name);
        assert_eq!(holders("other", "https://b.test/p"), [two.id], "{}", b.name);
        assert!(holders("other", "https://a.test/q").is_empty(), "{}", b.name);

        // A migration derives the entries again from the new path index.
        let mut old = s.manifest("r/one").unwrap();
        old.key_version = 0;
        s.put_manifest(&old).unwrap();
        s.migrate_keys("r/one").unwrap();
        assert_eq!(holders("u", "https://a.test/q"), [one.id], "{}", b.name);
        let m = s.union_members("u").unwrap();
        assert_eq!(m[0].key_version, webfreeze_snapshots::version::KEY_VERSION, "{}", b.name);

        // Removed: out of every union, the others' entries kept.
        s.remove("r/two").unwrap();
        assert!(
            holders("u", "http://a.test/p").is_empty() && holders("other", "https://b.test/p").is_empty()
        );
        assert!(s.union_members("other").unwrap().is_empty(), "{}", b.name);
        assert_eq!(s.union_members("u").unwrap().len(), 1, "{}", b.name);
        assert_eq!(holders("u", "https://a.test/p"), [one.id], "{}", b.name);
        assert!(s.verify(None).unwrap().issues.is_empty(), "{}", b.name);
    }
}
