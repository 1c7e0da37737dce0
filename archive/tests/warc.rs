//! WARC/WACZ import and export against an in-memory store, with archives written here byte by byte.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Cursor, Read, Write};

use archive::warc::{export_wacz, export_warc, import_wacz, import_warc, WarcImportReport};
use archive::ImportOptions;
use snapshots::{Exchange, Store};

fn opts(name: &str) -> ImportOptions {
    ImportOptions { snapshot: name.into(), source_file: format!("{name}.warc"), now_ms: 1_700_000_000_000 }
}

/// One WARC record with the given version, fields and block.
fn record(version: &str, fields: &[(&str, &str)], block: &[u8]) -> Vec<u8> {
    let mut out = format!("WARC/{version}\r\n").into_bytes();
    for (n, v) in fields {
        out.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
    }
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", block.len()).as_bytes());
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

fn response(id: &str, uri: &str, http: &[u8]) -> Vec<u8> {
    record(
        "1.1",
        &[
            ("WARC-Type", "response"),
            ("WARC-Record-ID", id),
            ("WARC-Date", "2024-05-06T07:08:09Z"),
            ("WARC-Target-URI", uri),
            ("Content-Type", "application/http; msgtype=response"),
        ],
        http,
    )
}

fn request(id: &str, to: &str, uri: &str, http: &[u8]) -> Vec<u8> {
    record(
        "1.1",
        &[
            ("WARC-Type", "request"),
            ("WARC-Record-ID", id),
            ("WARC-Concurrent-To", to),
            ("WARC-Date", "2024-05-06T07:08:09Z"),
            ("WARC-Target-URI", uri),
            ("Content-Type", "application/http; msgtype=request"),
        ],
        http,
    )
}

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

fn brotli(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut Cursor::new(b), &mut out, &brotli::enc::BrotliEncoderParams::default())
        .unwrap();
    out
}

