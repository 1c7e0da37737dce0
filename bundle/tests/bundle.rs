//! Bundles: made from a run directory and its snapshots in a RocksDB store, verified, imported into a
//! fresh store, re-imported, renamed, and refused when truncated or tampered with.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bundle::{BundleError, BundleSource};
use snapshots::{Exchange, NewSnapshot, Seed, SnapshotSource, Store};
use trajectory::{Outcome, RunDir, RunFile, RunMode, TaskStatus, Trajectory};

fn exchange(store: &Store, url: &str, body: &[u8], seq: u64) -> Exchange {
    snapshots::fixtures::exchange(store, seq, "GET", url, "text/html", body).unwrap()
}

fn snapshot(store: &Store, name: &str, pages: &[(&str, &[u8])]) {
    let w = store
        .create_snapshot(NewSnapshot {
            name: name.into(),
            created_ms: 1_000,
            seed: Seed { start_ms: 1_000, time_zone: "Europe/Paris".into() },
            source: SnapshotSource::Record,
            labels: BTreeMap::from([("task".to_string(), name.rsplit('/').next().unwrap().to_string())]),
        })
        .unwrap();
    for (i, (url, body)) in pages.iter().enumerate() {
        w.append(exchange(store, url, body, i as u64)).unwrap();
    }
    w.finalize(2_000).unwrap();
}

/// A store with `rec/T--1`, `rec/T--2` (sharing a body) and an unrelated snapshot; the run directory
/// `rec` with its task file.
fn fixture(root: &Path) -> (Store, PathBuf) {
    let store = Store::open(&root.join("store-a")).unwrap();
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    snapshot(&store, "rec/T--1", &[("https://a.test/", b"<h1>one</h1>"), ("https://a.test/big.bin", &big)]);
    snapshot(&store, "rec/T--2", &[("https://a.test/2", b"<h1>two</h1>"), ("https://a.test/big.bin", &big)]);
    snapshot(&store, "other", &[("https://b.test/", b"not mine")]);
    let tasks = root.join("tasks.jsonl");
    std::fs::write(
        &tasks,
        "{\"web_name\":\"A\",\"id\":\"T--1\",\"ques\":\"q\",\"web\":\"https://a.test/\"}\n",
    )
    .unwrap();
    let run = root.join("rec");
    let rd = RunDir::new(&run);
    rd.create().unwrap();
    let mut rf = RunFile {
        v: 1,
        mode: RunMode::Record,
        policy: "llm:m".into(),
        tasks_file: tasks.display().to_string(),
        snapshots: Some("rec".into()),
        chrome_version: "Chromium 156".into(),
        ..Default::default()
    };
    for id in ["T--1", "T--2"] {
        let t = Trajectory {
            v: 1,
            task_id: id.into(),
            outcome: Outcome::Answered,
            answer: Some("42".into()),
            ..Default::default()
        };
        let td = rd.task(id);
        td.create().unwrap();
        td.write_trajectory(&t).unwrap();
        td.write_file("step-01.png", b"\x89PNG fake").unwrap();
        rf.tasks.insert(id.into(), TaskStatus::of(&t));
    }
    rd.write_run_file(&rf).unwrap();
    (store, run)
}

fn exchanges(s: &Store, name: &str) -> Vec<Exchange> {
    let m = s.manifest(name).unwrap();
    s.exchanges(&m).map(Result::unwrap).collect()
}

