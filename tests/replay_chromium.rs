//! End to end in Chromium (certificate errors respected): record a visit to three pages of a site whose
//! content changes on every request, stop the origin, replay it three times: each page's rendered text
//! equals the recorded visit's, screenshots are identical, and the report shows zero misses. Then, against
//! a changed origin with `--on-miss live`, a new page is served live while recorded ones stay frozen.
//!
//! The determinism shim is installed through CDP before any page script runs, seeded from the snapshot
//! (what the agent will do), in the recording visit and in every replay.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::emulation::SetTimezoneOverrideParams;
use chromiumoxide::cdp::browser_protocol::page::AddScriptToEvaluateOnNewDocumentParams;
use chromiumoxide::page::ScreenshotParams;

use crate::proxy_chromium::{launch, spki_of};
use crate::support::*;

const PAGES: [&str; 3] =
    ["https://shop.test/site/", "https://shop.test/site/redirect", "https://shop.test/site/p3"];

pub(crate) struct Visit {
    pub(crate) text: String,
    pub(crate) png: Vec<u8>,
    pub(crate) url: String,
}

pub(crate) async fn visit(browser: &chromiumoxide::Browser, shim: &str, url: &str) -> Visit {
    let page = browser.new_page("about:blank").await.unwrap();
    page.execute(AddScriptToEvaluateOnNewDocumentParams::new(shim.to_string())).await.unwrap();
    page.execute(SetTimezoneOverrideParams::new("UTC")).await.unwrap();
    page.goto(url).await.unwrap();
    page.wait_for_navigation().await.unwrap();
    // Wait for the page's own completion marker (set after its XHR), with a deadline.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let done: bool =
            page.evaluate("!!document.getElementById('done')").await.unwrap().into_value().unwrap();
        if done {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{url} never finished: {:?}", page.content().await);
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let text: String = page.evaluate("document.body.innerText").await.unwrap().into_value().unwrap();
    let png = page.screenshot(ScreenshotParams::builder().build()).await.unwrap();
    let final_url = page.url().await.unwrap().unwrap_or_default();
    page.close().await.unwrap();
    Visit { text, png, url: final_url }
}

pub(crate) fn shim_for(home: &std::path::Path, snapshot: &str) -> String {
    let out = run_cli(home, &["snapshots", "show", snapshot, "--json", "--limit", "0"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let start = v["manifest"]["seed"]["start_ms"].as_i64().unwrap();
    replay::shim::for_snapshot(snapshot, start, 1)
}

pub(crate) async fn close(mut b: chromiumoxide::Browser, task: tokio::task::JoinHandle<()>) {
    b.close().await.unwrap();
    let _ = b.wait().await;
    task.abort();
}

/// A recording in progress: an HTTPS origin for one host (h2 and HTTP/1.1, a throwaway CA), `webfreeze
/// record` reaching it, and a Chromium that trusts the proxy driving the visit with the shim the
/// recording will be replayed with. Close the browser with [`close`].
pub(crate) struct Recording {
    pub(crate) origin: Origin,
    pub(crate) ca_file: std::path::PathBuf,
    pub(crate) rec: Webfreeze,
    pub(crate) spki: String,
    pub(crate) shim: String,
    pub(crate) browser: chromiumoxide::Browser,
    pub(crate) task: tokio::task::JoinHandle<()>,
    _profile: tempfile::TempDir,
}

/// Start a [`Recording`] of `host` into `snapshot`, under `h`.
pub(crate) async fn start_recording(h: &std::path::Path, host: &str, snapshot: &str) -> Recording {
    let origin = Origin::start(Some(origin_tls(&[host], &[b"h2", b"http/1.1"]))).await;
    let ca_file = h.join("origin-ca.pem");
    std::fs::write(&ca_file, origin.ca_pem.as_ref().unwrap()).unwrap();
    let resolve = format!("{host}:443:{}", origin.addr);
    let rec = Webfreeze::spawn(
        h,
        &[
            "record",
            "--snapshot",
            snapshot,
            "--upstream-ca",
            ca_file.to_str().unwrap(),
            "--resolve",
            &resolve,
        ],
    );
    let spki = spki_of(h);
    let shim = shim_for(h, snapshot);
    let profile = tempfile::tempdir().unwrap();
    let (browser, task) = launch(rec.addr, Some(&spki), profile.path()).await;
    Recording { origin, ca_file, rec, spki, shim, browser, task, _profile: profile }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chromium_replays_a_changing_site_identically() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    // Record the visit.
    let Recording { origin, ca_file, mut rec, spki, shim, browser, task, .. } =
        start_recording(h, "shop.test", "visit").await;
    let mut recorded = Vec::new();
    for url in PAGES {
        recorded.push(visit(&browser, &shim, url).await);
    }
    close(browser, task).await;
    assert!(rec.signal_and_wait("INT").success(), "{}", rec.stderr());
    assert_eq!(recorded[1].url, "https://shop.test/site/p2", "redirect followed");
    assert!(recorded[1].text.contains("cookie visit="), "{}", recorded[1].text);
    assert!(recorded[0].text.contains("xhr: {"), "{}", recorded[0].text);
    // The live site really changes on every request.
    let live_again = fetch(
        Via::Direct,
        "https://shop.test/site/",
        origin.addr,
        &[origin.ca_pem.as_ref().unwrap()],
        false,
        http::Request::builder().uri("/").body(http_body_util::Full::new(bytes::Bytes::new())).unwrap(),
    )
    .await;
    assert!(!recorded[0]
        .text
        .contains(live_again.text().split("served at ").nth(1).unwrap().split(' ').next().unwrap()));
    drop(origin); // the live site is gone

    // Replay three times.
    let mut shots: Vec<Vec<Vec<u8>>> = Vec::new();
    for round in 0..3 {
        let report = h.join(format!("report-{round}.json"));
        let mut rep =
            Webfreeze::spawn(h, &["replay", "--snapshot", "visit", "--report", report.to_str().unwrap()]);
        let profile = tempfile::tempdir().unwrap();
        let (browser, task) = launch(rep.addr, Some(&spki), profile.path()).await;
        let mut round_shots = Vec::new();
        for (url, rec_visit) in PAGES.iter().zip(&recorded) {
            let v = visit(&browser, &shim, url).await;
            assert_eq!(v.text, rec_visit.text, "round {round}: {url}");
            assert_eq!(v.url, rec_visit.url);
            round_shots.push(v.png);
        }
        close(browser, task).await;
        assert!(rep.signal_and_wait("INT").success(), "{}", rep.stderr());
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        assert_eq!(r["missed"], 0, "round {round}: {r}");
        assert!(r["requests"].as_u64().unwrap() >= 12, "{r}");
        shots.push(round_shots);
    }
    assert_eq!(shots[0], shots[1], "screenshots identical across replays");
    assert_eq!(shots[1], shots[2], "screenshots identical across replays");

    // A changed origin, --on-miss live: recorded pages stay frozen, a new page comes live.
    let origin2 = Origin::start(Some(origin_tls(&["shop.test"], &[b"h2", b"http/1.1"]))).await;
    origin2.stats.generation.store(2, std::sync::atomic::Ordering::SeqCst);
    std::fs::write(&ca_file, origin2.ca_pem.as_ref().unwrap()).unwrap();
    let resolve2 = format!("shop.test:443:{}", origin2.addr);
    let mut rep = Webfreeze::spawn(
        h,
        &[
            "replay",
            "--snapshot",
            "visit",
            "--on-miss",
            "live",
            "--upstream-ca",
            ca_file.to_str().unwrap(),
            "--resolve",
            &resolve2,
        ],
    );
    let profile = tempfile::tempdir().unwrap();
    let (browser, task) = launch(rep.addr, Some(&spki), profile.path()).await;
    let frozen = visit(&browser, &shim, PAGES[0]).await;
    assert_eq!(frozen.text, recorded[0].text, "recorded page stays frozen");
    assert_eq!(
        origin2.stats.requests.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "nothing recorded went live"
    );
    let fresh = visit(&browser, &shim, "https://shop.test/site/p4").await;
    assert!(fresh.text.contains("Page four") && fresh.text.contains("generation 2"), "{}", fresh.text);
    close(browser, task).await;
    assert!(rep.signal_and_wait("INT").success());
}

/// A HAR of two pages sharing a stylesheet, recorded an hour before `now`: the stylesheet had
/// `max-age=300`, and the first page set a cookie for ten minutes by header and one by script.
fn stale_har(now: time::OffsetDateTime) -> String {
    let then = now - time::Duration::hours(1);
    let http_date = |t: time::OffsetDateTime| {
        let f = time::format_description::parse_borrowed::<2>(
            "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT",
        )
        .unwrap();
        t.to_offset(time::UtcOffset::UTC).format(&f).unwrap()
    };
    let started = then.format(&time::format_description::well_known::Rfc3339).unwrap();
    let date = http_date(then);
    let cookie = format!("sid=1; Expires={}; Path=/", http_date(then + time::Duration::minutes(10)));
    let entry = |url: &str, mime: &str, body: &str, extra: Vec<serde_json::Value>| {
        let mut headers = vec![
            serde_json::json!({"name": "content-type", "value": mime}),
            serde_json::json!({"name": "date", "value": date}),
        ];
        headers.extend(extra);
        serde_json::json!({
            "startedDateTime": started, "time": 5.0,
            "request": {"method": "GET", "url": url, "httpVersion": "HTTP/1.1", "headers": [], "queryString": [],
                        "cookies": [], "headersSize": -1, "bodySize": 0},
            "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": headers,
                         "cookies": [], "content": {"size": body.len(), "mimeType": mime, "text": body},
                         "redirectURL": "", "headersSize": -1, "bodySize": -1},
            "cache": {}, "timings": {"send": 0.1, "wait": 4.0, "receive": 0.9}
        })
    };
    let entries = vec![
        entry(
            "https://fresh.test/a.html",
            "text/html",
            "<!doctype html><link rel=stylesheet href=/s.css><p>first</p><script>document.cookie = 'js=1; expires=' + new Date(Date.now() + 600000).toUTCString() + '; path=/'</script>",
            vec![serde_json::json!({"name": "set-cookie", "value": cookie})],
        ),
        entry(
            "https://fresh.test/s.css",
            "text/css",
            "p { color: rgb(1, 2, 3) }",
            vec![serde_json::json!({"name": "cache-control", "value": "max-age=300"})],
        ),
        entry(
            "https://fresh.test/b.html",
            "text/html",
            "<!doctype html><link rel=stylesheet href=/s.css><p id=c></p><script>document.getElementById('c').textContent = document.cookie</script>",
            vec![],
        ),
    ];
    serde_json::json!({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": entries}})
        .to_string()
}

/// A replay an hour after its recording presents the freshness of recording time: the stylesheet the
/// second page shares with the first is fresh, so the replay makes the requests the recording made (one
/// for it); served as stored (`--no-refresh`) it is stale and fetched again. The first page's header
/// cookie reaches the second page either way (Chromium measures `Expires` against the response's `Date`,
/// which is shifted with it), and so does its script cookie, whose expiry the page computed from the
/// frozen clock (an hour ago) and the shim moved to the real one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_hours_later_keeps_recorded_freshness_and_cookies() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    #[allow(clippy::disallowed_methods)] // the test's "an hour ago" is relative to the browser's real clock
    let now = time::OffsetDateTime::now_utc();
    let har = h.join("stale.har");
    std::fs::write(&har, stale_har(now)).unwrap();
    let out = run_cli(h, &["snapshots", "import", har.to_str().unwrap(), "--snapshot", "stale"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mut served = Vec::new();
    for extra in [&[][..], &["--no-refresh"][..]] {
        let mut args = vec!["replay", "--snapshot", "stale"];
        args.extend_from_slice(extra);
        let wf = Webfreeze::spawn(h, &args);
        let spki = spki_of(h);
        let profile = tempfile::tempdir().unwrap();
        let (browser, task) = launch(wf.addr, Some(&spki), profile.path()).await;
        let page = browser.new_page("about:blank").await.unwrap();
        for url in ["https://fresh.test/a.html", "https://fresh.test/b.html"] {
            page.goto(url).await.unwrap();
            page.wait_for_navigation().await.unwrap();
        }
        let cookie: String =
            page.evaluate("document.getElementById('c').textContent").await.unwrap().into_value().unwrap();
        assert_eq!(
            cookie, "sid=1; js=1",
            "{extra:?}: the header cookie and the script cookie must both survive"
        );
        let report: serde_json::Value = {
            let c = proxy_get(wf.addr, "/__webfreeze/report").await;
            serde_json::from_str(&c).unwrap()
        };
        served.push(report["exact"].as_u64().unwrap());
        close(browser, task).await;
    }
    assert_eq!(
        served,
        [3, 4],
        "exact answers with refresh, then as stored: a.html, s.css (+ again when stale), b.html"
    );
}

/// GET a path of the proxy itself (its `/__webfreeze/` endpoints).
async fn proxy_get(addr: std::net::SocketAddr, path: &str) -> String {
    use http_body_util::BodyExt as _;
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut s, c) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp)).await.unwrap();
    tokio::spawn(c);
    let req = http::Request::get(path)
        .header("host", "x")
        .body(http_body_util::Full::new(bytes::Bytes::new()))
        .unwrap();
    let body = s.send_request(req).await.unwrap().into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(body.to_vec()).unwrap()
}

/// One step of the sign-in app's browse: the URL and the page's visible text once loaded.
async fn app_step(page: &chromiumoxide::Page, js: &str) -> (String, String) {
    crate::dokuwiki::navigate_by(page, js).await;
    let text: String = page.evaluate("document.body.innerText").await.unwrap().into_value().unwrap();
    (page.url().await.unwrap().unwrap_or_default(), text)
}

/// Open the sign-in page, sign in, open the account page, then the orders page.
/// `env`: the browser's extra environment (a moved clock).
async fn app_browse(
    proxy: std::net::SocketAddr,
    home: &std::path::Path,
    env: &[(String, String)],
) -> Vec<(String, String)> {
    let profile = tempfile::tempdir().unwrap();
    let (browser, task) =
        crate::proxy_chromium::launch_env(Some(proxy), Some(&spki_of(home)), profile.path(), env).await;
    let page = browser.new_page("about:blank").await.unwrap();
    let mut steps = Vec::new();
    for js in [
        "location.href = 'https://app.test/app/login'",
        "document.getElementById('f').submit()",
        "document.getElementById('next').click()",
        "document.getElementById('next').click()",
    ] {
        steps.push(app_step(&page, js).await);
    }
    close(browser, task).await;
    steps
}

/// The recorded exchanges each replayed request was answered from (`replay LAYER METHOD URL -> #SEQ`, the
/// replay's debug log), sorted.
fn served_seqs(stderr: &str) -> Vec<u64> {
    let mut seqs: Vec<u64> = stderr
        .lines()
        .filter(|l| l.contains(" replay "))
        .filter_map(|l| l.rsplit_once(" -> #")?.1.trim().parse().ok())
        .collect();
    seqs.sort_unstable();
    seqs
}

/// Issue 22, part 1, end to end: a sign-in app whose session cookie (by header), preference cookie (by
/// script), stylesheet and script (`max-age`) all live 8 seconds, browsed through `webfreeze record` and
/// replayed, sealed with the app gone, after all those lifetimes have passed. At every step the replayed
/// page equals the recorded one (still signed in, both cookies seen), and the replay answers exactly the
/// requests the recording made, each recorded exchange once (the stylesheet and script fetched once and
/// then cached, as while recording). The same a month later (the replay and Chromium a month ahead under
/// libfaketime). The control: served as stored (`--no-refresh`), the same replay fetches the expired
/// stylesheet and script again. And a non-browser client (Python's cookie jar) signing in on the replay
/// keeps the session cookie, which it drops when served as stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_replayed_after_its_cookies_and_cache_expired_is_the_recorded_one() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let (origin, reach) = https_origin(h, "app.test").await;
    let mut rec = Webfreeze::spawn_with(h, &["record", "--snapshot", "app"], &reach);
    let recorded = app_browse(rec.addr, h, &[]).await;
    assert!(rec.signal_and_wait("INT").success(), "{}", rec.stderr());
    #[allow(clippy::disallowed_methods)] // the lifetimes run on the browser's real clock
    let recorded_by = std::time::Instant::now();

    // The recording itself saw the app working within the lifetimes: signed in, both cookies, and the
    // stylesheet and script fetched once (then fresh in Chromium's cache).
    for (url, text) in &recorded[2..] {
        assert!(text.contains("Signed in as ann"), "{url}: {text}");
        assert!(text.contains("sid=s-ann") && text.contains("pref=compact"), "{url}: {text}");
    }
    assert!(recorded[3].1.contains("Orders: kettle, teapot"), "{}", recorded[3].1);
    let paths = origin.stats.paths.lock().unwrap().clone();
    assert_eq!((paths.get("/app/s.css"), paths.get("/app/app.js")), (Some(&1), Some(&1)), "{paths:?}");
    drop(origin);
    let shown: serde_json::Value = serde_json::from_slice(
        &run_cli(h, &["snapshots", "show", "app", "--json", "--limit", "1000"]).stdout,
    )
    .unwrap();
    let xs = shown["exchanges"].as_array().unwrap();
    let mut urls: Vec<String> = xs
        .iter()
        .map(|x| {
            format!("{} {}", x["request"]["method"].as_str().unwrap(), x["request"]["url"].as_str().unwrap())
        })
        .collect();
    urls.sort();
    assert_eq!(
        urls,
        [
            "GET https://app.test/app/account",
            "GET https://app.test/app/app.js",
            "GET https://app.test/app/login",
            "GET https://app.test/app/orders",
            "GET https://app.test/app/s.css",
            "POST https://app.test/app/login",
        ],
        "what the recording asked for"
    );
    let recorded_seqs: Vec<u64> = xs.iter().map(|x| x["seq"].as_u64().unwrap()).collect();

    // Wait out every lifetime (cookies and max-age, LIFE_SECS each, all begun before the recording ended),
    // with a second to spare: the premise of the test, not a synchronisation.
    tokio::time::sleep_until((recorded_by + Duration::from_secs(LIFE_SECS + 1)).into()).await;

    // Now; a month later (the replay and the browser a month ahead, libfaketime); the control.
    for (extra, clock) in [(&[][..], None), (&[][..], Some("+30d")), (&["--no-refresh"][..], None)] {
        let mut args = vec!["replay", "--snapshot", "app"];
        args.extend_from_slice(extra);
        let env = clock.map(faketime_env).unwrap_or_default();
        let mut env_refs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        env_refs.push(("RUST_LOG", "warn,webfreeze_replay=debug"));
        let mut rep = Webfreeze::spawn_env(h, &args, &env_refs);
        let replayed = app_browse(rep.addr, h, &env).await;
        assert!(rep.signal_and_wait("INT").success(), "{}", rep.stderr());
        let served = served_seqs(&rep.stderr());
        if extra.is_empty() {
            for (i, (r, p)) in recorded.iter().zip(&replayed).enumerate() {
                assert_eq!(
                    p,
                    r,
                    "{clock:?}: step {}: the replayed URL and page text are the recorded ones",
                    i + 1
                );
            }
            assert_eq!(served, recorded_seqs, "{clock:?}: each recorded exchange served once, nothing else");
        } else {
            // The stylesheet and script, stale by their recorded Date, are asked for again.
            assert!(served.len() > recorded_seqs.len(), "{extra:?}: {served:?} vs {recorded_seqs:?}");
        }
    }

    // A client that is not a browser (Python's own cookie jar, as a harness's `requests` has) signs in
    // on the same replay: it keeps the session cookie only because the replay shifted its `Expires` (the
    // jar measures it against the real clock, not the response's `Date`); served as stored, it drops it.
    for (extra, kept) in [(&[][..], true), (&["--no-refresh"][..], false)] {
        let mut args = vec!["replay", "--snapshot", "app"];
        args.extend_from_slice(extra);
        let rep = Webfreeze::spawn(h, &args);
        let jar = python_sign_in(rep.addr, &rep.ca_pem_path());
        assert_eq!(jar.contains("sid=s-ann"), kept, "{extra:?}: the cookie jar after signing in: {jar}");
    }
}

/// Sign in to the app through the proxy at `proxy` with Python's urllib and `http.cookiejar` (the CA
/// trusted from `ca`); the jar's cookies, `name=value` per line.
fn python_sign_in(proxy: std::net::SocketAddr, ca: &std::path::Path) -> String {
    let script = r#"
import http.cookiejar, ssl, sys, urllib.request
proxy, ca = sys.argv[1], sys.argv[2]
jar = http.cookiejar.CookieJar()
opener = urllib.request.build_opener(
    urllib.request.ProxyHandler({"https": proxy}),
    urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=ca)),
    urllib.request.HTTPCookieProcessor(jar),
)
opener.open("https://app.test/app/login").read()
opener.open(urllib.request.Request("https://app.test/app/login", data=b"user=ann",
    headers={"content-type": "application/x-www-form-urlencoded"})).read()
