//! Issue 35.4: snapshots made today replay the same with every later version. `tests/fixtures/golden/v1/`
//! holds a store and a bundle made by version 1 (`cargo xtask golden`), checked in, and what each of its
//! requests must get. Every later version's suite replays them: exact hits stay exact, the same bytes are
//! served. A change to key derivation without a version bump fails the key table; with a bump, the old
//! fixtures must still replay after `snapshots migrate` (and are refused before it).

use std::path::{Path, PathBuf};

use http::Request;

use crate::support::*;

fn golden_dirs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden");
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no golden fixtures under {}", root.display());
    dirs
}

fn expect(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("expect.json")).unwrap()).unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
    }
}

/// The key derivation of this build, on the requests of the fixtures made with the same key version, gives
/// the keys they were stored under: a change to URL or body normalisation without a bump of
/// `snapshots::version::KEY_VERSION` fails here.
#[test]
fn key_derivation_matches_the_golden_keys_of_its_version() {
    let current = snapshots::version::KEY_VERSION;
    let mine: Vec<PathBuf> =
        golden_dirs().into_iter().filter(|d| expect(d)["versions"]["key"] == current).collect();
    assert!(
        !mine.is_empty(),
        "KEY_VERSION is {current} but no golden fixture was made with it: run `cargo xtask golden`"
    );
    for dir in mine {
        for r in expect(&dir)["requests"].as_array().unwrap() {
            let key = snapshots::request_key(
                r["method"].as_str().unwrap(),
                r["url"].as_str().unwrap(),
                r["content_type"].as_str(),
                r["body"].as_str().unwrap().as_bytes(),
            )
            .unwrap();
            assert_eq!(
                key.hex(),
                r["key"].as_str().unwrap(),
                "{}: the key of {r} changed without a KEY_VERSION bump",
                dir.display()
            );
        }
    }
}

/// Replay `home`'s snapshot through `webfreeze replay` and check every request of `dir`'s table gets its
/// recorded status and body, as an exact hit.
async fn replays_exactly(home: &Path, dir: &Path, snapshot: &str) {
    let table = expect(dir);
    // The shim is added at serving time; the bytes compared are the recorded ones.
    let wf = Webfreeze::spawn(home, &["replay", "--snapshot", snapshot, "--no-inject-shim"]);
    let nowhere: std::net::SocketAddr = "127.0.0.1:9".parse().unwrap();
    let requests = table["requests"].as_array().unwrap();
    for r in requests {
        let url = r["url"].as_str().unwrap();
        let url = url.split('#').next().unwrap();
        let mut b = Request::builder().method(r["method"].as_str().unwrap()).uri("/");
        if let Some(ct) = r["content_type"].as_str() {
            b = b.header("content-type", ct);
        }
        let body = bytes::Bytes::from(r["body"].as_str().unwrap().to_string());
        let g = fetch(
            Via::Proxy(wf.addr),
            url,
            nowhere,
            &[],
            false,
            b.body(http_body_util::Full::new(body)).unwrap(),
        )
        .await;
        assert_eq!(g.status, r["status"].as_u64().unwrap() as u16, "{}: {url}: {}", dir.display(), g.text());
        assert_eq!(
            blake3::hash(&g.body).to_hex().to_string(),
            r["response_blake3"].as_str().unwrap(),
            "{}: {url}: {}",
            dir.display(),
            g.text()
        );
    }
    let report = cli_report(wf.addr).await;
    assert_eq!(report["exact"], requests.len(), "{}: every request an exact hit: {report}", dir.display());
}

async fn cli_report(proxy: std::net::SocketAddr) -> serde_json::Value {
    let req = Request::builder().uri("/").body(http_body_util::Full::new(bytes::Bytes::new())).unwrap();
    let g = fetch(Via::Direct, &format!("http://{proxy}/__webfreeze/report"), proxy, &[], false, req).await;
    serde_json::from_slice(&g.body).unwrap_or_else(|e| panic!("report: {e}: {}", g.text()))
}

/// Every golden store, copied as it was checked in, replays exactly; one made with another key version is
/// refused until `snapshots migrate` and replays exactly after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn golden_stores_replay_exactly() {
    for dir in golden_dirs() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        copy_dir(&dir.join("store"), &h.join("store"));
        let snapshot = expect(&dir)["snapshot"].as_str().unwrap().to_string();
        let out = run_cli(h, &["snapshots", "verify"]);
        assert!(out.status.success(), "{}: {}", dir.display(), String::from_utf8_lossy(&out.stdout));
        if expect(&dir)["versions"]["key"] != snapshots::version::KEY_VERSION {
            let refused = run_cli(h, &["replay", "--snapshot", &snapshot, "--listen", "127.0.0.1:0"]);
            assert!(String::from_utf8_lossy(&refused.stderr).contains("snapshots migrate"), "{refused:?}");
            let out = run_cli(h, &["snapshots", "migrate", "--all"]);
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        }
        replays_exactly(h, &dir, &snapshot).await;
        // Its stored search index still answers.
        let wf = Webfreeze::spawn(h, &["replay", "--snapshot", &snapshot, "--search", "fallback"]);
        let req = Request::builder().uri("/").body(http_body_util::Full::new(bytes::Bytes::new())).unwrap();
        let nowhere: std::net::SocketAddr = "127.0.0.1:9".parse().unwrap();
        let g = fetch(Via::Proxy(wf.addr), "http://www.google.com/search?q=golden", nowhere, &[], false, req)
            .await;
        assert!(g.status == 200 && g.text().contains("http://golden.test/"), "{}", g.text());
    }
}

/// Every golden bundle imports into a fresh store and replays exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn golden_bundles_import_and_replay_exactly() {
    for dir in golden_dirs() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        let bundle = dir.join("golden.wfb");
        let out = run_cli(h, &["bundle", "import", bundle.to_str().unwrap()]);
        assert!(out.status.success(), "{}: {}", dir.display(), String::from_utf8_lossy(&out.stderr));
        let snapshot = expect(&dir)["snapshot"].as_str().unwrap().to_string();
        replays_exactly(h, &dir, &snapshot).await;
    }
}
