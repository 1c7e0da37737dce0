//! Table tests of matching layers, sequence cursors, Range and misses, on the in-memory store.
//!
//! Size: tests only, one table per behaviour, sharing the fixtures at the top.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use snapshots::format::{ExchangeFlags, Header, RequestRecord, ResponseRecord, Timings};
use snapshots::{request_key, NewSnapshot, Seed, SnapshotSource};

use http::{header, Request};
use http_body_util::BodyExt;
use proxy::{Decision, Handler, RequestInfo};
use snapshots::{Exchange, Manifest, Store};

use crate::{
    matcher, overlay, search, NotCaptured, OnMiss, Replay, ReplayConfig, ReplayReport, STREAM_ABOVE,
};

/// A row body that stands for "recorded without its body" (`body_not_captured`).
const NOT_CAPTURED: &str = "\u{0}not captured";

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

#[tokio::test]
async fn matching_layers_table() {
    let (store, m) = snapshot(&[
        ("GET", "https://a.test/page?id=1", "page one"),
        ("GET", "https://a.test/app.js?_=1700000000001", "script"),
        ("GET", "https://a.test/search?q=shoes&sort=price&page=1", "shoes by price"),
        ("GET", "https://a.test/search?q=socks&page=1", "socks"),
        ("POST", "https://a.test/api", "posted"),
        ("GET", "https://a.test/w/load.php?lang=en&modules=startup&skin=vector", "startup js"),
    ]);
    let r = Replay::new(store, m, ReplayConfig { inject_shim: false, ..Default::default() });
    for (method, url, status, body, layer) in [
        ("GET", "https://A.test:443/page?id=1#x", 200, "page one", "exact"),
        ("GET", "https://a.test/app.js?_=1712345678999", 200, "script", "normalised"),
        ("GET", "https://a.test/page?id=1&utm_source=mail", 200, "page one", "normalised"),
        ("GET", "https://a.test/search?q=shoes&sort=price&page=1&view=grid", 200, "shoes by price", "fuzzy"),
        ("GET", "https://a.test/search?q=socks&page=1&view=list", 200, "socks", "fuzzy"),
        // A parameter that names the content (a search term, an id, a page of results) is part of the
        // resource: never dropped, added or replaced (issue 51), whatever its value looks like.
        ("GET", "https://a.test/search?q=socks&page=2", 404, "", "miss"),
        ("GET", "https://a.test/search?q=boots&page=1", 404, "", "miss"),
        ("GET", "https://a.test/search?page=1", 404, "", "miss"),
        ("GET", "https://a.test/page?id=2", 404, "", "miss"),
        ("GET", "https://a.test/page", 404, "", "miss"),
        ("GET", "https://a.test/page?id=1&layout=wide", 200, "page one", "fuzzy"),
        ("GET", "http://a.test/page?id=1", 200, "page one", "normalised"),
        // A parameter whose value names another resource rules the candidate out: never the wrong bytes.
        ("GET", "https://a.test/search?q=shoes&sort=name&page=1", 404, "", "miss"),
        ("GET", "https://a.test/w/load.php?lang=en&modules=jquery&skin=vector", 404, "", "miss"),
        (
            "GET",
            "https://a.test/w/load.php?lang=en&modules=startup&skin=vector&version=1a2b3c4d",
            200,
            "startup js",
            "fuzzy",
        ),
        ("GET", "https://a.test/other", 404, "", "miss"),
        ("GET", "https://b.test/page?id=1", 404, "", "miss"),
        ("DELETE", "https://a.test/api", 404, "", "miss"),
    ] {
        let before = r.report();
        let (s, b, h) = ask(&r, method, url, &[]).await;
        assert_eq!(s, status, "{method} {url}");
        if status == 200 {
            assert_eq!(b, body, "{url}");
            assert!(h.get("content-encoding").is_none() && h.get("alt-svc").is_none(), "{url}: {h:?}");
            assert_eq!(h.get("content-length").unwrap().to_str().unwrap(), body.len().to_string());
        } else {
            assert!(b.contains(url) || b.contains(&url.to_ascii_lowercase()), "miss body names the URL: {b}");
        }
        let after = r.report();
        let moved = match layer {
            "exact" => after.exact - before.exact,
            "normalised" => after.normalised - before.normalised,
            "fuzzy" => after.fuzzy - before.fuzzy,
            _ => after.missed - before.missed,
        };
        assert_eq!(moved, 1, "{url} answered by {layer}");
    }
    let rep = r.report();
    assert_eq!(rep.fuzzy_matches[0].recorded_url, "https://a.test/search?q=shoes&sort=price&page=1");
    assert_eq!(rep.fuzzy_matches.len(), 4);
    assert_eq!(rep.misses.len(), 10);
    assert_eq!(rep.served_exchanges, 5);
    assert!((rep.coverage - 5.0 / 6.0).abs() < 1e-9);
    assert_eq!(rep.fuzzy_min_score, 0.0);
}

/// Issue 61, part 3: a long number is not a timestamp when its parameter names the content. The normalised
/// layer stripped any 10-16-digit value (`?id=1234567890` served for `?id=9876543210`); a content
/// parameter now keeps its value in every layer, and only a cache buster's token or a value that reads as
/// a Unix time now is stripped.
#[tokio::test]
async fn issue_61_long_ids_are_never_the_wrong_page() {
    let (store, m) = snapshot(&[
        ("GET", "https://a.test/item?id=1234567890", "item 1234567890"),
        ("GET", "https://a.test/book?isbn=9781234567897", "book 978"),
        ("GET", "https://a.test/browse?node=16225007011", "node 16225007011"),
        ("GET", "https://a.test/p?productId=1712345678", "product 1712345678"),
        ("GET", "https://a.test/shelf?book=9781234567897", "shelf 978"),
        ("GET", "https://a.test/feed?since=1712345678&_dc=1712345678901", "feed"),
    ]);
    let r = Replay::new(store, m, ReplayConfig { inject_shim: false, ..Default::default() });
    for (url, status, body) in [
        ("https://a.test/item?id=1234567890", 200, "item 1234567890"),
        ("https://a.test/item?id=9876543210", 404, ""),
        ("https://a.test/book?isbn=9780000000002", 404, ""),
        ("https://a.test/browse?node=16225008011", 404, ""),
        ("https://a.test/p?productId=1712345679", 404, ""),
        // An unknown name whose value is no time now (an ISBN-13 in ms is the year 2279): kept.
        ("https://a.test/shelf?book=9780000000002", 404, ""),
        // A time now and a cache buster's token: stripped, as before.
        ("https://a.test/feed?since=1712349999&_dc=1712349999999", 200, "feed"),
    ] {
        let (s, b, _) = ask(&r, "GET", url, &[]).await;
        assert_eq!(s, status, "{url}");
        if status == 200 {
            assert_eq!(b, body, "{url}");
        }
    }
}

