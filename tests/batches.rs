//! Issue 61, scripts that batch their modules: a page that loads its script modules in one
//! ResourceLoader-style batch asks, in replay, for a combination of modules the recording never asked for
//! (MediaWiki's module store decides which modules a page still needs, and its writes race the next
//! navigation). Replay assembles that batch from the recorded batches that hold its modules
//! (`replay::batches`).
//!
//! In real Chromium, on pages with a module store as MediaWiki's (tests/support/batch_origin.rs): the
//! recording opens page A (its batch: test.a, test.b; both stored) then page B, which runs test.a from the
//! store and asks only for test.c. The replay opens page B alone in a fresh profile: it asks for test.a and
//! test.c in one batch nobody recorded, and both modules run.
//!
//! And on a real MediaWiki (Debian's 1.39, `demo::mediawiki`): the recording opens one page, waits until
//! MediaWiki's module store has written its modules to `localStorage`, then opens an editor, which asks
//! only for what the store lacks (the editor's own modules); the replay, in a fresh profile, opens the
//! editor alone, which asks for every module it needs in batches nobody recorded: its scripts run (every
//! module the page asked for is `ready`), answered from the first page's batches and the editor's.
//!
//! And the scanner that cuts batches, on MediaWiki's own modules minified by its own minifier.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::page::AddScriptToEvaluateOnNewDocumentParams;

use crate::proxy_chromium::{launch, spki_of};
use crate::replay_chromium::{close, shim_for, start_recording, visit, Recording};
use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_61_an_unrecorded_module_batch_is_assembled_from_recorded_batches() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    // Record page A, then page B (which finds test.a in the store).
    let Recording { origin, mut rec, spki, shim, browser, task, .. } =
        start_recording(h, "wiki.test", "rl").await;
    let a = visit(&browser, &shim, "https://wiki.test/rl/a").await;
    let b_live = visit(&browser, &shim, "https://wiki.test/rl/b").await;
    close(browser, task).await;
    assert!(rec.signal_and_wait("INT").success(), "{}", rec.stderr());
    assert_eq!(mods(&a.text), ["test.a", "test.b"], "page A live: {}", a.text);
    assert_eq!(mods(&b_live.text), ["test.a", "test.c"], "page B live: {}", b_live.text);
    // What page B asked for while recording: test.c alone (its test.a came from the store).
    assert_eq!(
        origin.stats.requests.load(std::sync::atomic::Ordering::SeqCst),
        4,
        "A, its batch, B, its batch"
    );
    drop(origin); // the live site is gone

    // Replay page B alone, in a fresh profile: its batch (test.a and test.c) nobody recorded.
    let report = h.join("report.json");
    let mut rep = Webfreeze::spawn(h, &["replay", "--snapshot", "rl", "--report", report.to_str().unwrap()]);
    let profile = tempfile::tempdir().unwrap();
    let (browser, task) = launch(rep.addr, Some(&spki), profile.path()).await;
    let b = visit(&browser, &shim, "https://wiki.test/rl/b").await;
    close(browser, task).await;
    assert!(rep.signal_and_wait("INT").success(), "{}", rep.stderr());
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(mods(&b.text), ["test.a", "test.c"], "page B's modules ran in replay: {}\n{r}", b.text);
    assert_eq!(r["missed"], 0, "{r}");
    assert_eq!(r["assembled_batches"], 1, "{r}");
    let entry = &r["assembled"][0];
    assert!(entry["url"].as_str().unwrap().ends_with(&batch_url(&["test.a", "test.c"])), "{r}");
    assert_eq!(entry["from"].as_array().unwrap().len(), 2, "cut from A's batch and B's: {r}");
}

/// The module names a page shows, in order.
fn mods(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).filter(|l| l.starts_with("test.")).collect()
}

const WIKI_PAGES: &[(&str, &str)] = &[
    ("Kettles", "The Blue Kettle costs 24.00 and boils a litre. See [[Teapots]]."),
    ("Teapots", "The Green Teapot is on promotion this week."),
];

/// Every module the page asked for (`RLPAGEMODULES`) in `state`; also true when none are left loading
/// and `state` is "settled".
const MODULES_IN: &str = "(state) => typeof mw === 'object' && mw.loader && window.RLPAGEMODULES && \
    RLPAGEMODULES.every(m => state === 'settled' ? ['ready', 'error', 'missing'].includes(mw.loader.getState(m)) \
    : mw.loader.getState(m) === state)";

