//! Issue 22's real application: DokuWiki (Debian's, behind nginx over TLS and php-fpm) browsed by Chromium
//! through `webfreeze record` in five steps (open the start page, follow a link, search with the wiki's form,
//! log in, edit a page and preview it), then the app stopped and the same browse replayed twice through a
//! sealed `webfreeze replay`: the same URL and page text at every step, nothing the pages needed missed;
//! then a third time a day later: the replay and Chromium both run under libfaketime a day ahead (the
//! recording is a day old to both), with the same result. And the same browse by the agent: recorded by
//! `webfreeze run --mode record` (a fake model reading the accessibility tree) and replayed twice by
//! `run --mode replay`: the same URL and page at every step.
//!
//! Finding, fixed: Chromium sends one `cookie` field per cookie over HTTP/2 and the proxy passed them on as
//! separate `Cookie` lines to the HTTP/1.1 origin; nginx 1.22 hands PHP only the first, so the login cookie
//! never reached DokuWiki and the editor said "read only". The proxy now joins them (RFC 9113 8.2.3).

use std::time::Duration;

use chromiumoxide::Page;

use crate::proxy_chromium::{launch_env, spki_of};
use crate::support::*;

const PAGES: &[(&str, &str)] = &[
    ("start", "====== Test Wiki ======\nWelcome. Read about [[kettles]] and [[teapots]].\n"),
    ("kettles", "====== Kettles ======\nThe Blue Kettle costs 24.00 and boils a litre.\n"),
    ("teapots", "====== Teapots ======\nThe Green Teapot is on promotion this week.\n"),
];

/// Wait until the page's document is complete (bounded).
pub(crate) async fn settled(page: &Page) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let ready: String = page
            .evaluate("document.readyState")
            .await
            .ok()
            .and_then(|v| v.into_value().ok())
            .unwrap_or_default();
        if ready == "complete" {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "page never completed");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Run `js` (which navigates) and wait for the next document.