#[tokio::test]
async fn fuzzy_candidates_under_the_threshold_are_misses() {
    let (store, m) = snapshot(&[("GET", "https://a.test/list?a=1&b=2&c=3", "list")]);
    for (min, url, status) in [
        (0.0, "https://a.test/list?a=1&x=9", 200),
        (0.5, "https://a.test/list?a=1&x=9", 404),
        (0.5, "https://a.test/list?a=1&b=2&c=3&x=9", 200),
    ] {
        let cfg = ReplayConfig { inject_shim: false, fuzzy_min_score: min, ..Default::default() };
        let r = Replay::new(store.clone(), m.clone(), cfg);
        assert_eq!(ask(&r, "GET", url, &[]).await.0, status, "{url} at threshold {min}");
        assert_eq!(r.report().fuzzy_min_score, min);
    }
}

#[tokio::test]
async fn repeated_requests_follow_recorded_order_per_episode() {
    let (store, m) = snapshot(&[
        ("GET", "https://a.test/poll", "first"),
        ("GET", "https://a.test/other", "x"),
        ("GET", "https://a.test/poll", "second"),
        ("GET", "https://a.test/poll", "third"),
    ]);
    let r = Replay::new(store, m, ReplayConfig { inject_shim: false, ..Default::default() });
    let mut seen = Vec::new();
    for _ in 0..5 {
        seen.push(ask(&r, "GET", "https://a.test/poll", &[]).await.1);
    }
    assert_eq!(seen, ["first", "second", "third", "third", "third"]);
    assert_eq!(r.reset(), 2);
    assert_eq!(ask(&r, "GET", "https://a.test/poll", &[]).await.1, "first");
}

/// A key recorded more often than `matcher::EAGER_MAX` (an endpoint polled under load) is matched from the
/// index alone and each exchange read when served: the same order, the last repeated, a reset restarts.
#[tokio::test]
async fn a_key_recorded_thousands_of_times_replays_in_order_without_holding_every_copy() {
    let n = matcher::EAGER_MAX * 3;
    let bodies: Vec<String> = (0..n).map(|i| format!("poll {i}")).collect();
    let mut rows: Vec<(&str, &str, &str)> =
        bodies.iter().map(|b| ("GET", "https://a.test/poll", b.as_str())).collect();
    rows.insert(5, ("GET", "https://a.test/other", "x"));
    let (store, m) = snapshot(&rows);
    let r = Replay::new(store, m, ReplayConfig { inject_shim: false, ..Default::default() });
    for want in bodies.iter().chain(std::iter::repeat_n(&bodies[n - 1], 2)) {
        assert_eq!(&ask(&r, "GET", "https://a.test/poll", &[]).await.1, want);
    }
    let cached = r.caches.exact.iter().map(|(_, m)| (m.exchanges.len(), m.len())).collect::<Vec<_>>();
    assert_eq!(cached, [(0, n)], "only the sequence numbers are held");
    r.reset();
    assert_eq!(ask(&r, "GET", "https://a.test/poll", &[]).await.1, "poll 0");
}

#[tokio::test]
async fn range_requests_table() {
    let (store, m) = snapshot(&[("GET", "https://a.test/video", "0123456789")]);
    let r = Replay::new(store, m, ReplayConfig { inject_shim: false, ..Default::default() });
    for (range, status, body, content_range) in [
        ("bytes=0-3", 206, "0123", Some("bytes 0-3/10")),
        ("bytes=5-", 206, "56789", Some("bytes 5-9/10")),
        ("bytes=-2", 206, "89", Some("bytes 8-9/10")),
        ("bytes=8-100", 206, "89", Some("bytes 8-9/10")),
        ("bytes=10-12", 416, "requested range not satisfiable\n", Some("bytes */10")),
        ("bytes=0-1,4-5", 200, "0123456789", None),
        ("items=0-1", 200, "0123456789", None),
    ] {
        r.reset();
        let (s, b, h) = ask(&r, "GET", "https://a.test/video", &[("range", range)]).await;
        assert_eq!((s, b.as_str()), (status, body), "{range}");
        assert_eq!(h.get("content-range").map(|v| v.to_str().unwrap()), content_range, "{range}");
    }
}

#[tokio::test]
async fn html_gets_the_shim_and_csp_is_patched() {
    let store = Store::in_memory();
    let w = store
        .create_snapshot(NewSnapshot {
            name: "h".into(),
            created_ms: 1,
            seed: Seed { start_ms: 1_700_000_000_000, time_zone: "UTC".into() },
            source: SnapshotSource::Record,
            labels: BTreeMap::new(),
        })
        .unwrap();
    let url = "https://a.test/";
    w.append(Exchange {
        seq: 0,
        started_ms: 1,
        key: request_key("GET", url, None, b"").unwrap().hex(),
        request: RequestRecord {
            method: "GET".into(),
            url: url.into(),
            version: "HTTP/2".into(),
            headers: vec![],
            body: None,
        },
        response: ResponseRecord {
            status: 200,
            version: "HTTP/2".into(),
            headers: vec![
                Header::new("content-type", "text/html; charset=utf-8"),
                Header::new("content-security-policy", "script-src 'self'"),
            ],
            body: Some(store.put_blob(b"<html><head><title>t</title></head></html>").unwrap()),
            content_encoding: None,
        },
        timings: Timings::default(),
        alpn: None,
        server_addr: None,
        flags: ExchangeFlags::default(),
        websocket: None,
    })
    .unwrap();
    let m = w.finalize(2).unwrap();
    let r = Replay::new(store, m, ReplayConfig::default());
    let (s, body, h) = ask(&r, "GET", url, &[]).await;
    assert_eq!(s, 200);
    assert!(body.starts_with("<html><head><script nonce=\"webfreeze-shim\">"), "{body}");
    assert!(body.contains("var seed = 1700000000000"));
    assert_eq!(h.get("content-length").unwrap().to_str().unwrap(), body.len().to_string());
    assert_eq!(
        h.get("content-security-policy").unwrap(),
        "script-src 'self'; script-src-elem 'self' 'nonce-webfreeze-shim'"
    );
}

#[tokio::test]
async fn a_corrupt_body_is_a_clear_500_and_other_requests_still_work() {
    let (store, m) = snapshot(&[
        ("GET", "https://a.test/bad", "this body will be damaged"),
        ("GET", "https://a.test/good", "fine"),
    ]);
    let x = store.exchanges(&m).next().unwrap().unwrap();
    let hash = x.response.body.unwrap().hash;
    let mut raw = store.raw_blob_for_tests(&hash).unwrap().unwrap();
    raw.truncate(raw.len() / 2);
    store.damage_blob_for_tests(&hash, &raw).unwrap();
    let r = Replay::new(store, m, ReplayConfig { inject_shim: false, ..Default::default() });
    let (s, b, _) = ask(&r, "GET", "https://a.test/bad", &[]).await;
    assert_eq!(s, 500);
    assert!(b.contains("https://a.test/bad") && b.contains("verify"), "{b}");
    assert_eq!(ask(&r, "GET", "https://a.test/good", &[]).await.1, "fine");
}

