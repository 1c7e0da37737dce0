//! A seeded generator of realistic HAR files: HTML, JS, CSS, JSON and images over 50 hosts, text built from a
//! vocabulary (compressible like real pages), images random (incompressible), 30% of bodies duplicated.

use std::io::Write;
use std::path::Path;

use base64::Engine as _;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

pub(crate) struct GenInfo {
    pub urls: Vec<String>,
    pub bytes: u64,
}

fn text(rng: &mut SmallRng, vocab: &[String], len: usize, sep: &str) -> String {
    let mut s = String::with_capacity(len + 16);
    while s.len() < len {
        s.push_str(&vocab[rng.gen_range(0..vocab.len())]);
        s.push_str(sep);
    }
    s
}

/// The URL of entry `i` (the generator's pattern), so a reader can rebuild keys without the file.
pub(crate) fn url_for(i: usize) -> String {
    let ext = match i % 10 {
        0..=2 => "html",
        3 | 4 => "js",
        5 => "css",
        6 | 7 => "json",
        _ => "png",
    };
    format!("https://site{}.test/{ext}/{i}?v={}", i % 50, i % 7)
}

pub(crate) fn write_har(path: &Path, n: usize, seed: u64) -> std::io::Result<GenInfo> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let vocab: Vec<String> = (0..3000)
        .map(|_| (0..rng.gen_range(3..11)).map(|_| (b'a' + rng.gen_range(0..26)) as char).collect())
        .collect();
    let f = std::fs::File::create(path)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    w.write_all(
        br#"{"log":{"version":"1.2","creator":{"name":"webfreeze-xtask","version":"1"},"entries":["#,
    )?;
    let mut pool: Vec<Vec<(String, String, Option<&str>)>> = vec![Vec::new(); 5];
    let mut urls = Vec::with_capacity(n);
    for i in 0..n {
        let kind = match i % 10 {
            0..=2 => 0,
            3 | 4 => 1,
            5 => 2,
            6 | 7 => 3,
            _ => 4,
        };
        let (mime, ext) = [
            ("text/html", "html"),
            ("application/javascript", "js"),
            ("text/css", "css"),
            ("application/json", "json"),
            ("image/png", "png"),
        ][kind];
        let reuse = rng.gen_bool(0.3) && !pool[kind].is_empty();
        let (body, _mime2, enc) = if reuse {
            let p = &pool[kind];
            p[rng.gen_range(0..p.len())].clone()
        } else {
            let b: (String, String, Option<&str>) = match kind {
                0 => {
                    let n = rng.gen_range(4_000..16_000);
                    (format!("<!doctype html><html><head><title>{}</title></head><body><p>{}</p></body></html>", text(&mut rng, &vocab, 40, " "), text(&mut rng, &vocab, n, " ")), mime.into(), None)
                }
                1 => {
                    let n = rng.gen_range(2_000..20_000);
                    (format!("function f(){{var {};}}", text(&mut rng, &vocab, n, "=1,v")), mime.into(), None)
                }
                2 => {
                    let n = rng.gen_range(1_000..6_000);
                    (format!(".{}{{color:red}}", text(&mut rng, &vocab, n, "{margin:0}.")), mime.into(), None)
                }
                3 => {
                    let n = rng.gen_range(300..3_000);
                    (format!("{{\"items\":[\"{}\"]}}", text(&mut rng, &vocab, n, "\",\"")), mime.into(), None)
                }
                _ => {
                    let n = rng.gen_range(1_000..12_000);
                    let bytes: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
                    (base64::engine::general_purpose::STANDARD.encode(bytes), mime.into(), Some("base64"))
                }
            };
            if pool[kind].len() < 2000 {
                pool[kind].push(b.clone());
            }
            b
        };
        let url = url_for(i);
        debug_assert!(url.contains(ext));
        let mut content = serde_json::json!({"size": body.len(), "mimeType": mime, "text": body});
        if let Some(e) = enc {
            content["encoding"] = serde_json::json!(e);
        }
        let entry = serde_json::json!({
            "startedDateTime": "2025-06-01T12:00:00.000Z",
            "time": 12.5,
            "request": {"method": "GET", "url": url, "httpVersion": "HTTP/2", "headers": [{"name": "accept", "value": "*/*"}, {"name": "user-agent", "value": "Mozilla/5.0 bench"}], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
            "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/2", "headers": [{"name": "content-type", "value": mime}, {"name": "cache-control", "value": "max-age=3600"}, {"name": "date", "value": "Sun, 01 Jun 2025 12:00:00 GMT"}], "cookies": [], "content": content, "redirectURL": "", "headersSize": -1, "bodySize": -1},
            "cache": {},
            "timings": {"send": 0.1, "wait": 10.0, "receive": 2.4}
        });
        if i > 0 {
            w.write_all(b",")?;
        }
        serde_json::to_writer(&mut w, &entry)?;
        urls.push(url);
    }
    w.write_all(b"]}}")?;
    w.flush()?;
    let bytes = std::fs::metadata(path)?.len();
    Ok(GenInfo { urls, bytes })
}

/// A HAR holding one GET of `url` recorded `n` times (a 1 KB JSON body each, its copy number in it).
pub(crate) fn write_copies_har(path: &Path, url: &str, n: usize) -> std::io::Result<()> {
    let f = std::fs::File::create(path)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    w.write_all(
        br#"{"log":{"version":"1.2","creator":{"name":"webfreeze-xtask","version":"1"},"entries":["#,
    )?;
    let pad = "x".repeat(1000);
    for i in 0..n {
        let body = format!("{{\"copy\":{i},\"pad\":\"{pad}\"}}");
        let entry = serde_json::json!({
            "startedDateTime": "2025-06-01T12:00:00.000Z",
            "time": 1.0,
            "request": {"method": "GET", "url": url, "httpVersion": "HTTP/1.1", "headers": [{"name": "accept", "value": "*/*"}], "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
            "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": [{"name": "content-type", "value": "application/json"}], "cookies": [], "content": {"size": body.len(), "mimeType": "application/json", "text": body}, "redirectURL": "", "headersSize": -1, "bodySize": -1},
            "cache": {},
            "timings": {"send": 0.1, "wait": 0.5, "receive": 0.4}
        });
        if i > 0 {
            w.write_all(b",")?;
        }
        serde_json::to_writer(&mut w, &entry)?;
    }
    w.write_all(b"]}}")?;
    w.flush()
}

/// A recorded `GET url` answered 200 with `html` (stored in `store`), as the store benches write a site's
/// pages straight into a snapshot.
pub(crate) fn html_exchange(
    store: &snapshots::Store,
    seq: u64,
    url: String,
    html: &[u8],
) -> anyhow::Result<snapshots::Exchange> {
    Ok(snapshots::fixtures::exchange(store, seq, "GET", &url, "text/html; charset=utf-8", html)?)
}
