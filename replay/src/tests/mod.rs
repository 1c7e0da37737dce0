//! Replay's unit tests on the in-memory store: the fixtures shared by every room (a snapshot from rows, a
//! request asked of a replay), and one room per behaviour: `matching.rs`, `layers.rs`, `frozen_search.rs`.

#![allow(clippy::unwrap_used)]

mod frozen_search;
mod layers;
mod matching;

use std::collections::BTreeMap;

use snapshots::format::{ExchangeFlags, Header, RequestRecord, ResponseRecord, Timings};
use snapshots::{request_key, NewSnapshot, Seed, SnapshotSource};

use http::Request;
use http_body_util::BodyExt;
use proxy::{Decision, Handler, RequestInfo};
use snapshots::{Exchange, Manifest, Store};

use crate::Replay;

/// A row body that stands for "recorded without its body" (`body_not_captured`).
pub(crate) const NOT_CAPTURED: &str = "\u{0}not captured";

pub(crate) fn snapshot(rows: &[(&str, &str, &str)]) -> (Store, Manifest) {
    let store = Store::in_memory();
    let m = add_snapshot(&store, "t", rows);
    (store, m)
}

/// A recorded snapshot `name` in `store` of `(method, url, response body)` rows.
pub(crate) fn add_snapshot(store: &Store, name: &str, rows: &[(&str, &str, &str)]) -> Manifest {
    let w = store
        .create_snapshot(NewSnapshot {
            name: name.into(),
            created_ms: 1,
            seed: Seed { start_ms: 1_700_000_000_000, time_zone: "UTC".into() },
            source: SnapshotSource::Record,
            labels: BTreeMap::new(),
        })
        .unwrap();
    for (i, (method, url, body)) in rows.iter().enumerate() {
        let x = Exchange {
            seq: i as u64,
            started_ms: 1,
            key: request_key(method, url, None, b"").unwrap().hex(),
            request: RequestRecord {
                method: method.to_string(),
                url: url.to_string(),
                version: "HTTP/1.1".into(),
                headers: vec![Header::new("accept", "*/*")],
                body: None,
            },
            response: ResponseRecord {
                status: 200,
                version: "HTTP/1.1".into(),
                headers: vec![
                    Header::new(
                        "content-type",
                        match body.as_bytes().first() {
                            Some(b'<') => "text/html",
                            Some(b'/') => "text/css",
                            _ => "text/plain",
                        },
                    ),
                    Header::new("content-encoding", "gzip"),
                    Header::new("alt-svc", "h3=\":443\""),
                ],
                body: (*body != NOT_CAPTURED).then(|| store.put_blob(body.as_bytes()).unwrap()),
                content_encoding: Some("gzip".into()),
            },
            timings: Timings::default(),
            alpn: None,
            server_addr: None,
            flags: ExchangeFlags { body_not_captured: *body == NOT_CAPTURED, ..Default::default() },
            websocket: None,
        };
        w.append(x).unwrap();
    }
    w.finalize(2).unwrap()
}

pub(crate) async fn ask(
    r: &Replay,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
) -> (u16, String, http::HeaderMap) {
    let mut b = Request::builder().method(method).uri(url);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    let req = b.body(proxy::body::empty()).unwrap();
    let ctx = r.new_ctx(&RequestInfo {
        id: 0,
        client_addr: "127.0.0.1:1".parse().unwrap(),
        tls: true,
        client_alpn: None,
        client_version: http::Version::HTTP_11,
    });
    match r.request(&ctx, req).await {
        Decision::Respond(res) => {
            let status = res.status().as_u16();
            let headers = res.headers().clone();
            let body = res.into_body().collect().await.unwrap().to_bytes();
            (status, String::from_utf8_lossy(&body).into_owned(), headers)
        }
        Decision::Forward(_) => panic!("404 mode must never forward"),
    }
}