#[tokio::test]
async fn bodies_not_captured_and_favicons_are_their_own_outcomes() {
    let (store, m) = snapshot(&[
        ("GET", "https://a.test/", "home"),
        ("GET", "https://a.test/app.js", NOT_CAPTURED),
        ("GET", "https://a.test/style.css?v=1", NOT_CAPTURED),
    ]);
    for (policy, status, body) in
        [(NotCaptured::NotFound, 404, "without its body"), (NotCaptured::Empty, 200, "")]
    {
        let cfg = ReplayConfig { inject_shim: false, not_captured: policy, ..Default::default() };
        let r = Replay::new(store.clone(), m.clone(), cfg);
        let (s, b, h) = ask(&r, "GET", "https://a.test/app.js", &[]).await;
        assert_eq!(s, status, "{policy:?}");
        assert!(b.contains(body), "{policy:?}: {b}");
        if policy == NotCaptured::NotFound {
            assert_eq!(h.get("x-webfreeze").unwrap(), "body-not-captured");
        }
        // Found through the fuzzy layer as well: still not a hit.
        assert_eq!(ask(&r, "GET", "https://a.test/style.css?v=2", &[]).await.0, status);
        assert_eq!(ask(&r, "GET", "https://a.test/", &[]).await.1, "home");
        for icon in ["https://a.test/favicon.ico", "https://a.test/img/favicon-32x32.png?v=2"] {
            let (s, _, h) = ask(&r, "GET", icon, &[]).await;
            assert_eq!(s, 204, "{icon}");
            assert_eq!(h.get("x-webfreeze").unwrap(), "synthetic-icon");
        }
        assert_eq!(ask(&r, "GET", "https://a.test/sw.js", &[]).await.0, 404, "service workers stay misses");
        let rep = r.report();
        assert_eq!((rep.exact, rep.normalised, rep.fuzzy), (1, 0, 0), "{policy:?}: not-captured is no hit");
        assert_eq!((rep.without_body, rep.synthetic, rep.missed), (2, 2, 1));
        assert_eq!(rep.requests, 6);
        assert_eq!(rep.without_body_urls[0], "https://a.test/app.js");
        assert_eq!(rep.synthetic_urls[0], "https://a.test/favicon.ico");
    }
}

#[test]
fn icon_requests() {
    for (method, url, icon) in [
        ("GET", "https://a.test/favicon.ico", true),
        ("GET", "https://a.test/static/favicon-16x16.png?v=3", true),
        ("GET", "https://a.test/apple-touch-icon.png", true),
        ("HEAD", "https://a.test/favicon.ico", false),
        ("GET", "https://a.test/favicon.js", false),
        ("GET", "https://a.test/img/logo.png", false),
        ("GET", "https://a.test/sw.js", false),
    ] {
        assert_eq!(crate::serving::is_icon_request(method, url), icon, "{method} {url}");
    }
}

#[tokio::test]
async fn misses_say_whether_the_rendering_needed_them() {
    let (store, m) = snapshot(&[("GET", "https://a.test/", "home")]);
    let r = Replay::new(store, m, ReplayConfig { inject_shim: false, ..Default::default() });
    for (url, dest, render) in [
        ("https://a.test/site.css", Some("style"), true),
        ("https://a.test/app.js", Some("script"), true),
        ("https://a.test/font.woff2", Some("font"), true),
        ("https://a.test/hero.png", Some("image"), true),
        ("https://a.test/manifest.json", Some("manifest"), false),
        ("https://a.test/api/beacon", Some("empty"), false),
        ("https://a.test/sw.js", Some("serviceworker"), false),
        ("https://a.test/unknown", None, false),
    ] {
        let headers: Vec<(&str, &str)> = dest.map(|d| ("sec-fetch-dest", d)).into_iter().collect();
        assert_eq!(ask(&r, "GET", url, &headers).await.0, 404, "{url}");
        let rep = r.report();
        let last = rep.misses.last().unwrap();
        assert_eq!((last.url.as_str(), last.dest.as_deref(), last.render), (url, dest, render));
    }
    assert_eq!(r.report().render_misses, 4);
}

