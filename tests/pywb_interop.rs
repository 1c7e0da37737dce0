//! Interop with pywb, the replay server web archivists use: a snapshot recorded from the demo sites goes
//! out as WACZ and as WARC, pywb takes both (the WACZ through `wb-manager add --unpack-wacz`, which uses
//! our CDXJ index as it is; the WARC through its own indexer), its own indexer agrees with our index,
//! and Chromium renders the pages from pywb exactly as from webfreeze replay: same text, the stylesheet
//! applied, identical screenshots.

use std::io::Read;
use std::time::Duration;

use chromiumoxide::page::ScreenshotParams;

use crate::proxy_chromium::{launch, launch_via, spki_of};
use crate::support::*;

const PAGES: [&str; 2] = ["https://news.test/", "https://news.test/article/heat-record"];

struct Render {
    text: String,
    margin: String,
    png: Vec<u8>,
}

async fn render(browser: &chromiumoxide::Browser, url: &str) -> Render {
    let page = browser.new_page("about:blank").await.unwrap();
    page.goto(url).await.unwrap();
    page.wait_for_navigation().await.unwrap();
    // The stylesheet sets the body's margin: wait until it applies (bounded).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let margin = loop {
        let m: String =
            page.evaluate("getComputedStyle(document.body).marginTop").await.unwrap().into_value().unwrap();
        if m == "24px" || tokio::time::Instant::now() > deadline {
            break m;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let text: String = page.evaluate("document.body.innerText").await.unwrap().into_value().unwrap();
    let png = page.screenshot(ScreenshotParams::builder().build()).await.unwrap();
    page.close().await.unwrap();
    Render { text, margin, png }
}

async fn close(mut b: chromiumoxide::Browser, task: tokio::task::JoinHandle<()>) {
    b.close().await.unwrap();
    let _ = b.wait().await;
    task.abort();
}

/// (urlkey, timestamp, url, offset, length, digest) of each response line of a CDXJ index.
fn index_lines(cdxj: &str) -> Vec<(String, String, String, String, String, String)> {
    let mut v: Vec<_> = cdxj
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut parts = l.splitn(3, ' ');
            let key = parts.next().unwrap().to_string();
            let ts = parts.next().unwrap().to_string();
            let j: serde_json::Value = serde_json::from_str(parts.next().unwrap()).unwrap();
            let s = |k: &str| j[k].as_str().unwrap_or_default().to_string();
            // pywb writes the digest without its algorithm prefix; we keep WARC-Payload-Digest's form.
            let digest = s("digest").trim_start_matches("sha1:").to_string();
            (key, ts, s("url"), s("offset"), s("length"), digest)
        })
        .collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pywb_replays_exported_wacz_and_warc_as_webfreeze_does() {
    let pywb = Pywb::find();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();

    // Record a visit to the demo news site.
    let mut sites = DemoSites::start(h).await;
    let mut rec = Webfreeze::spawn_with(h, &["record", "--snapshot", "visit"], &sites.reach);
    let spki = spki_of(h);
    let profile = tempfile::tempdir().unwrap();
    let (browser, task) = launch(rec.addr, Some(&spki), profile.path()).await;
    let mut live = Vec::new();
    for url in PAGES {
        live.push(render(&browser, url).await);
    }
    close(browser, task).await;
    assert!(rec.signal_and_wait("INT").success(), "{}", rec.stderr());
    sites.stop();
    assert_eq!(live[0].margin, "24px", "the live page has its stylesheet");

    // Export both ways.
    let wacz = h.join("visit.wacz");
    let warc = h.join("visit.warc.gz");
    for (format, out) in [("wacz", &wacz), ("warc", &warc)] {
        let o =
            run_cli(h, &["snapshots", "export", "visit", "--format", format, "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{format}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains("responses"),
            "{}",
            String::from_utf8_lossy(&o.stdout)
        );
    }

    // pywb's indexer reads our WARC (the one inside the WACZ) and agrees with our CDXJ line for line.
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&wacz).unwrap()).unwrap();
    let mut ours = String::new();
    zip.by_name("indexes/index.cdx").unwrap().read_to_string(&mut ours).unwrap();
    let inner = h.join("data.warc.gz");
    std::io::copy(
        &mut zip.by_name("archive/data.warc.gz").unwrap(),
        &mut std::fs::File::create(&inner).unwrap(),
    )
    .unwrap();
    let theirs: String = pywb
        .index(&inner)
        .lines()
        .filter(|l| {
            !l.starts_with("!meta") && !l.contains("\"mime\": \"-\"") && !l.contains("\"mime\":\"-\"")
        })
        .map(|l| format!("{l}\n"))
        .collect();
    let (ours_l, theirs_l) = (index_lines(&ours), index_lines(&theirs));
    assert!(ours_l.len() >= 4, "{ours}");
    assert_eq!(ours_l, theirs_l, "our CDXJ:\n{ours}\npywb's:\n{theirs}");

    // Two pywb collections: the WACZ (our index) and the WARC (pywb's index).
    let root = h.join("pywb");
    std::fs::create_dir_all(&root).unwrap();
    pywb.manager(&root, &["init", "wacz"]);
    pywb.manager(&root, &["add", "--unpack-wacz", "wacz", wacz.to_str().unwrap()]);
    pywb.manager(&root, &["init", "warc"]);
    pywb.manager(&root, &["add", "warc", warc.to_str().unwrap()]);
    // Frameless replay: the page itself at the top level, as a browser-driving harness would load it
    // (framed replay puts pywb's banner around an iframe).
    std::fs::write(root.join("config.yaml"), "framed_replay: false\n").unwrap();
    let wb = pywb.serve(&root);

    // webfreeze replay, then pywb, in the same Chromium build and viewport.
    let mut rep = Webfreeze::spawn(h, &["replay", "--snapshot", "visit"]);
    let profile = tempfile::tempdir().unwrap();
    let (browser, task) = launch(rep.addr, Some(&spki), profile.path()).await;
    let mut frozen = Vec::new();
    for url in PAGES {
        frozen.push(render(&browser, url).await);
    }
    close(browser, task).await;
    assert!(rep.signal_and_wait("INT").success(), "{}", rep.stderr());

    let profile = tempfile::tempdir().unwrap();
    // No proxy: pywb is a plain web server on loopback.
    let (browser, task) = launch_via(None, None, profile.path()).await;
    for coll in ["wacz", "warc"] {
        for ((url, l), f) in PAGES.iter().zip(&live).zip(&frozen) {
            // The capture's own timestamp (another one redirects to it).
            let ts = &ours_l.iter().find(|l| l.2 == *url).unwrap_or_else(|| panic!("{url} not in {ours}")).1;
            let p = render(&browser, &format!("{}/{coll}/{ts}/{url}", wb.base)).await;
            assert_eq!(p.text, l.text, "{coll}: {url}: the text recorded live");
            assert_eq!(p.text, f.text, "{coll}: {url}");
            assert_eq!(p.margin, "24px", "{coll}: {url}: the stylesheet came from the archive");
            assert!(p.png == f.png, "{coll}: {url}: pywb's rendering differs from webfreeze replay's");
        }
    }
    close(browser, task).await;
}