fn chunked(b: &[u8], size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for c in b.chunks(size) {
        out.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
        out.extend_from_slice(c);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

fn http_response(headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = b"HTTP/1.1 200 OK\r\n".to_vec();
    for (n, v) in headers {
        out.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

fn exchanges(store: &Store, name: &str) -> Vec<Exchange> {
    let m = store.manifest(name).unwrap();
    store.exchanges(&m).map(Result::unwrap).collect()
}

fn body(store: &Store, x: &Exchange) -> Vec<u8> {
    store.blob_bytes(&x.response.body.as_ref().expect("a body").hash).unwrap()
}

fn import(store: &Store, name: &str, bytes: &[u8]) -> WarcImportReport {
    import_warc(store, Cursor::new(bytes.to_vec()), &opts(name), |_| {}).unwrap()
}

const PAGE: &[u8] = b"<html><body>hello, archived world</body></html>";

#[test]
fn bodies_are_dechunked_and_decoded_table() {
    // (case, response headers, wire body)
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, Vec<u8>);
    let cases: Vec<Case> = vec![
        ("identity", vec![("Content-Type", "text/html")], PAGE.to_vec()),
        ("gzip", vec![("Content-Encoding", "gzip")], gzip(PAGE)),
        ("br", vec![("Content-Encoding", "br")], brotli(PAGE)),
        ("chunked", vec![("Transfer-Encoding", "chunked")], chunked(PAGE, 7)),
        (
            "chunked gzip",
            vec![("Transfer-Encoding", "chunked"), ("Content-Encoding", "gzip")],
            chunked(&gzip(PAGE), 5),
        ),
        // Writers that store the de-chunked body but keep the header: read as is.
        ("chunked header, plain body", vec![("Transfer-Encoding", "chunked")], PAGE.to_vec()),
    ];
    for (i, (case, headers, wire)) in cases.into_iter().enumerate() {
        let store = Store::in_memory();
        let name = format!("c{i}");
        let warc = response("<urn:uuid:1>", "http://site.example/page", &http_response(&headers, &wire));
        let r = import(&store, &name, &warc);
        assert_eq!(r.imported, 1, "{case}");
        assert!(r.damaged.is_empty(), "{case}: {:?}", r.damaged);
        let xs = exchanges(&store, &name);
        assert_eq!(body(&store, &xs[0]), PAGE, "{case}");
        assert!(!xs[0].flags.decode_failed && !xs[0].flags.truncated, "{case}: {:?}", xs[0].flags);
    }
}

#[test]
fn requests_pair_by_concurrent_to_either_order_and_keep_post_bodies() {
    let store = Store::in_memory();
    let mut warc = Vec::new();
    // Response first, its request after (warcio's order).
    warc.extend(response("<urn:uuid:r1>", "http://site.example/a", &http_response(&[], b"A")));
    warc.extend(request(
        "<urn:uuid:q1>",
        "<urn:uuid:r1>",
        "http://site.example/a",
        b"GET /a HTTP/1.1\r\nHost: site.example\r\nX-Mark: one\r\n\r\n",
    ));
    // Request first (wget's order), a POST with a form body.
    warc.extend(request(
        "<urn:uuid:q2>",
        "<urn:uuid:r2>",
        "http://site.example/search",
        b"POST /search HTTP/1.1\r\nHost: site.example\r\nContent-Type: application/x-www-form-urlencoded\r\n\r\nq=frozen",
    ));
    warc.extend(response("<urn:uuid:r2>", "http://site.example/search", &http_response(&[], b"results")));
    // A response without any request record.
    warc.extend(response("<urn:uuid:r3>", "http://site.example/c", &http_response(&[], b"C")));
    let r = import(&store, "pairs", &warc);
    assert_eq!((r.imported, r.paired, r.without_request), (3, 2, 1));
    let xs = exchanges(&store, "pairs");
    let a = xs.iter().find(|x| x.request.url.ends_with("/a")).unwrap();
    assert!(a.request.headers.iter().any(|h| h.name == "X-Mark" && h.value == "one"));
    let post = xs.iter().find(|x| x.request.url.ends_with("/search")).unwrap();
    assert_eq!(post.request.method, "POST");
    assert_eq!(store.blob_bytes(&post.request.body.as_ref().unwrap().hash).unwrap(), b"q=frozen");
    // The request key includes the form body, as recording does.
    let want = snapshots::request_key(
        "POST",
        "http://site.example/search",
        Some("application/x-www-form-urlencoded"),
        b"q=frozen",
    )
    .unwrap();
    assert_eq!(post.key, want.hex());
    let c = xs.iter().find(|x| x.request.url.ends_with("/c")).unwrap();
    assert_eq!(c.request.method, "GET");
    // The snapshot's clock starts at the capture date.
    assert_eq!(store.manifest("pairs").unwrap().seed.start_ms, 1_714_979_289_000);
}

#[test]
fn revisits_take_their_originals_body() {
    let store = Store::in_memory();
    let mut warc = Vec::new();
    let mut orig = response(
        "<urn:uuid:o>",
        "http://site.example/logo.png",
        &http_response(&[("Content-Type", "image/png")], b"PNGDATA"),
    );
    // Give the original a payload digest field, as writers do.
    let at = orig.windows(12).position(|w| w == b"Content-Type").unwrap();
    orig.splice(at..at, b"WARC-Payload-Digest: sha1:AAAA\r\n".iter().copied());
    warc.extend(orig);
    let revisit = |id: &str, uri: &str, extra: &[(&str, &str)]| {
        let mut f = vec![
            ("WARC-Type", "revisit"),
            ("WARC-Record-ID", id),
            ("WARC-Date", "2024-05-06T07:09:00Z"),
            ("WARC-Target-URI", uri),
            ("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"),
        ];
        f.extend_from_slice(extra);
        record("1.1", &f, b"HTTP/1.1 200 OK\r\nX-Again: yes\r\n\r\n")
    };
    // By digest, from another URL.
    warc.extend(revisit(
        "<urn:uuid:v1>",
        "http://cdn.example/logo.png",
        &[("WARC-Payload-Digest", "sha1:AAAA")],
    ));
    // By refers-to URI.
    warc.extend(revisit(
        "<urn:uuid:v2>",
        "http://site.example/logo.png?v=2",
        &[("WARC-Refers-To-Target-URI", "http://site.example/logo.png")],
    ));
    // Nothing to point at.
    warc.extend(revisit(
        "<urn:uuid:v3>",
        "http://elsewhere.example/x",
        &[("WARC-Payload-Digest", "sha1:ZZZZ")],
    ));
    let r = import(&store, "rv", &warc);
    assert_eq!((r.revisits_resolved, r.revisits_unresolved, r.imported), (2, 1, 4));
    let xs = exchanges(&store, "rv");
    for url in ["http://cdn.example/logo.png", "http://site.example/logo.png?v=2"] {
        let x = xs.iter().find(|x| x.request.url == url).unwrap();
        assert_eq!(body(&store, x), b"PNGDATA", "{url}");
        assert!(x.response.headers.iter().any(|h| h.name == "X-Again"), "{url}: the revisit's own headers");
        assert!(x.response.headers.iter().any(|h| h.value == "image/png"), "{url}: the original's type");
    }
    let lost = xs.iter().find(|x| x.request.url == "http://elsewhere.example/x").unwrap();
    assert!(lost.flags.body_not_captured && lost.response.body.is_none());
}

/// An archive may hold a revisit before its original (concatenated crawls, re-sorted files): the revisit
/// waits and takes the body once the original has been read, keeping its place in the sequence.
#[test]
fn revisits_before_their_original_are_resolved_forward() {
    let store = Store::in_memory();
    let revisit = |id: &str, uri: &str, status: &str, extra: &[(&str, &str)]| {
        let mut f = vec![
            ("WARC-Type", "revisit"),
            ("WARC-Record-ID", id),
            ("WARC-Date", "2024-05-06T07:09:00Z"),
            ("WARC-Target-URI", uri),
            ("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/server-not-modified"),
        ];
        f.extend_from_slice(extra);
        record("1.1", &f, format!("HTTP/1.1 {status}\r\nX-Again: yes\r\n\r\n").as_bytes())
    };
    let mut warc = Vec::new();
    // Forward by digest (a 304 that stands for the full answer), forward by refers-to URI, and one whose
    // original never comes.
    warc.extend(revisit(
        "<urn:uuid:f1>",
        "http://cdn.example/app.js",
        "304 Not Modified",
        &[("WARC-Payload-Digest", "sha1:BBBB")],
    ));
    warc.extend(revisit(
        "<urn:uuid:f2>",
        "http://site.example/app.js?v=2",
        "200 OK",
        &[("WARC-Refers-To-Target-URI", "http://site.example/app.js")],
    ));
    warc.extend(revisit(
        "<urn:uuid:f3>",
        "http://gone.example/x",
        "200 OK",
        &[("WARC-Payload-Digest", "sha1:ZZZZ")],
    ));
    let mut orig = response(
        "<urn:uuid:o>",
        "http://site.example/app.js",
        &http_response(&[("Content-Type", "text/javascript")], b"console.log(1)"),
    );
    let at = orig.windows(12).position(|w| w == b"Content-Type").unwrap();
    orig.splice(at..at, b"WARC-Payload-Digest: sha1:BBBB\r\n".iter().copied());
    warc.extend(orig);
    let r = import(&store, "fwd", &warc);
    assert_eq!(
        (
            r.revisits_resolved,
            r.revisits_resolved_forward,
            r.revisits_unresolved,
            r.body_not_captured,
            r.imported
        ),
        (2, 2, 1, 1, 4),
        "{r:?}"
    );
    let xs = exchanges(&store, "fwd");
    // Archive order is kept: the revisits hold the sequence numbers they were read at.
    let order: Vec<&str> = xs.iter().map(|x| x.request.url.as_str()).collect();
    assert_eq!(
        order,
        [
            "http://cdn.example/app.js",
            "http://site.example/app.js?v=2",
            "http://gone.example/x",
            "http://site.example/app.js"
        ]
    );
    for (url, status) in [("http://cdn.example/app.js", 200), ("http://site.example/app.js?v=2", 200)] {
        let x = xs.iter().find(|x| x.request.url == url).unwrap();
        assert_eq!(body(&store, x), b"console.log(1)", "{url}");
        assert_eq!(x.response.status, status, "{url}");
        assert!(!x.flags.body_not_captured, "{url}");
        assert!(
            x.response.headers.iter().any(|h| h.value == "text/javascript"),
            "{url}: the original's type"
        );
    }
    let lost = xs.iter().find(|x| x.request.url == "http://gone.example/x").unwrap();
    assert!(lost.flags.body_not_captured && lost.response.body.is_none());
}

#[test]
fn damage_is_reported_with_its_offset_and_the_rest_imported() {
    let good = |n: u32| {
        response(&format!("<urn:uuid:{n}>"), &format!("http://site.example/{n}"), &http_response(&[], b"ok"))
    };
    // Plain: a record whose head is garbage, between two good ones.
    let mut plain = good(1);
    let bad_at = plain.len() as u64;
    plain.extend_from_slice(
        b"WARC/1.1\r\nWARC-Type: response\r\nContent-Length: twelve\r\n\r\nxxxxxxxxxxxx\r\n\r\n",
    );
    plain.extend(good(2));
    // Plain: the last record cut short.
    let mut cut = good(3);
    let cut_at = cut.len() as u64;
    let last = good(4);
    cut.extend_from_slice(&last[..last.len() - 6]);
    // Gzip: per-record members, the middle member's deflate bytes damaged.
    let m1 = gzip(&good(5));
    let mut m2 = gzip(&good(6));
    let mid = m2.len() / 2;
    for b in &mut m2[12..mid] {
        *b ^= 0x5a;
    }
    let m3 = gzip(&good(7));
    let gz_bad_at = m1.len() as u64;
    let gz: Vec<u8> = [m1, m2, m3].concat();
    // Gzip: a member whose header is already bad (unknown flags, then garbage), between two good ones.
    let g1 = gzip(&good(8));
    let bad_header_at = g1.len() as u64;
    let gz2: Vec<u8> =
        [g1, vec![0x1f, 0x8b, 0x08, 0xff, 0, 0, 0, 0, 0, 0xff, 1, 2, 3], gzip(&good(9))].concat();
    // (case, bytes, imported, damaged offset)
    let cases: Vec<(&str, Vec<u8>, u64, u64)> = vec![
        ("bad head", plain, 2, bad_at),
        ("cut short", cut, 2, cut_at),
        ("broken gzip member", gz, 2, gz_bad_at),
        ("bad gzip header", gz2, 2, bad_header_at),
    ];
    for (case, bytes, imported, at) in cases {
        let store = Store::in_memory();
        let r = import(&store, "d", &bytes);
        assert_eq!(r.imported, imported, "{case}: {r:?}");
        assert_eq!(r.damaged.len(), 1, "{case}: {:?}", r.damaged);
        assert_eq!(r.damaged[0].offset, at, "{case}: {:?}", r.damaged);
        if case == "cut short" {
            let xs = exchanges(&store, "d");
            assert!(
                xs.iter().any(|x| x.flags.truncated),
                "{case}: the cut record is kept, flagged truncated"
            );
        }
    }
}

#[test]
fn versions_members_and_unused_types() {
    let mut plain = record(
        "1.0",
        &[("WARC-Type", "warcinfo"), ("Content-Type", "application/warc-fields")],
        b"software: test\r\n",
    );
    plain.extend(record(
        "0.17",
        &[
            ("WARC-Type", "response"),
            ("WARC-Record-ID", "<urn:uuid:old>"),
            ("WARC-Date", "20080102030405"),
            ("WARC-Target-URI", "<http://old.example/>"),
        ],
        &http_response(&[], b"old"),
    ));
    plain.extend(record(
        "1.1",
        &[("WARC-Type", "metadata"), ("WARC-Target-URI", "http://old.example/")],
        b"x: y\r\n",
    ));
    plain.extend(record(
        "1.1",
        &[("WARC-Type", "response"), ("WARC-Target-URI", "dns:old.example")],
        b"1.2.3.4",
    ));
    // The same records as one gzip member for the whole file, and as a member per record.
    let one_member = gzip(&plain);
    for (case, bytes) in [("plain", plain.clone()), ("one gzip member", one_member)] {
        let store = Store::in_memory();
        let r = import(&store, "v", &bytes);
        assert_eq!(r.records, 4, "{case}");
        assert_eq!(r.imported, 1, "{case}");
        assert_eq!(r.skipped_not_http, 1, "{case}");
        assert_eq!(r.record_types.get("warcinfo"), Some(&1), "{case}");
        assert_eq!(r.record_types.get("metadata"), Some(&1), "{case}");
        let xs = exchanges(&store, "v");
        assert_eq!(xs[0].request.url, "http://old.example/", "{case}: angle brackets dropped");
        assert_eq!(xs[0].started_ms, 1_199_243_045_000, "{case}: 14-digit date");
    }
}

/// A store with a small site: a page, a stylesheet, the same image at two URLs, a POST, and an exchange
/// whose body was never captured.
fn site_store() -> Store {
    let store = Store::in_memory();
    let warc = [
        response(
            "<urn:uuid:p>",
            "https://shop.example/index.html?b=2&a=1",
            &http_response(
                &[("Content-Type", "text/html; charset=utf-8"), ("Content-Encoding", "gzip")],
                &gzip(PAGE),
            ),
        ),
        request(
            "<urn:uuid:pq>",
            "<urn:uuid:p>",
            "https://shop.example/index.html?b=2&a=1",
            b"GET /index.html?b=2&a=1 HTTP/1.1\r\nHost: shop.example\r\nSec-Fetch-Dest: document\r\n\r\n",
        ),
        response(
            "<urn:uuid:c>",
            "https://shop.example/style.css",
            &http_response(&[("Content-Type", "text/css")], b"body{color:red}"),
        ),
        response(
            "<urn:uuid:i1>",
            "https://shop.example/a.png",
            &http_response(&[("Content-Type", "image/png")], &[0u8, 1, 2, 3, 255]),
        ),
        response(
            "<urn:uuid:i2>",
            "https://cdn.example/a.png",
            &http_response(&[("Content-Type", "image/png")], &[0u8, 1, 2, 3, 255]),
        ),
        response(
            "<urn:uuid:f>",
            "https://shop.example/cart",
            &http_response(&[("Content-Type", "application/json")], b"{\"items\":1}"),
        ),
        request(
            "<urn:uuid:fq>",
            "<urn:uuid:f>",
            "https://shop.example/cart",
            b"POST /cart HTTP/1.1\r\nHost: shop.example\r\nContent-Type: application/json\r\n\r\n{\"add\":7}",
        ),
        record(
            "1.1",
            &[
                ("WARC-Type", "revisit"),
                ("WARC-Record-ID", "<urn:uuid:lost>"),
                ("WARC-Date", "2024-05-06T07:08:09Z"),
                ("WARC-Target-URI", "https://gone.example/"),
            ],
            b"HTTP/1.1 200 OK\r\n\r\n",
        ),
    ]
    .concat();
    let r = import(&store, "site", &warc);
    assert_eq!(r.imported, 6);
    store
}

type Summary = Vec<(String, String, u16, Option<Vec<u8>>, Option<Vec<u8>>)>;

/// (method, url, status, request body, response body) of every exchange with a body, sorted.
fn summary(store: &Store, name: &str) -> Summary {
    let mut s: Summary = exchanges(store, name)
        .into_iter()
        .filter(|x| x.response.body.is_some())
        .map(|x| {
            (
                x.request.method.clone(),
                x.request.url.clone(),
                x.response.status,
                x.request.body.as_ref().map(|b| store.blob_bytes(&b.hash).unwrap()),
                Some(body(store, &x)),
            )
        })
        .collect();
    s.sort();
    s
}

#[test]
fn warc_export_then_import_gives_the_same_exchanges() {
    let store = site_store();
    for gz in [false, true] {
        let mut out = Vec::new();
        let r = export_warc(&store, "site", &mut out, gz, "out.warc").unwrap();
        assert_eq!(
            (r.exchanges, r.responses, r.revisits, r.requests, r.not_captured),
            (6, 4, 1, 5, 1),
            "gzip={gz}"
        );
        if gz {
            assert_eq!(&out[..2], &[0x1f, 0x8b]);
        } else {
            let text = String::from_utf8_lossy(&out);
            assert!(text.starts_with("WARC/1.1\r\nWARC-Type: warcinfo"));
            assert!(text.contains("WARC-Payload-Digest: sha1:"));
            assert!(text
                .contains("WARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"));
            // Decoded body, so no Content-Encoding left in the head.
            assert!(!text.contains("Content-Encoding: gzip"));
        }
        // Deterministic: the same bytes again.
        let mut again = Vec::new();
        export_warc(&store, "site", &mut again, gz, "out.warc").unwrap();
        assert!(again == out, "gzip={gz}: export is deterministic");
        let back = Store::in_memory();
        let ri = import(&back, "back", &out);
        assert_eq!((ri.imported, ri.paired, ri.revisits_resolved), (5, 5, 1), "gzip={gz}: {ri:?}");
        assert!(ri.damaged.is_empty());
        assert_eq!(summary(&back, "back"), summary(&store, "site"), "gzip={gz}");
    }
}

#[test]
fn wacz_export_has_index_pages_and_hashes_and_imports_back() {
    let store = site_store();
    let mut out = Cursor::new(Vec::new());
    let r = export_wacz(&store, "site", &mut out, "site.wacz").unwrap();
    assert_eq!(r.pages, 1);
    let bytes = out.into_inner();
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes.clone())).unwrap();
    let read = |zip: &mut zip::ZipArchive<Cursor<Vec<u8>>>, name: &str| {
        let mut v = Vec::new();
        zip.by_name(name).unwrap().read_to_end(&mut v).unwrap();
        v
    };
    let package: serde_json::Value = serde_json::from_slice(&read(&mut zip, "datapackage.json")).unwrap();
    let resources = package["resources"].as_array().unwrap();
    assert_eq!(resources.len(), 3);
    for res in resources {
        let data = read(&mut zip, res["path"].as_str().unwrap());
        let hex: String =
            <sha2::Sha256 as sha2::Digest>::digest(&data).iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(res["hash"], format!("sha256:{hex}"), "{}", res["path"]);
        assert_eq!(res["bytes"], data.len() as u64);
    }
    let digest: serde_json::Value =
        serde_json::from_slice(&read(&mut zip, "datapackage-digest.json")).unwrap();
    let pkg = read(&mut zip, "datapackage.json");
    let hex: String =
        <sha2::Sha256 as sha2::Digest>::digest(&pkg).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(digest["hash"], format!("sha256:{hex}"));
    assert_eq!(package["mainPageUrl"], "https://shop.example/index.html?b=2&a=1");

    let cdxj = String::from_utf8(read(&mut zip, "indexes/index.cdx")).unwrap();
    let lines: Vec<&str> = cdxj.lines().collect();
    assert_eq!(lines.len(), 5, "{cdxj}");
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted, "CDXJ is sorted");
    assert!(cdxj.contains("example,shop)/index.html?a=1&b=2 20240506070809 "), "{cdxj}");
    // Every index line points at a gzip member holding its record.
    let warc = read(&mut zip, "archive/data.warc.gz");
    for l in &lines {
        let json: serde_json::Value = serde_json::from_str(l.splitn(3, ' ').nth(2).unwrap()).unwrap();
        let off: usize = json["offset"].as_str().unwrap().parse().unwrap();
        let len: usize = json["length"].as_str().unwrap().parse().unwrap();
        let mut rec = Vec::new();
        flate2::read::GzDecoder::new(&warc[off..off + len]).read_to_end(&mut rec).unwrap();
        let rec = String::from_utf8_lossy(&rec);
        assert!(rec.contains(&format!("WARC-Target-URI: {}", json["url"].as_str().unwrap())), "{l}");
    }
    let pages = String::from_utf8(read(&mut zip, "pages/pages.jsonl")).unwrap();
    assert!(pages.lines().next().unwrap().contains("json-pages-1.0"));
    assert_eq!(pages.lines().count(), 2);

    let back = Store::in_memory();
    let ri = import_wacz(&back, Cursor::new(bytes), &opts("w"), |_| {}).unwrap();
    assert_eq!(ri.warc_files, 1);
    assert_eq!(summary(&back, "w"), summary(&store, "site"));
}

#[test]
fn not_an_archive_is_refused_and_leaves_no_snapshot() {
    let store = Store::in_memory();
    let e =
        import_wacz(&store, Cursor::new(b"PK\x03\x04 not really".to_vec()), &opts("z"), |_| {}).unwrap_err();
    assert!(e.to_string().contains("z.warc"), "{e}");
    assert!(store.manifest("z").is_err(), "nothing half-imported stays visible");
}