/// Issue 34, the site union: what the replayed snapshot lacks comes from the other tasks' recordings of
/// the site, in name order, as its own layer (never exact), for safe methods only unless writes are allowed,
/// always the first recorded response (no sequence semantics), and after the snapshot's own exact and
/// normalised answers but before its fuzzy ones.
#[tokio::test]
async fn site_union_answers_what_the_task_lacks_in_a_fixed_order() {
    let store = Store::in_memory();
    let own = add_snapshot(
        &store,
        "run/a",
        &[
            ("GET", "https://s.test/home", "own home"),
            ("GET", "https://s.test/search?q=socks", "own socks"),
            ("POST", "https://s.test/cart", "own cart"),
        ],
    );
    let b = add_snapshot(
        &store,
        "run/b",
        &[
            ("GET", "https://s.test/home", "b home"),
            ("GET", "https://s.test/item/1", "b item"),
            ("GET", "https://s.test/item/1", "b item again"),
            ("POST", "https://s.test/pay", "b paid"),
        ],
    );
    let c = add_snapshot(
        &store,
        "run/c",
        &[
            ("GET", "https://s.test/item/1", "c item"),
            ("GET", "https://s.test/item/2", "c item two"),
            ("GET", "https://s.test/search?q=shoes", "c shoes"),
        ],
    );
    // Given out of order: the union's order is by name.
    let members = overlay::site_union_order(vec![c, own.clone(), b], "run/a");
    assert_eq!(members.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(), ["run/b", "run/c"]);
    // With and without the path sieve (built from the members' path indexes, or read from the union's
    // entries the store derived at seal): the same answers, the sieve only spares probing members that
    // hold nothing at the request's address.
    let all = || members.iter().chain(std::iter::once(&own));
    let built = std::sync::Arc::new(crate::sieve::PathSieve::build(&store, all()).unwrap());
    for m in all() {
        store.join_union("site union of run", m).unwrap();
    }
    let stored = std::sync::Arc::new(crate::sieve::PathSieve::stored(
        &store,
        "site union of run",
        all().map(|m| m.id),
    ));
    let (no, yes) = (None, Some(&built));
    for (writes, sieve) in
        [(false, no), (true, no), (false, yes), (true, yes), (false, Some(&stored)), (true, Some(&stored))]
    {
        let layers: Vec<_> = members
            .iter()
            .map(|m| overlay::Overlay { kind: overlay::OverlayKind::SiteUnion, manifest: m.clone() })
            .collect();
        let sieve = sieve.map(|s| {
            std::sync::Arc::new(crate::sieve::LayerSieve::new(
                s.clone(),
                layers.iter().map(|l| l.manifest.id),
            ))
        });
        let cfg = ReplayConfig {
            inject_shim: false,
            overlays: overlay::Overlays { layers, writes, sieve, hidden: None },
            ..Default::default()
        };
        let r = Replay::new(store.clone(), own.clone(), cfg);
        for (method, url, status, body, layer) in [
            ("GET", "https://s.test/home", 200, "own home", "exact"),
            ("GET", "https://s.test/item/1", 200, "b item", "site-union"),
            ("GET", "https://s.test/item/1", 200, "b item", "site-union"),
            ("GET", "https://s.test/item/2", 200, "c item two", "site-union"),
            // The task's own fuzzy answer comes after the union's exact ones, and before none.
            ("GET", "https://s.test/search?q=shoes", 200, "c shoes", "site-union"),
            ("GET", "https://s.test/search?q=socks&view=grid", 200, "own socks", "fuzzy"),
            ("POST", "https://s.test/cart", 200, "own cart", "exact"),
            ("POST", "https://s.test/pay", if writes { 200 } else { 404 }, "b paid", "site-union"),
            ("GET", "https://s.test/nowhere", 404, "", "miss"),
        ] {
            let before = r.report();
            let (s, got, h) = ask(&r, method, url, &[]).await;
            assert_eq!(s, status, "{method} {url} (writes: {writes})");
            let after = r.report();
            let moved = |f: fn(&ReplayReport) -> u64| f(&after) - f(&before);
            if s == 200 {
                assert_eq!(got, body, "{method} {url}");
                let header = h.get(overlay::LAYER_HEADER).map(|v| v.to_str().unwrap().to_string());
                assert_eq!(header.as_deref(), (layer == "site-union").then_some("site-union"), "{url}");
                let counted = match layer {
                    "exact" => moved(|r| r.exact),
                    "fuzzy" => moved(|r| r.fuzzy),
                    _ => moved(|r| r.site_union),
                };
                assert_eq!(counted, 1, "{method} {url} counted as {layer}");
                assert_eq!(moved(|r| r.requests), 1);
            } else {
                assert_eq!(moved(|r| r.missed), 1, "{method} {url}");
            }
        }
        let rep = r.report();
        assert_eq!(rep.overlays, ["site-union run/b", "site-union run/c"]);
        let by: Vec<(&str, &str)> =
            rep.overlay_answers.iter().map(|a| (a.url.as_str(), a.snapshot.as_str())).collect();
        assert_eq!(
            by[..4],
            [
                ("https://s.test/item/1", "run/b"),
                ("https://s.test/item/1", "run/b"),
                ("https://s.test/item/2", "run/c"),
                ("https://s.test/search?q=shoes", "run/c"),
            ]
        );
        // The replayed snapshot's coverage counts its own exchanges only.
        assert_eq!(rep.served_exchanges, 3);
    }
}

/// Issue 34, the frozen search engine: a search no recording answers gets a results page from the replayed
/// snapshots' documents (those holding the query's words, BM25 order, ties by URL), marked as such; the
/// same query gives the same bytes; a result's link replays; a recorded search is served as recorded in
/// fallback mode and from the index in `always` mode; with search off it is a miss.
#[tokio::test]
async fn frozen_search_answers_unrecorded_searches_from_the_recorded_pages() {
    let store = Store::in_memory();
    let own = add_snapshot(
        &store,
        "run/a",
        &[
            ("GET", "https://s.test/kettle", "<html><head><title>Blue Kettle</title></head><body><h1>Blue Kettle</h1><p>A kettle for tea, 24.00</p></body></html>"),
            ("GET", "https://www.google.com/search?q=recorded", "recorded results"),
            ("GET", "https://s.test/app.js", "kettle kettle kettle (a script: not a document)"),
        ],
    );
    let other = add_snapshot(
        &store,
        "run/b",
        &[(
            "GET",
            "https://s.test/teapot",
            "<html><head><title>Green Teapot</title></head><body><p>For tea & two</p></body></html>",
        )],
    );
    let layers = vec![overlay::Overlay { kind: overlay::OverlayKind::SiteUnion, manifest: other }];
    let replay = |mode| {
        let cfg = ReplayConfig {
            inject_shim: false,
            overlays: overlay::Overlays { layers: layers.clone(), writes: false, sieve: None, hidden: None },
            search: search::SearchConfig { mode, urls: vec!["https://find.test/".into()] },
            ..Default::default()
        };
        Replay::new(store.clone(), own.clone(), cfg)
    };
    let r = replay(search::SearchMode::Fallback);
    let (s, page, h) = ask(&r, "GET", "https://www.google.com/search?q=tea+kettle", &[]).await;
    assert_eq!(s, 200, "{page}");
    assert_eq!(h.get(overlay::LAYER_HEADER).unwrap(), "frozen-search");
    let kettle = page.find("href=\"https://s.test/kettle\"").expect(&page);
    let teapot = page.find("href=\"https://s.test/teapot\"").expect(&page);
    assert!(kettle < teapot, "both words rank the kettle first: {page}");
    assert!(
        !page.contains("app.js") && page.contains("Frozen search") && page.contains("Results 1-2 of 2"),
        "{page}"
    );
    assert!(page.contains("For tea &amp; two"), "snippets are escaped: {page}");
    let (_, again, _) = ask(&r, "GET", "https://www.google.com/search?q=tea+kettle", &[]).await;
    assert_eq!(page, again, "the same query gives the same bytes");
    // A result replays; a query nothing matches says so; the home page is a search box.
    let (s, body, _) = ask(&r, "GET", "https://s.test/teapot", &[]).await;
    assert!(s == 200 && body.contains("Green Teapot"));
    let (_, none, _) = ask(&r, "GET", "https://duckduckgo.com/?q=zebra", &[]).await;
    assert!(none.contains("No recorded page matches <b>zebra</b>"), "{none}");
    let (_, home, _) = ask(&r, "GET", "https://www.google.com/", &[]).await;
    assert!(home.contains("<form action=\"/search\"") && !home.contains("result-stats"), "{home}");
    let (_, custom, _) = ask(&r, "GET", "https://find.test/search?q=teapot", &[]).await;
    assert!(custom.contains("https://s.test/teapot"), "{custom}");
    // Recorded searches: as recorded in fallback mode, from the index in always mode.
    let (_, rec, _) = ask(&r, "GET", "https://www.google.com/search?q=recorded", &[]).await;
    assert_eq!(rec, "recorded results");
    let rep = r.report();
    assert_eq!((rep.frozen_search, rep.exact, rep.site_union, rep.missed), (5, 1, 1, 0));
    assert_eq!(rep.frozen_search_queries[0].query.as_deref(), Some("tea kettle"));
    assert_eq!(rep.frozen_search_queries[0].results, 2);
    let always = replay(search::SearchMode::Always);
    let (_, rec, h) = ask(&always, "GET", "https://www.google.com/search?q=recorded", &[]).await;
    assert!(rec.contains("No recorded page matches") && h.get(overlay::LAYER_HEADER).is_some(), "{rec}");
    // Misses sent live: an unrecorded search goes to the live engine, not the index.
    let live = Replay::new(
        store.clone(),
        own.clone(),
        ReplayConfig {
            inject_shim: false,
            on_miss: OnMiss::Live,
            search: search::SearchConfig { mode: search::SearchMode::Fallback, urls: Vec::new() },
            ..Default::default()
        },
    );
    let req =
        Request::builder().uri("https://www.google.com/search?q=tea").body(proxy::body::empty()).unwrap();
    let ctx = live.new_ctx(&RequestInfo {
        id: 0,
        client_addr: "127.0.0.1:1".parse().unwrap(),
        tls: true,
        client_alpn: None,
        client_version: http::Version::HTTP_11,
    });
    assert!(matches!(live.request(&ctx, req).await, Decision::Forward(_)), "sent live");
    // Off: an unrecorded search is a miss.
    let off = replay(search::SearchMode::Off);
    let (s, _, _) = ask(&off, "GET", "https://www.google.com/search?q=tea+kettle", &[]).await;
    assert_eq!(s, 404);
    assert_eq!(off.report().missed, 1);
}