pub(crate) async fn navigate_by(page: &Page, js: &str) {
    let before: String =
        page.evaluate("location.href + '#' + performance.timeOrigin").await.unwrap().into_value().unwrap();
    if let Err(e) = page.evaluate(js).await {
        let (url, text) = snapshot_of(page).await;
        panic!("{js}: {e}\non {url}:\n{text}");
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let now: Option<String> = page
            .evaluate("location.href + '#' + performance.timeOrigin")
            .await
            .ok()
            .and_then(|v| v.into_value().ok());
        if now.is_some_and(|n| n != before) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{js} did not navigate");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    settled(page).await;
}

/// The browse: (URL, visible text) after each step. `env`: the browser's extra environment (a moved
/// clock); the browser's `Date.now()` is checked against `clock_ahead` before the browse.
async fn browse(
    proxy: std::net::SocketAddr,
    home: &std::path::Path,
    profile: &std::path::Path,
    env: &[(String, String)],
    clock_ahead: Duration,
) -> Vec<(String, String)> {
    let (mut browser, task) = launch_env(Some(proxy), Some(&spki_of(home)), profile, env).await;
    let page = browser.new_page("about:blank").await.unwrap();
    let browser_now: f64 = page.evaluate("Date.now()").await.unwrap().into_value().unwrap();
    #[allow(clippy::disallowed_methods)] // the test checks the browser's clock against the real one
    let real_now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let ahead = browser_now / 1000.0 - real_now.as_secs_f64();
    assert!(
        (ahead - clock_ahead.as_secs_f64()).abs() < 600.0,
        "the browser's clock is {ahead:.0} s ahead of the real one, not {clock_ahead:?}"
    );
    let mut seen = Vec::new();
    for js in [
        // Open the start page; follow a link; search with the wiki's own form; open the login form.
        "location.href = 'https://wiki.test/doku.php?id=start'",
        "document.querySelector('a.wikilink1[href*=\"kettles\"]').click()",
        "document.querySelector('#dw__search input[name=q]').value = 'teapot'; document.getElementById('dw__search').submit()",
        "location.href = 'https://wiki.test/doku.php?id=kettles&do=login'",
    ] {
        navigate_by(&page, js).await;
        seen.push(snapshot_of(&page).await);
    }
    // The login form: fill and submit (a POST with the form's security token), then the edit form.
    navigate_by(
        &page,
        &format!(
            "document.getElementById('focus__this').value = '{WIKI_USER}'; \
             document.querySelector('#dw__login input[name=p]').value = '{WIKI_PASSWORD}'; \
             document.getElementById('dw__login').submit()"
        ),
    )
    .await;
    seen.push(snapshot_of(&page).await);
    navigate_by(&page, "location.href = 'https://wiki.test/doku.php?id=kettles&do=edit'").await;
    seen.push(snapshot_of(&page).await);
    navigate_by(
        &page,
        "document.getElementById('wiki__text').value += '\\nIt now comes in red.'; \
         document.querySelector('button[name=\"do[preview]\"]').click()",
    )
    .await;
    seen.push(snapshot_of(&page).await);
    browser.close().await.unwrap();
    let _ = browser.wait().await;
    task.abort();
    seen
}

/// The URL and the page's visible text once the page's own scripts are done with it: the text unchanged
/// over half a second (DokuWiki builds its editor toolbar after load), within 10 s.
async fn snapshot_of(page: &Page) -> (String, String) {
    let text = || async {
        page.evaluate("document.body.innerText").await.ok().and_then(|v| v.into_value::<String>().ok())
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let (mut last, mut since) = (text().await.unwrap_or_default(), tokio::time::Instant::now());
    while since.elapsed() < Duration::from_millis(500) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = text().await.unwrap_or_default();
        if now != last {
            (last, since) = (now, tokio::time::Instant::now());
        }
    }
    let url = page.url().await.unwrap().unwrap_or_default();
    (url, last)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dokuwiki_browse_with_login_and_edit_replays_with_the_same_url_and_text_at_every_step() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mut wiki = tokio::task::block_in_place(|| DokuWiki::start(h, PAGES).unwrap());
    let reach = reach(&wiki);
    let mut rec = Webfreeze::spawn_with(h, &["record", "--snapshot", "wiki"], &reach);
    let recorded = browse(rec.addr, h, &h.join("profile-rec"), &[], Duration::ZERO).await;
    assert!(rec.signal_and_wait("INT").success(), "{}", rec.stderr());
    // What the browse saw is the wiki working: the link, the search hit, the login, the editor, the preview.
    let texts: Vec<&str> = recorded.iter().map(|(_, t)| t.as_str()).collect();
    assert!(texts[0].contains("Welcome. Read about"), "{}", texts[0]);
    assert!(texts[1].contains("The Blue Kettle costs 24.00"), "{}", texts[1]);
    assert!(texts[2].contains("Teapots"), "search found the page: {}", texts[2]);
    assert!(texts[4].contains("Log Out") || texts[4].contains("Logout"), "logged in: {}", texts[4]);
    assert!(texts[6].contains("It now comes in red."), "preview shows the edit: {}", texts[6]);

    wiki.stop();
    let report = h.join("report.json");
    // Twice now, then once a day later: the replay and the browser both run a day ahead (libfaketime),
    // so every Date, cookie expiry and certificate the replay presents is a day after the recording.
    const DAY: Duration = Duration::from_secs(86_400);
    for (round, ahead) in [(1, Duration::ZERO), (2, Duration::ZERO), (3, DAY)] {
        let env = if ahead.is_zero() { Vec::new() } else { faketime_env("+1d") };
        let mut env_refs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        env_refs.push(("RUST_LOG", "warn,webfreeze_replay=debug")); // one timestamped line per answer
        let mut rep = Webfreeze::spawn_env(
            h,
            &["replay", "--snapshot", "wiki", "--report", report.to_str().unwrap()],
            &env_refs,
        );
        let replayed = browse(rep.addr, h, &h.join(format!("profile-rep-{round}")), &env, ahead).await;
        assert!(rep.signal_and_wait("INT").success(), "{}", rep.stderr());
        if !ahead.is_zero() {
            // The replay's own clock moved too: its log is stamped a day ahead.
            let log = rep.stderr();
            let first = log.lines().find(|l| l.contains(" replay ")).unwrap_or_default();
            assert!(first.starts_with(&day_after_today()), "round {round}: not a day ahead: {first:?}");
        }
        for (i, (r, p)) in recorded.iter().zip(&replayed).enumerate() {
            assert_eq!(p.0, r.0, "round {round}, step {}: URL", i + 1);
            assert_eq!(p.1, r.1, "round {round}, step {}: page text", i + 1);
        }
        assert_eq!(replayed.len(), recorded.len());
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        let render_misses: Vec<&serde_json::Value> =
            r["misses"].as_array().unwrap().iter().filter(|m| m["render"] == true).collect();
        assert!(
            render_misses.is_empty(),
            "round {round}: nothing the pages needed was missed: {render_misses:?}"
        );
    }
}

/// Tomorrow's date as the log's timestamps write it (`2026-11-26`).
fn day_after_today() -> String {
    #[allow(clippy::disallowed_methods)] // "a day later" is relative to the real clock
    let t = time::OffsetDateTime::now_utc() + time::Duration::days(1);
    t.format(time::macros::format_description!("[year]-[month]-[day]")).unwrap()
}

/// The same browse by the agent: `webfreeze run --mode record` (WebArena's action space over the
/// accessibility tree) with a fake model that reads the tree it is sent: follow a link, search with the
/// wiki's form, open the login form, log in, open the editor, type and preview. Then, the app stopped,
/// `run --mode replay --policy trajectory:` twice: at every step the URL and the page (its accessibility
/// tree, the text the model read) are the recorded ones, and nothing the page needed missed. (Screenshots
/// are not compared: in about one step of nine per replay, a few pixels of DokuWiki's page-tool icons
/// differ with paint timing, while the page is the same.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dokuwiki_agent_run_recorded_and_replayed_twice_sees_the_same_pages() {
    use trajectory::{Outcome, RunDir};
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mut wiki = tokio::task::block_in_place(|| DokuWiki::start(h, PAGES).unwrap());
    let tasks = wiki_task(h, "Add 'It now comes in red.' to the kettles page and preview it.", "previewed");
    let llm = FakeLlm::start(move |body| {
        let obs = last_user_text(body);
        let turn = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
        match turn {
            0 => webarena_reply(&format!("click [{}]", id_of(&obs, "link 'kettles'"))),
            1 => {
                assert!(obs.contains("The Blue Kettle costs 24.00"), "{obs}");
                webarena_reply(&format!("type [{}] [teapot] [1]", id_of(&obs, "textbox '[F]'")))
            }
            2 => {
                assert!(obs.contains("teapots"), "search found the page: {obs}");
                webarena_reply("goto [https://wiki.test/doku.php?id=kettles&do=login]")
            }
            3 => webarena_reply(&format!("type [{}] [{WIKI_USER}] [0]", id_of(&obs, "textbox 'Username'"))),
            4 => {
                webarena_reply(&format!("type [{}] [{WIKI_PASSWORD}] [1]", id_of(&obs, "textbox 'Password'")))
            }
            5 => {
                assert!(obs.contains("Log Out"), "logged in: {obs}");
                webarena_reply("goto [https://wiki.test/doku.php?id=kettles&do=edit]")
            }
            6 => webarena_reply(&format!("type [{}] [It now comes in red.] [0]", id_of(&obs, "textbox '"))),
            7 => webarena_reply(&format!("click [{}]", id_of(&obs, "button 'Preview'"))),
            _ => {
                assert!(obs.contains("It now comes in red."), "the preview shows the edit: {obs}");
                webarena_reply("stop [previewed]")
            }
        }
    })
    .await;
    let reach = reach(&wiki);
    let run = |mode: &str, policy: &str, out: &std::path::Path| {
        let mut a = RunArgs::new(&tasks, mode, out)
            .opt("--policy", policy)
            .settle_ms(300)
            .opt("--max-steps", "12")
            .build();
        if mode == "record" {
            // The accessibility tree holds what is in the viewport, and DokuWiki's script scrolls to the
            // editor when it focuses it, by a row more or less with the timing of its toolbar: a window
            // tall enough for every page keeps the observation whole (the replay reads it from the run).
            a.extend(strs(&["--window", "1024x2400"]));
            a.extend(strs(&["--action-space", "webarena", "--observation", "axtree", "--api-base"]));
            a.push(llm.api_base());
            a.extend(reach.iter().cloned());
        }
        a
    };
    let key = vec![("OPENAI_API_KEY".to_string(), "k".to_string())];
    let rec = h.join("rec");
    let out = cli(h, run("record", "llm", &rec), key).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    llm.check();
    let t = RunDir::new(&rec).task("1").read_trajectory().unwrap().unwrap();
    assert_eq!((t.outcome, t.answer.as_deref()), (Outcome::Answered, Some("previewed")), "{t:?}");
    assert_eq!(t.steps.len(), 9, "{:?}", t.steps.iter().map(|s| &s.action).collect::<Vec<_>>());
    assert!(t.steps.iter().all(|s| s.error.is_none()), "{:?}", t.steps);

    wiki.stop();
    let policy = format!("trajectory:{}", rec.display());
    for round in 1..=2 {
        let out_dir = h.join(format!("rep{round}"));
        let out = cli(h, run("replay", &policy, &out_dir), vec![]).await;
        assert!(out.status.success(), "replay {round}: {}", String::from_utf8_lossy(&out.stderr));
        let r = RunDir::new(&out_dir).task("1").read_trajectory().unwrap().unwrap();
        assert_eq!((r.outcome, &r.answer), (Outcome::Answered, &t.answer), "round {round}");
        assert_eq!(r.steps.len(), t.steps.len(), "round {round}");
        for (a, b) in t.steps.iter().zip(&r.steps) {
            assert!(b.reproduced.as_ref().is_some_and(|x| x.url), "round {round}, step {}", a.n);
            assert_eq!(b.url_after, a.url_after, "round {round}, step {}: URL", a.n);
            assert_eq!(b.elements, a.elements, "round {round}, step {}: the page the model read", a.n);
            assert_eq!(b.proxy.render_missed, 0, "round {round}, step {}: {:?}", a.n, b.proxy.miss_urls);
        }
    }
}