/// Wait (bounded) until `cond` (a JavaScript expression) holds on `page`.
async fn until(page: &chromiumoxide::Page, cond: &str, what: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let ok: bool = page.evaluate(cond).await.ok().and_then(|v| v.into_value().ok()).unwrap_or(false);
        if ok {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "{what}: never; page: {:?}", page.url().await);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Open `url` in a new page of `browser` (the shim installed first) and wait until its modules settle.
async fn open_wiki(browser: &chromiumoxide::Browser, shim: &str, url: &str) -> chromiumoxide::Page {
    let page = browser.new_page("about:blank").await.unwrap();
    page.execute(AddScriptToEvaluateOnNewDocumentParams::new(shim.to_string())).await.unwrap();
    page.goto(url).await.unwrap();
    until(&page, &format!("({MODULES_IN})('settled')"), "modules settled").await;
    page
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_61_mediawiki_modules_the_store_held_when_recording_are_assembled_in_replay() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mut wiki = tokio::task::block_in_place(|| demo::mediawiki::MediaWiki::start(h, WIKI_PAGES).unwrap());
    let resolve = format!("{}:443:{}", demo::mediawiki::HOST, wiki.addr);
    let first = format!("https://{}/index.php?title=Kettles", demo::mediawiki::HOST);
    // The editor: the article's modules and its own (an article again would ask for the very batch the
    // first page's recording holds).
    let second = format!("https://{}/index.php?title=Teapots&action=edit", demo::mediawiki::HOST);

    let mut rec = Webfreeze::spawn(
        h,
        &[
            "record",
            "--snapshot",
            "mw",
            "--upstream-ca",
            wiki.ca_file.to_str().unwrap(),
            "--resolve",
            &resolve,
        ],
    );
    let spki = spki_of(h);
    let shim = shim_for(h, "mw");
    let profile = tempfile::tempdir().unwrap();
    let (browser, task) = launch(rec.addr, Some(&spki), profile.path()).await;
    let page = open_wiki(&browser, &shim, &first).await;
    // MediaWiki writes its module store a few seconds after the load, in idle time.
    until(&page, "Object.keys(localStorage).some(k => k.startsWith('MediaWikiModuleStore'))", "module store")
        .await;
    page.close().await.unwrap();
    let page = open_wiki(&browser, &shim, &second).await;
    let live_ready: bool =
        page.evaluate(format!("({MODULES_IN})('ready')")).await.unwrap().into_value().unwrap();
    page.close().await.unwrap();
    close(browser, task).await;
    assert!(rec.signal_and_wait("INT").success(), "{}", rec.stderr());
    assert!(live_ready, "the second page's modules were ready live");
    wiki.stop();

    let report = h.join("report.json");
    let mut rep = Webfreeze::spawn(h, &["replay", "--snapshot", "mw", "--report", report.to_str().unwrap()]);
    let profile = tempfile::tempdir().unwrap();
    let (browser, task) = launch(rep.addr, Some(&spki), profile.path()).await;
    let page = open_wiki(&browser, &shim, &second).await;
    let states: String = page
        .evaluate("JSON.stringify(RLPAGEMODULES.map(m => m + ':' + mw.loader.getState(m)))")
        .await
        .unwrap()
        .into_value()
        .unwrap();
    let ready: bool = page.evaluate(format!("({MODULES_IN})('ready')")).await.unwrap().into_value().unwrap();
    page.close().await.unwrap();
    close(browser, task).await;
    assert!(rep.signal_and_wait("INT").success(), "{}", rep.stderr());
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert!(ready, "every module the page asked for is ready in replay: {states}\n{r}");
    eprintln!("assembled: {}\nmisses: {}", r["assembled"], r["misses"]);
    assert!(r["assembled_batches"].as_u64().unwrap_or(0) >= 1, "{r}");
    let script_misses: Vec<&serde_json::Value> = r["misses"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["url"].as_str().unwrap().contains("load.php"))
        .collect();
    assert!(script_misses.is_empty(), "no module batch missed: {script_misses:?}");
}

/// MediaWiki 1.39's own JavaScript (`resources/src`, `resources/lib`: 567 files), each file wrapped in
/// `mw.loader.implement("mN@abcde", function(...){...})` and minified by MediaWiki's own minifier as
/// `load.php` does, 20 per batch (`scripts/rl-corpus.sh`): every batch cuts into its modules, in order.
#[test]
fn mediawikis_own_modules_minified_by_its_minifier_are_cut_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/rl-corpus.sh");
    let out = std::process::Command::new("bash").arg(&script).arg(dir.path()).arg("1000").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (mut files, mut modules) = (0, 0);
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("js") {
            continue;
        }
        let js = std::fs::read_to_string(&path).unwrap();
        let first: usize =
            path.file_stem().unwrap().to_str().unwrap().trim_start_matches("batch-").parse().unwrap();
        let wrapped = js.matches("mw.loader.implement(\"m").count();
        let got = replay::batches::chunks(&js).unwrap_or_else(|| panic!("{}: not cut", path.display()));
        let names: Vec<String> = got.iter().map(|c| c.name.clone()).collect();
        let want: Vec<String> = (first..first + wrapped).map(|i| format!("m{i}")).collect();
        assert_eq!(names, want, "{}", path.display());
        files += 1;
        modules += got.len();
    }
    assert!(files >= 20 && modules >= 400, "{modules} modules in {files} batches");
}