/// Issue 35.6: when several recorded copies answer a request, one whose body was captured is preferred to
/// one whose body was not: the cursor skips body-less copies while a complete one remains, and the report
/// says so. Rows: the recorded copies, then what each request in turn gets.
#[tokio::test]
async fn the_body_that_was_captured_wins() {
    for (copies, answers, preferred) in [
        (&[NOT_CAPTURED, "script"][..], &[(200, "script"), (200, "script")][..], 1),
        (&["script", NOT_CAPTURED], &[(200, "script"), (404, "")], 0),
        (&[NOT_CAPTURED, "one", NOT_CAPTURED, "two"], &[(200, "one"), (200, "two"), (200, "two")], 2),
        (&[NOT_CAPTURED, NOT_CAPTURED], &[(404, ""), (404, "")], 0),
        (&["a", "b"], &[(200, "a"), (200, "b"), (200, "b")], 0),
    ] {
        let rows: Vec<(&str, &str, &str)> =
            copies.iter().map(|b| ("GET", "https://a.test/app.js", *b)).collect();
        let (store, m) = snapshot(&rows);
        let r = Replay::new(store, m, ReplayConfig { inject_shim: false, ..Default::default() });
        for (n, (status, body)) in answers.iter().enumerate() {
            let (s, got, _) = ask(&r, "GET", "https://a.test/app.js", &[]).await;
            assert_eq!(s, *status, "{copies:?}, request {n}");
            if s == 200 {
                assert_eq!(got, *body, "{copies:?}, request {n}");
            }
        }
        assert_eq!(r.report().preferred_with_body.len(), preferred, "{copies:?}");
    }
}

/// Issue 34, the stored search index: a replay answers from the index stored beside each snapshot (the
/// same bytes as the index derived in memory); one of another version or whose blob is gone is derived
/// again; a damaged one (bytes that no longer hash to its name, or the index of another snapshot) is
/// refused with the command that rebuilds it, never a page from it; rebuilt, the same page is back.
#[tokio::test]
async fn the_stored_search_index_is_used_and_a_damaged_one_refused() {
    let store = Store::in_memory();
    let page =
        |t: &str| format!("<html><head><title>{t}</title></head><body><p>{t} for tea</p></body></html>");
    add_snapshot(&store, "run/a", &[("GET", "https://s.test/kettle", &page("Kettle"))]);
    add_snapshot(&store, "run/b", &[("GET", "https://s.test/teapot", &page("Teapot"))]);
    let search = |own: &str| {
        let (store, own) = (store.clone(), store.manifest(own).unwrap());
        let other = store.manifest(if own.name == "run/a" { "run/b" } else { "run/a" }).unwrap();
        async move {
            let cfg = ReplayConfig {
                inject_shim: false,
                overlays: overlay::Overlays {
                    layers: vec![overlay::Overlay { kind: overlay::OverlayKind::SiteUnion, manifest: other }],
                    writes: false,
                    sieve: None,
                    hidden: None,
                },
                search: search::SearchConfig { mode: search::SearchMode::Fallback, urls: Vec::new() },
                ..Default::default()
            };
            let r = Replay::new(store, own, cfg);
            let (s, body, _) = ask(&r, "GET", "https://www.google.com/search?q=tea", &[]).await;
            (s, body)
        }
    };
    let derived = search("run/a").await;
    assert_eq!(derived.0, 200);
    assert!(derived.1.contains("Results 1-2 of 2"), "{}", derived.1);
    // Stored (one of the two: the other is derived), then both.
    let a = search::store_index(&store, "run/a").unwrap();
    assert_eq!(a.documents, 1);
    assert!(search::load_index(&store, &a.manifest).unwrap().is_some());
    assert_eq!(search("run/a").await, derived);
    search::store_index(&store, "run/b").unwrap();
    assert_eq!(search("run/a").await, derived, "stored indexes give the bytes the derived one gives");
    // Another version, or its blob gone: derived again, same page.
    let mut m = store.manifest("run/a").unwrap();
    let good = m.search_index.clone().unwrap();
    for r in [
        snapshots::DerivedRef { version: search::INDEX_VERSION + 1, ..good.clone() },
        snapshots::DerivedRef { hash: "00".repeat(32), ..good.clone() },
    ] {
        m.search_index = Some(r);
        store.put_manifest(&m).unwrap();
        assert_eq!(search("run/a").await, derived);
    }
    // Damaged: its bytes changed, or another snapshot's index named.
    let b_index = store.manifest("run/b").unwrap().search_index.unwrap();
    m.search_index = Some(snapshots::DerivedRef { items: 1, ..b_index });
    store.put_manifest(&m).unwrap();
    let (s, body) = search("run/a").await;
    assert_eq!(s, 503, "{body}");
    assert!(body.contains("is the index of \"run/b\"") && !body.contains("<li"), "{body}");
    m.search_index = Some(good.clone());
    store.put_manifest(&m).unwrap();
    let mut raw = store.raw_blob_for_tests(&good.hash).unwrap().unwrap();
    let last = raw.len() - 1;
    raw[last] ^= 0x55;
    store.damage_blob_for_tests(&good.hash, &raw).unwrap();
    let (s, body) = search("run/a").await;
    assert_eq!(s, 503, "{body}");
    assert!(
        body.contains("damaged")
            && body.contains("webfreeze snapshots search-index run/a")
            && !body.contains("<li"),
        "{body}"
    );
    // Rebuilt by the command's function: the page is back.
    search::store_index(&store, "run/a").unwrap();
    assert_eq!(search("run/a").await, derived);
}

