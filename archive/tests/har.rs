//! HAR import and export, run against both store backends (RocksDB on a temp dir, and the in-memory twin).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers outside #[test] fns

use archive::{har, ArchiveError, ImportOptions};
use snapshots::{request_key, SnapshotState, Store};

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

fn har_import(s: &Store, name: &str, text: &[u8]) -> Result<har::ImportReport, ArchiveError> {
    har::import(
        s,
        text,
        &ImportOptions { snapshot: name.into(), source_file: format!("{name}.har"), now_ms: 42 },
        |_| {},
    )
}

/// A HAR with the quirks real tools write.
fn quirky_har() -> Vec<u8> {
    let png = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        [0x89u8, b'P', b'N', b'G', 0, 1, 2, 255],
    );
    let doc = serde_json::json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
    "entries": [
        {"startedDateTime": "2024-05-01T10:00:00.000Z", "time": 12.0,
         "request": {"method": "GET", "url": "https://Site.test/index.html?b=2&a=1", "httpVersion": "HTTP/1.1", "headers": [{"name": "Accept", "value": "*/*"}]},
         "response": {"status": 200, "httpVersion": "h3", "headers": [{"name": "Content-Type", "value": "text/html"}, {"name": "Content-Encoding", "value": "gzip"}],
                      "content": {"size": 13, "mimeType": "text/html", "text": "<p>hello</p>\n"}},
         "timings": {"wait": 5.0, "receive": 1.0}},
        {"startedDateTime": "2024-05-01T10:00:01.000Z", "time": 1.0,
         "request": {"method": "GET", "url": "https://site.test/logo.png", "httpVersion": "unknown", "headers": []},
         "response": {"status": 200, "httpVersion": "", "headers": [], "content": {"size": 8, "mimeType": "image/png", "text": png, "encoding": "base64"}}},
        {"startedDateTime": "2024-05-01T10:00:02.000Z",
         "request": {"method": "POST", "url": "https://site.test/api", "httpVersion": "HTTP/2", "headers": [{"name": "Content-Type", "value": "application/json"}],
                     "postData": {"mimeType": "application/json", "text": "{\"q\": 1}"}},
         "response": {"status": 201, "httpVersion": "HTTP/2", "headers": [], "content": {"size": 500, "mimeType": "application/json"}}},
        {"request": {"method": null, "url": "https://site.test/x"}, "response": {"status": 200}},
        {"request": {"method": "GET", "url": "https://site.test/blocked"}, "response": {"status": 0, "content": {}}},
        {"request": {"method": "GET", "url": "https://site.test/failed"}, "response": {"status": -1}},
        "not even an object",
        // Firefox: served from its cache, status 0 with the body; the type only in mimeType.
        {"startedDateTime": "2024-05-01T10:00:03.000Z",
         "request": {"method": "GET", "url": "https://site.test/app.css?v=3", "httpVersion": "", "headers": []},
         "response": {"status": 0, "httpVersion": "", "headers": [], "content": {"size": 9, "mimeType": "text/css", "text": "p{margin:0}"}}}
    ]}});
    let mut out = vec![0xEF, 0xBB, 0xBF];
    out.extend_from_slice(serde_json::to_string_pretty(&doc).unwrap().as_bytes());
    out
}

