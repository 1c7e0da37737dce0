//! Issue 61, part 4: a site's own search answered in the site's own results page. A real DokuWiki
//! (Debian's, behind nginx and php-fpm) is browsed by the agent, which opens a page and searches the wiki
//! for one word; the app is stopped; an agent replaying with `--search site` searches for another word
//! the recording never searched for. Its results page is DokuWiki's own (the wiki's chrome and result
//! markup, refilled with the frozen hits), marked as frozen search and naming the page it was made from,
//! and a click on a result's title lands on the frozen article.

use crate::support::*;

const PAGES: &[(&str, &str)] = &[
    ("start", "====== Test Wiki ======\nWelcome. Read about [[kettles]] and [[teapots]].\n"),
    ("kettles", "====== Kettles ======\nThe Blue Kettle costs 24.00 and boils a litre.\n"),
    ("teapots", "====== Teapots ======\nThe Green Teapot pours as well as the Blue Kettle.\n"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_search_the_recording_never_made_is_answered_in_the_sites_own_results_page() {
    use trajectory::{Outcome, RunDir};
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mut wiki = tokio::task::block_in_place(|| DokuWiki::start(h, PAGES).unwrap());
    let tasks = wiki_task(h, "What does the Blue Kettle cost?", "24.00");
    // The recording: open the kettles page, then search the wiki for "blue" (two pages say it: the
    // wiki's results page lists two results, a list to refill).
    let recorder = FakeLlm::start(move |body| {
        let obs = last_user_text(body);
        let turn = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
        match turn {
            0 => webarena_reply(&format!("click [{}]", id_of(&obs, "link 'kettles'"))),
            1 => webarena_reply(&format!("type [{}] [blue] [1]", id_of(&obs, "textbox '[F]'"))),
            _ => {
                assert!(
                    obs.contains("teapots") && obs.contains("kettles"),
                    "the wiki's search found both: {obs}"
                );
                webarena_reply("stop [24.00]")
            }
        }
    })
    .await;
    // The replay: search for "kettle" (never searched while recording), open the first result's title.
    let searcher = FakeLlm::start(move |body| {
        let obs = last_user_text(body);
        let turn = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
        match turn {
            0 => webarena_reply(&format!("type [{}] [kettle] [1]", id_of(&obs, "textbox '[F]'"))),
            1 => webarena_reply(&format!("click [{}]", id_of(&obs, "link 'kettles"))),
            _ => webarena_reply("stop [24.00]"),
        }
    })
    .await;
    let reach = reach(&wiki);
    let run = |mode: &str, out: &std::path::Path, api: String| {
        let mut a = RunArgs::new(&tasks, mode, out)
            .opt("--policy", "llm")
            .settle_ms(300)
            .opt("--max-steps", "6")
            .build();
        a.extend(strs(&["--window", "1024x2400", "--action-space", "webarena", "--observation", "axtree"]));
        a.extend(strs(&["--api-base", &api]));
        if mode == "record" {
            a.extend(reach.iter().cloned());
        } else {
            a.extend(strs(&["--snapshots", "rec", "--search", "site"]));
        }
        a
    };
    let key = || vec![("OPENAI_API_KEY".to_string(), "k".to_string())];
    let rec = h.join("rec");
    let out = cli(h, run("record", &rec, recorder.api_base()), key()).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    recorder.check();
    let t = RunDir::new(&rec).task("1").read_trajectory().unwrap().unwrap();
    assert_eq!(t.outcome, Outcome::Answered, "{t:?}");
    let recorded_search = t.steps[1].url_after.clone();
    assert!(recorded_search.contains("do=search") && recorded_search.contains("q=blue"), "{recorded_search}");
    wiki.stop();

    let rep = h.join("rep");
    let out = cli(h, run("replay", &rep, searcher.api_base()), key()).await;
    assert!(out.status.success(), "replay: {}", String::from_utf8_lossy(&out.stderr));
    searcher.check();
    let r = RunDir::new(&rep).task("1").read_trajectory().unwrap().unwrap();
    assert_eq!(r.outcome, Outcome::Answered, "{r:?}");
    assert_eq!(r.steps.len(), 3, "{:?}", r.steps.iter().map(|s| &s.url_after).collect::<Vec<_>>());
    // The search the recording never made: answered by the frozen search, in DokuWiki's page.
    let results = &r.steps[0];
    assert!(results.url_after.contains("q=kettle"), "{}", results.url_after);
    assert!(results.proxy.frozen_search > 0, "{:?}", results.proxy);
    let page = &r.steps[1].elements;
    // DokuWiki's own chrome (the generic page has no log-in link), and the frozen hit in its list.
    assert!(page.contains("Log In"), "DokuWiki's own page: {page}");
    assert!(page.contains("link 'kettles"), "the hit: {page}");
    let task = RunDir::new(&rep).task("1");
    let wire = task.read_wire(&r).unwrap().expect("a wire log");
    let answered = wire
        .entries
        .iter()
        .find(|e| e.url.contains("q=kettle"))
        .unwrap_or_else(|| panic!("the search on the wire: {:?}", wire.entries));
    let template = answered
        .response_headers
        .iter()
        .find(|(k, _)| k == "x-webfreeze-template")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| panic!("made from the site's page: {answered:?}"));
    assert!(template.contains("q=blue"), "{template}");
    // The click on the result's title lands on the frozen article.
    let article = &r.steps[1];
    assert!(article.url_after.contains("id=kettles"), "{}", article.url_after);
    assert!(r.steps[2].elements.contains("The Blue Kettle costs 24.00"), "{}", r.steps[2].elements);
}