/// Issue 34, `--search site`: a site's own search for a value no recording has is answered from the site's
/// recorded pages (not another host's), at its own path with its own parameter and its other parameters
/// kept, marked frozen search; a recorded search is served as recorded; without `site` it is a miss, as
/// before.
#[tokio::test]
async fn a_sites_own_search_is_answered_under_search_site() {
    let store = Store::in_memory();
    let page = |t: &str| format!("<html><head><title>{t}</title></head><body><p>{t}</p></body></html>");
    let own = add_snapshot(
        &store,
        "run/a",
        &[
            ("GET", "https://shop.test/search?q=kettle&cat=all", &page("Results for kettle")),
            ("GET", "https://shop.test/kettle", &page("Blue Kettle")),
            ("GET", "https://shop.test/teapot", &page("Green Teapot")),
        ],
    );
    let other = add_snapshot(&store, "run/b", &[("GET", "https://else.test/teapot", &page("Other Teapot"))]);
    let replay = |mode| {
        let cfg = ReplayConfig {
            inject_shim: false,
            overlays: overlay::Overlays {
                layers: vec![overlay::Overlay {
                    kind: overlay::OverlayKind::SiteUnion,
                    manifest: other.clone(),
                }],
                writes: false,
                sieve: None,
                hidden: None,
            },
            search: search::SearchConfig { mode, urls: Vec::new() },
            ..Default::default()
        };
        Replay::new(store.clone(), own.clone(), cfg)
    };
    let r = replay(search::SearchMode::Site);
    let (s, body, h) = ask(&r, "GET", "https://shop.test/search?q=teapot&cat=all", &[]).await;
    assert_eq!((s, h.get(overlay::LAYER_HEADER).map(|v| v.to_str().unwrap())), (200, Some("frozen-search")));
    assert!(body.contains("href=\"https://shop.test/teapot\"") && !body.contains("else.test"), "{body}");
    assert!(
        body.contains("<form action=\"/search\"")
            && body.contains("<input type=hidden name=\"cat\" value=\"all\">")
            && body.contains("name=\"q\" value=\"teapot\""),
        "{body}"
    );
    let (_, recorded, _) = ask(&r, "GET", "https://shop.test/search?q=kettle&cat=all", &[]).await;
    assert!(recorded.contains("Results for kettle"), "{recorded}");
    // A path never recorded with a query is not a search: the fuzzy layer answers as before.
    let (s, body, h) = ask(&r, "GET", "https://shop.test/kettle?color=blue", &[]).await;
    assert!(s == 200 && body.contains("Blue Kettle") && h.get(overlay::LAYER_HEADER).is_none(), "{body}");
    let rep = r.report();
    assert_eq!((rep.frozen_search, rep.exact, rep.fuzzy, rep.missed), (1, 1, 1, 0));
    assert_eq!(rep.frozen_search_queries[0].query.as_deref(), Some("teapot"));
    let (s, _, _) =
        ask(&replay(search::SearchMode::Fallback), "GET", "https://shop.test/search?q=teapot&cat=all", &[])
            .await;
    assert_eq!(s, 404, "without `site` a site's own search is not answered");
}

/// Issue 51: a site's own search learned from the search form its pages declare, with no recorded search
/// to learn from (a WordPress blog's `/?s=`), under `--search site`; and never the wrong page instead: the
/// recorded home page is no fuzzy answer to `/?s=garden` (the search term names the content).
#[tokio::test]
async fn a_search_the_pages_declare_is_answered_and_never_the_wrong_page() {
    let store = Store::in_memory();
    let home = "<html><head><title>Garden Blog</title></head><body><form role=search method=get \
                action=\"https://blog.test/\"><input type=search name=s><input type=submit value=Search></form>\
                <p>Welcome</p><a href=\"/roses/\">Roses</a></body></html>";
    let post = "<html><head><title>Roses in the garden</title></head><body><p>Roses and garden notes</p></body></html>";
    let own = add_snapshot(
        &store,
        "run/a",
        &[("GET", "https://blog.test/", home), ("GET", "https://blog.test/roses/", post)],
    );
    let replay = |mode| {
        let cfg = ReplayConfig {
            inject_shim: false,
            search: search::SearchConfig { mode, urls: Vec::new() },
            ..Default::default()
        };
        Replay::new(store.clone(), own.clone(), cfg)
    };
    let (s, body, _) =
        ask(&replay(search::SearchMode::Fallback), "GET", "https://blog.test/?s=garden", &[]).await;
    assert_eq!(s, 404, "not the home page: {body}");
    let r = replay(search::SearchMode::Site);
    let (s, body, h) = ask(&r, "GET", "https://blog.test/?s=garden", &[]).await;
    assert_eq!(
        (s, h.get(overlay::LAYER_HEADER).map(|v| v.to_str().unwrap())),
        (200, Some("frozen-search")),
        "{body}"
    );
    assert!(
        body.contains("href=\"https://blog.test/roses/\"") && body.contains("name=\"s\" value=\"garden\""),
        "{body}"
    );
    assert_eq!(r.report().frozen_search, 1);
    // The home page itself is still the recorded one.
    assert!(ask(&r, "GET", "https://blog.test/", &[]).await.1.contains("Welcome"));
}

/// Issue 51: a site's search learned from the OpenSearch description its pages link (recorded by the crawl).
#[tokio::test]
async fn a_search_an_opensearch_description_declares_is_answered() {
    let store = Store::in_memory();
    let home = "<html><head><title>Plant Wiki</title><link rel=\"search\" \
                type=\"application/opensearchdescription+xml\" href=\"/osd.xml\"></head><body><p>Welcome</p></body></html>";
    let fern = "<html><head><title>Ferns</title></head><body><p>Ferns grow in shade</p></body></html>";
    let osd = "<OpenSearchDescription><Url type=\"text/html\" template=\"https://w.test/find?query={searchTerms}\"/></OpenSearchDescription>";
    let own = add_snapshot(
        &store,
        "run/a",
        &[
            ("GET", "https://w.test/", home),
            ("GET", "https://w.test/ferns", fern),
            ("GET", "https://w.test/osd.xml", osd),
        ],
    );
    let cfg = ReplayConfig {
        inject_shim: false,
        search: search::SearchConfig { mode: search::SearchMode::Site, urls: Vec::new() },
        ..Default::default()
    };
    let r = Replay::new(store, own, cfg);
    let (s, body, h) = ask(&r, "GET", "https://w.test/find?query=shade", &[]).await;
    assert_eq!(
        (s, h.get(overlay::LAYER_HEADER).map(|v| v.to_str().unwrap())),
        (200, Some("frozen-search")),
        "{body}"
    );
    assert!(body.contains("href=\"https://w.test/ferns\""), "{body}");
}