#[test]
fn a_run_goes_out_as_one_file_and_comes_back_whole_in_another_store() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, run) = fixture(tmp.path());
    let file = tmp.path().join("rec.wfb");
    let made = bundle::create(&a, BundleSource::Run(&run), &file).unwrap();
    let m = &made.manifest;
    assert_eq!(m.snapshots.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["rec/T--1", "rec/T--2"]);
    assert_eq!(m.parts.iter().filter(|p| p.path.starts_with("blobs/")).count(), 3, "the shared body once");
    assert!(made.bytes < 1_000_000, "compressed: {} bytes", made.bytes);
    assert_eq!(m.meta["chrome_version"], "Chromium 156");
    assert_eq!(m.meta["time_zones"], serde_json::json!(["Europe/Paris"]));
    assert!(m.parts.iter().any(|p| p.path == "tasks/tasks.jsonl"));
    // The same content gives the same bundle.
    let again = tmp.path().join("again.wfb");
    assert_eq!(bundle::create(&a, BundleSource::Run(&run), &again).unwrap().manifest.root, m.root);
    assert_eq!(std::fs::read(&file).unwrap(), std::fs::read(&again).unwrap());

    let v = bundle::verify(&file).unwrap();
    assert_eq!((v.blobs, v.exchanges, v.manifest.root.clone()), (3, 4, m.root.clone()));

    let b = Store::open(&tmp.path().join("store-b")).unwrap();
    let dest = tmp.path().join("elsewhere/rec");
    let r = bundle::import(&file, &b, None, Some(&dest)).unwrap();
    assert_eq!(r.imported, ["rec/T--1", "rec/T--2"]);
    for name in ["rec/T--1", "rec/T--2"] {
        assert_eq!(exchanges(&a, name), exchanges(&b, name), "{name}");
        let mb = b.manifest(name).unwrap();
        assert_eq!(mb.seed, a.manifest(name).unwrap().seed);
        assert_eq!(mb.recorded_as(), name);
    }
    assert!(b.manifest("other").is_err(), "only the run's snapshots");
    assert!(b.verify(None).unwrap().issues.is_empty());
    let big = exchanges(&b, "rec/T--1")[1].response.body.clone().unwrap();
    assert_eq!(b.blob_bytes(&big.hash).unwrap().len(), 3_000_000);
    for f in ["run.json", "T--1/trajectory.json", "T--2/step-01.png"] {
        assert_eq!(std::fs::read(run.join(f)).unwrap(), std::fs::read(dest.join(f)).unwrap(), "{f}");
    }

    // Importing it again changes nothing.
    let r = bundle::import(&file, &b, None, Some(&dest)).unwrap();
    assert!(r.imported.is_empty() && r.already.len() == 2, "{r:?}");

    // A name the store holds with other content is refused, and nothing is written; --rename imports it.
    let c = Store::open(&tmp.path().join("store-c")).unwrap();
    snapshot(&c, "rec/T--2", &[("https://x.test/", b"something else")]);
    let e = bundle::import(&file, &c, None, Some(&tmp.path().join("c-run"))).unwrap_err();
    assert!(matches!(e, BundleError::Clash(ref n) if n == "rec/T--2"), "{e}");
    assert!(c.manifest("rec/T--1").is_err() && !tmp.path().join("c-run").exists());
    let renamed = tmp.path().join("c-run2");
    let r = bundle::import(&file, &c, Some("lab-b"), Some(&renamed)).unwrap();
    assert_eq!(r.imported, ["lab-b/T--1", "lab-b/T--2"]);
    assert_eq!(
        c.manifest("lab-b/T--1").unwrap().recorded_as(),
        "rec/T--1",
        "the shim keeps the recording's seed"
    );
    assert_eq!(RunDir::new(&renamed).read_run_file().unwrap().snapshots.as_deref(), Some("lab-b"));
}

#[test]
fn truncated_or_tampered_bundles_are_refused_with_the_part_named_and_import_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, run) = fixture(tmp.path());
    let file = tmp.path().join("rec.wfb");
    bundle::create(&a, BundleSource::Snapshots("rec"), &file).unwrap();
    let good = std::fs::read(&file).unwrap();
    let _ = run;
    type Damage = fn(&mut Vec<u8>);
    let table: &[(&str, Damage, &str)] = &[
        ("a byte of the first body changed", |b| b[512 + 3] ^= 0xff, "part blobs/"),
        ("cut in half", |b| b.truncate(b.len() / 2), "cut short|truncated"),
        ("cut inside a part", |b| b.truncate(512 + 100), "cut short|truncated"),
        (
            "the manifest cut off",
            |b| {
                let end = b.len() - 1024; // the two zero blocks
                let start = find(b, b"webfreeze-bundle.json").unwrap();
                b.truncate(start.min(end));
            },
            "truncated",
        ),
        (
            "a record changed",
            |b| {
                let at = find(b, b"exchanges.jsonl.zst").unwrap() + 512 + 20;
                b[at] ^= 0x01;
            },
            "exchanges.jsonl.zst",
        ),
        (
            // Found by fuzzing (fuzz/fuzz_targets/bundle_import.rs): this used to verify.
            "the index's exchange count edited",
            |b| {
                // The index is the last part; its snapshot entries count their exchanges.
                let mut at = b.windows(12).rposition(|w| w == b"\"exchanges\":").unwrap() + 12;
                while !b[at].is_ascii_digit() {
                    at += 1;
                }
                b[at] = if b[at] == b'9' { b'8' } else { b[at] + 1 };
            },
            "the index says",
        ),
        (
            // Found by fuzzing: verified, then import failed ("records before its manifest").
            "the index names a manifest part that is not there",
            |b| {
                // In the index's snapshot entry, not its part list (that one the root hash covers).
                let entry = b.windows(12).rposition(|w| w == b"\"manifest\": ").unwrap();
                let at = entry + b[entry..].windows(13).position(|w| w == b"manifest.json").unwrap();
                b[at + 12] = b'm';
            },
            "is missing",
        ),
        ("not a bundle at all", |b| *b = b"hello, I am a text file".to_vec(), "not a whole webfreeze bundle"),
    ];
    for (case, damage, want) in table {
        let mut bytes = good.clone();
        damage(&mut bytes);
        let bad = tmp.path().join("bad.wfb");
        std::fs::write(&bad, &bytes).unwrap();
        let says = |e: &str| want.split('|').any(|w| e.contains(w));
        let e = bundle::verify(&bad).unwrap_err().to_string();
        assert!(says(&e), "{case}: {e}");
        let b = Store::in_memory();
        let e = bundle::import(&bad, &b, None, None).unwrap_err().to_string();
        assert!(says(&e), "{case}: {e}");
        assert!(b.manifests().unwrap().is_empty(), "{case}: something was imported");
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