print("\n".join(f"{c.name}={c.value}" for c in jar))
"#;
    let out = std::process::Command::new(test_python())
        .args(["-c", script, &format!("http://{proxy}"), ca.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Open the random page and return what its script's request got (it names the URL the script made).
async fn open_rand(browser: &chromiumoxide::Browser) -> String {
    let page = browser.new_page("https://rand.test/rand/").await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let done: Option<String> = page
            .evaluate("document.getElementById('done') && document.getElementById('done').textContent")
            .await
            .unwrap()
            .into_value()
            .unwrap_or(None);
        if let Some(t) = done {
            page.close().await.unwrap();
            return t;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the page never finished: {:?}",
            page.content().await
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Issue 35.4: the standalone `record` injects the determinism shim replay injects (a browser driven by
/// any harness, no CDP script of ours), so a URL the page's script makes from `Math.random()` and
/// `Date.now()` is the same at replay and matches exactly; with `--no-inject-shim` it is another URL at
/// replay and is not an exact hit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_standalone_record_injects_the_shim_so_script_made_urls_match_exactly() {
    for shimmed in [true, false] {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        let origin = Origin::start(Some(origin_tls(&["rand.test"], &[b"http/1.1"]))).await;
        let ca_file = h.join("origin-ca.pem");
        std::fs::write(&ca_file, origin.ca_pem.as_ref().unwrap()).unwrap();
        let resolve = format!("rand.test:443:{}", origin.addr);
        let mut args = vec![
            "record",
            "--snapshot",
            "r",
            "--upstream-ca",
            ca_file.to_str().unwrap(),
            "--resolve",
            &resolve,
        ];
        if !shimmed {
            args.push("--no-inject-shim");
        }
        let mut rec = Webfreeze::spawn(h, &args);
        let spki = spki_of(h);
        let profile = tempfile::tempdir().unwrap();
        let (browser, task) = launch(rec.addr, Some(&spki), profile.path()).await;
        let recorded = open_rand(&browser).await;
        close(browser, task).await;
        assert!(rec.signal_and_wait("INT").success(), "{}", rec.stderr());
        drop(origin);
        let report = h.join("report.json");
        let mut rep =
            Webfreeze::spawn(h, &["replay", "--snapshot", "r", "--report", report.to_str().unwrap()]);
        let profile = tempfile::tempdir().unwrap();
        let (browser, task) = launch(rep.addr, Some(&spki), profile.path()).await;
        let replayed = open_rand(&browser).await;
        close(browser, task).await;
        assert!(rep.signal_and_wait("INT").success(), "{}", rep.stderr());
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        assert!(recorded.starts_with("asked for zq=0."), "{recorded}");
        if shimmed {
            assert_eq!(replayed, recorded, "the same script-made URL: {r}");
            assert_eq!((r["exact"].as_u64(), r["missed"].as_u64()), (r["requests"].as_u64(), Some(0)), "{r}");
        } else {
            assert!(r["exact"].as_u64() < r["requests"].as_u64(), "another URL at replay, not exact: {r}");
        }
    }
}