/// Issue 61, part 1: the OpenSearch description the crawl fetched into its part is read when the first page
/// that links it is the task's own (another layer). The set of descriptions already read was shared across
/// layers and each was looked up only in the linking page's layer: the search was never declared, and an
/// unrecorded query on it answered 404.
#[tokio::test]
async fn issue_61_an_opensearch_description_in_another_layer_is_read() {
    let store = Store::in_memory();
    let page = |t: &str| {
        format!(
            "<html><head><title>{t}</title><link rel=\"search\" type=\"application/opensearchdescription+xml\" \
             href=\"/osd.xml\"></head><body><p>{t}</p></body></html>"
        )
    };
    let osd = "<OpenSearchDescription><Url type=\"text/html\" template=\"https://w.test/find?query={searchTerms}\"/></OpenSearchDescription>";
    let own = add_snapshot(&store, "run/a", &[("GET", "https://w.test/", &page("Plant Wiki"))]);
    let crawl = add_snapshot(
        &store,
        "run/crawl/w/001",
        &[
            ("GET", "https://w.test/ferns", &page("Ferns grow in shade")),
            ("GET", "https://w.test/osd.xml", osd),
        ],
    );
    let cfg = ReplayConfig {
        inject_shim: false,
        overlays: overlay::Overlays {
            layers: vec![overlay::Overlay { kind: overlay::OverlayKind::Crawl, manifest: crawl }],
            writes: false,
            sieve: None,
            hidden: None,
        },
        search: search::SearchConfig { mode: search::SearchMode::Site, urls: Vec::new() },
        ..Default::default()
    };
    let r = Replay::new(store, own, cfg);
    let (s, body, h) = ask(&r, "GET", "https://w.test/find?query=shade", &[]).await;
    assert_eq!(
        (s, h.get(overlay::LAYER_HEADER).map(|v| v.to_str().unwrap())),
        (200, Some("frozen-search")),
        "{body}"
    );
    assert!(body.contains("href=\"https://w.test/ferns\""), "{body}");
}

/// Issue 61, part 2: a leave-one-out replay (`webfreeze coverage`) meets nothing of its held-out task: not
/// the crawl's pages reached only through the task's own start page (hidden, whatever layer of matching
/// would find them), and neither its own pages nor those in the frozen search's results.
#[tokio::test]
async fn issue_61_a_held_out_tasks_pages_are_hidden_from_its_replay_and_its_search() {
    let store = Store::in_memory();
    let page = |t: &str| format!("<html><head><title>{t}</title></head><body><p>{t}</p></body></html>");
    let own = add_snapshot(&store, "run/a", &[("GET", "https://w.test/ferns/own", &page("Own fern notes"))]);
    let crawl = add_snapshot(
        &store,
        "run/crawl/w/001",
        &[
            ("GET", "https://w.test/ferns/private?id=7", &page("Private fern page")),
            ("GET", "https://w.test/moss", &page("Moss fern neighbour")),
        ],
    );
    let replay = |hide: bool| {
        let hidden =
            hide.then(|| std::sync::Arc::new(["https://w.test/ferns/private?id=7".to_string()].into()));
        let cfg = ReplayConfig {
            inject_shim: false,
            overlays: overlay::Overlays {
                layers: vec![overlay::Overlay { kind: overlay::OverlayKind::Crawl, manifest: crawl.clone() }],
                hidden,
                ..Default::default()
            },
            search: search::SearchConfig {
                mode: search::SearchMode::Fallback,
                urls: vec!["https://find.test/".into()],
            },
            hide_own: hide,
            ..Default::default()
        };
        Replay::new(store.clone(), own.clone(), cfg)
    };
    let (kept, held_out) = (replay(false), replay(true));
    for (url, as_recorded, left_out) in [
        ("https://w.test/ferns/private?id=7", 200, 404),
        // A fuzzy or normalised match does not bring the hidden page back.
        ("https://w.test/ferns/private?id=7&utm_source=x", 200, 404),
        ("https://w.test/moss", 200, 200),
        ("https://w.test/ferns/own", 200, 404),
    ] {
        assert_eq!(ask(&kept, "GET", url, &[]).await.0, as_recorded, "kept {url}");
        assert_eq!(ask(&held_out, "GET", url, &[]).await.0, left_out, "held out {url}");
    }
    let (_, all, _) = ask(&kept, "GET", "https://find.test/?q=fern", &[]).await;
    let (_, some, _) = ask(&held_out, "GET", "https://find.test/?q=fern", &[]).await;
    for (url, in_kept, in_held_out) in [
        ("https://w.test/ferns/own", true, false),
        ("https://w.test/ferns/private?id=7", true, false),
        ("https://w.test/moss", true, true),
    ] {
        let href = format!("href=\"{}\"", url.replace('&', "&amp;"));
        assert_eq!(
            (all.contains(&href), some.contains(&href)),
            (in_kept, in_held_out),
            "{url}\n{all}\n{some}"
        );
    }
}

/// Issue 47, part 2: the frozen web follows the run's writes. The cart recorded before and after "add to
/// cart" is answered by the run's write epoch, not by position; a write the recording never made is a miss
/// (never a fuzzy answer) and changes nothing; a reset starts the run's state afresh.
#[tokio::test]
async fn a_page_recorded_before_and_after_a_write_follows_the_runs_writes() {
    let (store, m) = snapshot(&[
        ("GET", "https://s.test/cart", "empty cart"),
        ("POST", "https://s.test/cart/add?slug=jar", "added"),
        ("GET", "https://s.test/cart", "cart: jar"),
    ]);
    let r = Replay::new(store, m, ReplayConfig { inject_shim: false, ..Default::default() });
    // An agent that opens the cart twice and adds nothing: empty both times.
    assert_eq!(ask(&r, "GET", "https://s.test/cart", &[]).await.1, "empty cart");
    assert_eq!(ask(&r, "GET", "https://s.test/cart", &[]).await.1, "empty cart");
    // Another product: a write the recording never made is a miss, and the cart stays empty.
    assert_eq!(ask(&r, "POST", "https://s.test/cart/add?slug=mug", &[]).await.0, 404);
    assert_eq!(ask(&r, "GET", "https://s.test/cart", &[]).await.1, "empty cart");
    // The recording's add: the cart as it was after it.
    assert_eq!(ask(&r, "POST", "https://s.test/cart/add?slug=jar", &[]).await.1, "added");
    assert_eq!(ask(&r, "GET", "https://s.test/cart", &[]).await.1, "cart: jar");
    assert_eq!(ask(&r, "GET", "https://s.test/cart", &[]).await.1, "cart: jar");
    // A new episode starts from the recording's first state.
    r.reset();
    assert_eq!(ask(&r, "GET", "https://s.test/cart", &[]).await.1, "empty cart");
}

