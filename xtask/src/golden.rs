//! `cargo xtask golden`: the golden fixtures under `tests/fixtures/golden/v<KEY_VERSION>/`, made by this
//! version and checked in, that every later version's suite replays (`tests/golden.rs`):
//! - `store/`: a RocksDB store holding the snapshot `golden/site` (GETs with unsorted and repeated query
//!   parameters, percent-encoding and dot segments, form, JSON and multipart POSTs, one URL answered twice
//!   in sequence), sealed, with its search index;
//! - `golden.wfb`: the same snapshot as a bundle;
//! - `expect.json`: the versions they were made with, and each request: how it was sent, its key, and the
//!   response's status and BLAKE3.
//!
//! Run it only when a version in `snapshots::version` is bumped (into a new directory: the old ones stay,
//! and must still replay).

use std::path::Path;

use anyhow::Context as _;
use serde_json::json;
use snapshots::format::{ExchangeFlags, Header, RequestRecord, ResponseRecord, Timings};
use snapshots::version::{BLOB_VERSION, BUNDLE_VERSION, KEY_VERSION, RECORD_VERSION, STORE_VERSION};
use snapshots::{request_key, Exchange, NewSnapshot, Seed, SnapshotSource, Store};

/// (method, URL as sent, Content-Type, request body, response status, response content type, body).
type Row = (&'static str, &'static str, Option<&'static str>, &'static str, u16, &'static str, &'static str);

const ROWS: &[Row] = &[
    ("GET", "http://golden.test/", None, "", 200, "text/html",
     "<!doctype html><html><head><title>Golden</title></head><body><a href=/page>kettles</a></body></html>"),
    ("GET", "http://golden.test/search?b=2&a=1&a=0&empty=", None, "", 200, "text/plain", "sorted by name, repeated in order"),
    ("GET", "http://GOLDEN.test:80/caf%c3%a9/%7Euser/./x/../page?q=a+b#top", None, "", 200, "text/plain", "normalised path"),
    ("POST", "http://golden.test/form", Some("application/x-www-form-urlencoded"), "z=1&a=2&a=1", 200, "text/plain", "form"),
    ("POST", "http://golden.test/api", Some("application/json"), "{\"b\": [1, 2], \"a\": {\"y\": 1, \"x\": 2}}", 201, "application/json", "{\"ok\":true}"),
    ("POST", "http://golden.test/upload", Some("multipart/form-data; boundary=XyZ"),
     "--XyZ\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nhello\r\n--XyZ--\r\n", 200, "text/plain", "multipart"),
    ("GET", "http://golden.test/counter", None, "", 200, "text/plain", "first"),
    ("GET", "http://golden.test/counter", None, "", 200, "text/plain", "second"),
];

pub(crate) fn run(root: &Path) -> anyhow::Result<()> {
    let dir = root.join(format!("tests/fixtures/golden/v{KEY_VERSION}"));
    if dir.exists() {
        anyhow::bail!(
            "{} exists: golden fixtures are made once per version and never replaced (bump a version in \
             snapshots::version first)",
            dir.display()
        );
    }
    let store_dir = dir.join("store");
    std::fs::create_dir_all(&dir)?;
    let store = Store::open(&store_dir)?;
    let w = store.create_snapshot(NewSnapshot {
        name: "golden/site".into(),
        created_ms: 1_764_000_000_000,
        seed: Seed { start_ms: 1_764_000_000_000, time_zone: "UTC".into() },
        source: SnapshotSource::Record,
        labels: [("site".to_string(), "Golden".to_string())].into(),
    })?;
    let mut expect = Vec::new();
    for (seq, (method, url, ct, body, status, rct, rbody)) in ROWS.iter().enumerate() {
        let key = request_key(method, url, *ct, body.as_bytes())?;
        let mut headers = vec![Header::new("host", "golden.test")];
        if let Some(ct) = ct {
            headers.push(Header::new("content-type", *ct));
        }
        w.append(Exchange {
            seq: seq as u64,
            started_ms: 1_764_000_000_000 + seq as i64,
            key: key.hex(),
            request: RequestRecord {
                method: method.to_string(),
                url: url.to_string(),
                version: "HTTP/1.1".into(),
                headers,
                body: (!body.is_empty()).then(|| store.put_blob(body.as_bytes())).transpose()?,
            },
            response: ResponseRecord {
                status: *status,
                version: "HTTP/1.1".into(),
                headers: vec![Header::new("content-type", *rct)],
                body: Some(store.put_blob(rbody.as_bytes())?),
                content_encoding: None,
            },
            timings: Timings::default(),
            alpn: None,
            server_addr: None,
            flags: ExchangeFlags::default(),
            websocket: None,
        })?;
        expect.push(json!({
            "method": method, "url": url, "content_type": ct, "body": body, "key": key.hex(),
            "status": status, "response_blake3": blake3::hash(rbody.as_bytes()).to_hex().to_string(),
        }));
    }
    w.finalize(1_764_000_001_000)?;
    replay::search::store_index(&store, "golden/site")?;
    store.flush()?;
    bundle::create(&store, bundle::BundleSource::Snapshots("golden/site"), &dir.join("golden.wfb"))?;
    drop(store);
    // What RocksDB writes for itself (its info log, the lock) is not part of the fixture.
    for e in std::fs::read_dir(&store_dir)? {
        let p = e?.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
        if name.starts_with("LOG") || name == "LOCK" || name == "webfreeze.lock" {
            std::fs::remove_file(&p).with_context(|| p.display().to_string())?;
        }
    }
    let doc = json!({
        "versions": {"store": STORE_VERSION, "record": RECORD_VERSION, "blob": BLOB_VERSION,
                     "key": KEY_VERSION, "bundle": BUNDLE_VERSION},
        "snapshot": "golden/site",
        "requests": expect,
    });
    std::fs::write(dir.join("expect.json"), serde_json::to_string_pretty(&doc)? + "\n")?;
    println!("golden fixtures written to {}", dir.display());
    Ok(())
}
