//! How one snapshot answers: matching layers, long ids, fuzzy candidates, recorded order, Range, the
//! shim and CSP, corrupt and uncaptured bodies, favicons, misses, streaming of large bodies.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use http::header;
use snapshots::format::{ExchangeFlags, Header, RequestRecord, ResponseRecord, Timings};
use snapshots::{request_key, Exchange, NewSnapshot, Seed, SnapshotSource, Store};

use super::{ask, snapshot, NOT_CAPTURED};
use crate::{matcher, NotCaptured, Replay, ReplayConfig, STREAM_ABOVE};

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