#[test]
fn har_import_survives_real_world_quirks() {
    for b in backends() {
        let s = &b.store;
        let r = har_import(s, "q", &quirky_har()).unwrap();
        assert_eq!(r.entries, 8, "{}", b.name);
        assert_eq!(r.imported, 4);
        assert_eq!(r.skipped.len(), 4, "{:?}", r.skipped);
        assert_eq!(r.with_body, 3);
        assert_eq!(r.body_not_captured, 1);
        assert_eq!(r.status_inferred, 1);
        let m = s.manifest("q").unwrap();
        assert_eq!(m.state, SnapshotState::Imported);
        assert_eq!(m.seed.start_ms, 1_714_557_600_000, "seed is the first entry's start");
        let xs: Vec<_> = s.exchanges(&m).collect::<Result<_, _>>().unwrap();
        assert_eq!(xs[0].response.version, "h3");
        assert_eq!(xs[0].response.content_encoding.as_deref(), Some("gzip"));
        assert_eq!(s.blob_bytes(&xs[0].response.body.as_ref().unwrap().hash).unwrap(), b"<p>hello</p>\n");
        assert_eq!(xs[1].request.version, "unknown");
        assert_eq!(xs[1].response.version, "unknown");
        assert_eq!(
            s.blob_bytes(&xs[1].response.body.as_ref().unwrap().hash).unwrap(),
            [0x89u8, b'P', b'N', b'G', 0, 1, 2, 255]
        );
        assert!(xs[2].flags.body_not_captured && xs[2].response.body.is_none());
        // The cache hit is served as a 200 with its body and a content type from mimeType.
        assert_eq!(xs[3].response.status, 200);
        assert_eq!(s.blob_bytes(&xs[3].response.body.as_ref().unwrap().hash).unwrap(), b"p{margin:0}");
        assert!(xs[3].response.headers.iter().any(|h| h.name == "content-type" && h.value == "text/css"));
        // The POST is findable with a body that differs only in JSON whitespace.
        let key =
            request_key("POST", "https://site.test/api", Some("application/json"), br#"{"q":1}"#).unwrap();
        assert_eq!(s.lookup(&m, &key).unwrap().len(), 1);
    }
}

#[test]
fn har_files_that_are_not_har_fail_clearly_and_leave_nothing() {
    let s = Store::in_memory();
    for (input, expect) in [
        (&b"not json"[..], "not a HAR file"),
        (&b"{\"log\": {\"version\": \"1.2\"}}"[..], "no log.entries"),
        (&b"{\"log\": {\"entries\": [ {\"request\": "[..], "not a HAR file"),
    ] {
        let e = har_import(&s, "bad", input).unwrap_err().to_string();
        assert!(e.contains(expect), "{e}");
        assert!(s.manifest("bad").is_err(), "a failed import leaves no snapshot");
    }
}

/// A WebSocket handshake as Chromium's DevTools saves it.
fn chromium_websocket_har() -> Vec<u8> {
    let bin = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, [0u8, 159, 146, 150]);
    let doc = serde_json::json!({"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"},
    "entries": [
        {"startedDateTime": "2025-11-26T10:00:00.000Z", "time": 0.5, "_resourceType": "websocket",
         "request": {"method": "GET", "url": "wss://ws.test/quotes?room=1", "httpVersion": "HTTP/1.1",
                     "headers": [{"name": "Upgrade", "value": "websocket"},
                                 {"name": "Sec-WebSocket-Key", "value": "dGhlIHNhbXBsZSBub25jZQ=="}],
                     "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
         "response": {"status": 101, "statusText": "Switching Protocols", "httpVersion": "HTTP/1.1",
                      "headers": [{"name": "Upgrade", "value": "websocket"},
                                  {"name": "Sec-WebSocket-Accept", "value": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="}],
                      "cookies": [], "content": {"size": 0, "mimeType": "x-unknown"}, "redirectURL": "",
                      "headersSize": -1, "bodySize": 0},
         "cache": {}, "timings": {"send": 0, "wait": 0.2, "receive": 0},
         "_webSocketMessages": [
            {"type": "receive", "time": 1764151200.25, "opcode": 1, "data": "{\"tick\":1}"},
            {"type": "send", "time": 1764151200.5, "opcode": 1, "data": "{\"id\":1}"},
            {"type": "receive", "time": 1764151200.75, "opcode": 2, "data": bin},
            {"type": "ping", "time": 1764151201.0, "opcode": 9, "data": ""}
         ]}
    ]}});
    serde_json::to_vec(&doc).unwrap()
}

#[test]
fn har_websocket_messages_import_and_export_as_chromium_writes_them() {
    use snapshots::format::{WsOpcode, WsSide};
    for b in backends() {
        let s = &b.store;
        let r = har_import(s, "ws", &chromium_websocket_har()).unwrap();
        assert_eq!((r.imported, r.websockets, r.websocket_messages_skipped), (1, 1, 1), "{}", b.name);
        let x = s.exchanges(&s.manifest("ws").unwrap()).next().unwrap().unwrap();
        // The proxy sees a wss:// handshake as an https:// request: that is what replay matches.
        assert_eq!(x.request.url, "https://ws.test/quotes?room=1");
        let log = x.websocket.clone().unwrap();
        let got: Vec<_> = log
            .messages
            .iter()
            .map(|m| (m.from, m.opcode, m.at_ms.round() as i64, s.blob_bytes(&m.payload.hash).unwrap()))
            .collect();
        assert_eq!(
            got,
            vec![
                (WsSide::Server, WsOpcode::Text, 250, br#"{"tick":1}"#.to_vec()),
                (WsSide::Client, WsOpcode::Text, 500, br#"{"id":1}"#.to_vec()),
                (WsSide::Server, WsOpcode::Binary, 750, vec![0u8, 159, 146, 150]),
            ],
            "{}",
            b.name
        );
        let mut out = Vec::new();
        har::export(s, "ws", &mut out, "mem").unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let e = &v["log"]["entries"][0];
        assert_eq!(e["request"]["url"], "wss://ws.test/quotes?room=1");
        assert_eq!(e["_resourceType"], "websocket");
        assert_eq!(e["_webSocketMessages"][1]["type"], "send");
        assert_eq!(e["_webSocketMessages"][2]["opcode"], 2);
        har_import(s, "ws-back", &out).unwrap();
        let y = s.exchanges(&s.manifest("ws-back").unwrap()).next().unwrap().unwrap();
        assert_eq!((y.key, y.websocket), (x.key, x.websocket), "{}", b.name);
    }
}

#[test]
fn har_export_imports_back_to_the_same_exchanges() {
    for b in backends() {
        let s = &b.store;
        har_import(s, "orig", &quirky_har()).unwrap();
        let mut out = Vec::new();
        let n = har::export(s, "orig", &mut out, "mem").unwrap();
        assert_eq!(n, 4);
        let _: serde_json::Value = serde_json::from_slice(&out).expect("export is valid JSON");
        har_import(s, "back", &out).unwrap();
        let a: Vec<_> = s.exchanges(&s.manifest("orig").unwrap()).collect::<Result<_, _>>().unwrap();
        let c: Vec<_> = s.exchanges(&s.manifest("back").unwrap()).collect::<Result<_, _>>().unwrap();
        assert_eq!(a.len(), c.len());
        for (x, y) in a.iter().zip(&c) {
            assert_eq!(x.key, y.key, "{}", b.name);
            assert_eq!(x.request, y.request);
            assert_eq!(x.response, y.response);
            assert_eq!(x.flags, y.flags);
            assert_eq!(x.started_ms, y.started_ms);
        }
        assert_eq!(s.stats().unwrap().blobs, 4, "bodies were not duplicated by the re-import");
    }
}

/// A run's own requests exported with the label of the control that sent each, where the run knew it, and
/// read back as `webfreeze guard check` reads them.
#[test]
fn a_wire_record_exports_its_control_label_and_reads_back() {
    let store = Store::in_memory();
    let record = |control| har::WireRecord {
        method: "POST",
        url: "https://shop.example/s/42/go",
        request_headers: vec![snapshots::Header {
            name: "content-type".into(),
            value: "application/x-www-form-urlencoded".into(),
        }],
        request_body: Some("x=1"),
        status: 403,
        response_headers: Vec::new(),
        response_body: None,
        response_text: None,
        control,
    };
    let mut out = Vec::new();
    har::export_records(&store, &[record(Some("Place order")), record(None)], "a run", &mut out, "t.har")
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let entries = v["log"]["entries"].as_array().unwrap();
    let labels: Vec<Option<String>> = entries.iter().map(har::labels::control_label).collect();
    assert_eq!(labels, vec![Some("Place order".to_string()), None]);
}
