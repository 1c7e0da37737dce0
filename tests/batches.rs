//! Issue 61, scripts that batch their modules: a page that loads its script modules in one
//! ResourceLoader-style batch asks, in replay, for a combination of modules the recording never asked for
//! (MediaWiki's module store decides which modules a page still needs, and its writes race the next
//! navigation). Replay assembles that batch from the recorded batches that hold its modules
//! (`replay::batches`), in real Chromium: page A's batch (test.a, test.b) and page C's (test.c) are
//! recorded; page B, never recorded, asks for test.a and test.c in one batch, and its modules run.

use crate::proxy_chromium::{launch, spki_of};
use crate::replay_chromium::{close, shim_for, visit};
use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_61_an_unrecorded_module_batch_is_assembled_from_recorded_batches() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let origin = Origin::start(Some(origin_tls(&["wiki.test"], &[b"h2", b"http/1.1"]))).await;
    let ca_file = h.join("origin-ca.pem");
    std::fs::write(&ca_file, origin.ca_pem.as_ref().unwrap()).unwrap();
    let resolve = format!("wiki.test:443:{}", origin.addr);

    // Record pages A and C.
    let mut rec = Webfreeze::spawn(
        h,
        &["record", "--snapshot", "rl", "--upstream-ca", ca_file.to_str().unwrap(), "--resolve", &resolve],
    );
    let spki = spki_of(h);
    let shim = shim_for(h, "rl");
    let profile = tempfile::tempdir().unwrap();
    let (browser, task) = launch(rec.addr, Some(&spki), profile.path()).await;
    let a = visit(&browser, &shim, "https://wiki.test/rl/a").await;
    let c = visit(&browser, &shim, "https://wiki.test/rl/c").await;
    close(browser, task).await;
    assert!(rec.signal_and_wait("INT").success(), "{}", rec.stderr());
    assert_eq!(mods(&a.text), ["test.a", "test.b"], "page A live: {}", a.text);
    assert_eq!(mods(&c.text), ["test.c"], "page C live: {}", c.text);
    drop(origin); // the live site is gone

    // Replay page B, whose batch nobody recorded.
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
    assert!(entry["url"].as_str().unwrap().ends_with(&batch_url("test.a,c")), "{r}");
    assert_eq!(entry["from"].as_array().unwrap().len(), 2, "cut from A's batch and C's: {r}");
}

/// The module names a page shows, in order.
fn mods(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).filter(|l| l.starts_with("test.")).collect()
}