/// A write the recording made after others the run skipped does not carry their effects: the state moves
/// only with the recording's next write.
#[tokio::test]
async fn a_later_write_out_of_order_leaves_the_state_where_it_is() {
    let (store, m) = snapshot(&[
        ("GET", "https://s.test/cart", "empty cart"),
        ("POST", "https://s.test/cart/add?slug=jar", "added"),
        ("GET", "https://s.test/cart", "cart: jar"),
        ("POST", "https://s.test/wishlist/add?slug=jar", "wished"),
        ("GET", "https://s.test/cart", "cart: jar, wished"),
    ]);
    let r = Replay::new(store, m, ReplayConfig { inject_shim: false, ..Default::default() });
    assert_eq!(ask(&r, "POST", "https://s.test/wishlist/add?slug=jar", &[]).await.1, "wished");
    assert_eq!(ask(&r, "GET", "https://s.test/cart", &[]).await.1, "empty cart");
}

/// Issue 59, part 2: served by epoch, exactly. A page that carries state, recorded only after a write the
/// run has not made, is a `state-unknown` miss (marked, counted in the report) for the agent and the
/// end-of-task checks alike, never the state after that write; a stylesheet recorded after it is served
/// at any epoch; once the run makes the write, the page is served.
#[tokio::test]
async fn issue_59_a_page_recorded_only_after_a_write_is_state_unknown_before_it() {
    let (store, m) = snapshot(&[
        ("GET", "https://s.test/product/jar", "<p>jar</p>"),
        ("POST", "https://s.test/cart/add?slug=jar", "added"),
        ("GET", "https://s.test/cart", "<p>cart: jar</p>"),
        ("GET", "https://s.test/static/cart.css", "/* cart */"),
    ]);
    let r = Replay::new(store, m, ReplayConfig { inject_shim: false, ..Default::default() });
    // Epoch 0: the product page (recorded then) is served; the cart is not known before the add.
    assert_eq!(ask(&r, "GET", "https://s.test/product/jar", &[]).await.1, "<p>jar</p>");
    let (status, body, headers) = ask(&r, "GET", "https://s.test/cart", &[]).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(headers["x-webfreeze-miss"], "state-unknown");
    assert!(body.contains("write epoch 0"), "{body}");
    assert_eq!(ask(&r, "GET", "https://s.test/static/cart.css", &[]).await.1, "/* cart */");
    let report = r.report();
    assert_eq!((report.state_unknown, report.missed), (1, 1), "{report:?}");
    assert_eq!(report.misses[0].action, crate::STATE_UNKNOWN);
    // The recording's add: the cart is the one recorded after it.
    assert_eq!(ask(&r, "POST", "https://s.test/cart/add?slug=jar", &[]).await.1, "added");
    assert_eq!(ask(&r, "GET", "https://s.test/cart", &[]).await.1, "<p>cart: jar</p>");
}

/// Bodies above the in-memory limit stream from the store chunk by chunk (each read on the blocking pool,
/// not a thread per body): whole, in order, with their length, several at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_bodies_stream_whole_from_the_blocking_pool() {
    let big: String = (0..(STREAM_ABOVE as usize + (3 << 20)) / 16).map(|i| format!("{i:015}\n")).collect();
    let (store, m) =
        snapshot(&[("GET", "https://a.test/big", &big), ("GET", "https://a.test/big2", &big[16..])]);
    let r =
        std::sync::Arc::new(Replay::new(store, m, ReplayConfig { inject_shim: false, ..Default::default() }));
    let (a, b) =
        tokio::join!(ask(&r, "GET", "https://a.test/big", &[]), ask(&r, "GET", "https://a.test/big2", &[]));
    assert_eq!(a.0, 200);
    assert_eq!(a.2[header::CONTENT_LENGTH], big.len().to_string().as_str());
    assert!(a.1 == big && b.1 == big[16..], "bodies differ: {} and {} bytes", a.1.len(), b.1.len());
}

/// Issue 61: the frozen search index is loaded once per process and set of snapshots, not per replay: two
/// tasks' replays (each its own snapshot first, the other as an overlay) share one load, each still answering
/// a URL both hold with its own snapshot's page; once no replay holds it, the memory is released and the
/// next replay loads it again.
#[tokio::test]
async fn replays_of_the_same_snapshots_share_one_search_index() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    let page =
        |t: &str| format!("<html><head><title>{t}</title></head><body><p>{t} for tea</p></body></html>");
    add_snapshot(&store, "run/a", &[("GET", "https://s.test/kettle", &page("Blue Kettle"))]);
    add_snapshot(
        &store,
        "run/b",
        &[
            ("GET", "https://s.test/teapot", &page("Teapot")),
            ("GET", "https://s.test/kettle", &page("Old Kettle")),
        ],
    );
    let replay = |own: &str, other: &str| {
        let cfg = ReplayConfig {
            inject_shim: false,
            overlays: overlay::Overlays {
                layers: vec![overlay::Overlay {
                    kind: overlay::OverlayKind::SiteUnion,
                    manifest: store.manifest(other).unwrap(),
                }],
                writes: false,
                sieve: None,
                hidden: None,
            },
            search: search::SearchConfig { mode: search::SearchMode::Fallback, urls: Vec::new() },
            ..Default::default()
        };
        Replay::new(store.clone(), store.manifest(own).unwrap(), cfg)
    };
    async fn search(r: &Replay) -> String {
        ask(r, "GET", "https://www.google.com/search?q=kettle+tea", &[]).await.1
    }
    let (a, b) = (replay("run/a", "run/b"), replay("run/b", "run/a"));
    let (page_a, page_b) = (search(&a).await, search(&b).await);
    let first = a.search_index.load();
    assert!(first.is_some(), "{page_a}");
    assert_eq!(b.search_index.load(), first, "the second task's replay shares the first's index");
    // The same files, each replay's own copy of the URL both hold.
    assert!(page_a.contains("Blue Kettle") && !page_a.contains("Old Kettle"), "{page_a}");
    assert!(page_b.contains("Old Kettle") && !page_b.contains("Blue Kettle"), "{page_b}");
    drop((a, b));
    let c = replay("run/a", "run/b");
    assert_eq!(search(&c).await, page_a);
    assert!(c.search_index.load().is_some_and(|n| Some(n) != first), "released, then loaded again");
}
