//! A step ends when the page is quiet, decided by the browser's events, not a fixed wait
//! (agent/src/browser/settle.rs): with no quiet period at all (`--settle-ms 0`) the agent still sees what a
//! request chain (a submit handler's fetch, then its rendering) produced, and each step reports the page's
//! own work (`page_ms`) apart from the agent's; the quiet period is waited for only when the page has a
//! short timer pending.

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_waits_for_the_pages_own_work_and_no_longer() {
    let home = tempfile::tempdir().unwrap();
    let sites = DemoSites::start(home.path()).await;
    let replies = [
        "Thought: look down\nAction: Scroll [WINDOW]; down",
        "Thought: back up\nAction: Scroll [WINDOW]; up",
        // The search form's submit handler fetches /api/search and renders the hits as links.
        "Thought: search\nAction: Type [0]; kettle",
        // The first hit: only there if the step above waited for the fetch and its rendering.
        "Thought: open it\nAction: Click [3]",
        "Thought: done\nAction: ANSWER; kettle",
    ];
    let task = r#"{"web_name": "Demo Shop", "id": "Settle--0", "ques": "Open the kettle", "web": "https://shop.test/"}"#;
    let scripted = Scripted::new(home.path(), task, &replies);
    let out_dir = home.path().join("run");
    let mut args = scripted.run_args("live", &out_dir);
    args.extend(strs(&["--settle-ms", "0"]));
    args.extend(sites.reach.iter().cloned());
    let out = cli(home.path(), args, vec![]).await;
    assert!(out.status.success(), "run: {}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&out_dir, "Settle--0");
    assert_eq!(t.outcome, trajectory::Outcome::Answered, "{t:?}");
    let steps = &t.steps;
    assert_eq!(steps.len(), 5, "{steps:?}");
    // The search's hits were on the page the agent observed after typing.
    assert!(
        steps[3].elements.to_lowercase().contains("kettle"),
        "the observation after the search shows its hits: {}",
        steps[3].elements
    );
    // ... and the click on the first hit opened the product.
    assert!(steps[3].url_after.contains("/product/"), "step 4 went to {}", steps[3].url_after);
    for s in &steps[..4] {
        assert!(s.error.is_none(), "step {}: {:?}", s.n, s.error);
        assert!(s.timings.page_ms <= s.timings.act_ms, "step {}: {:?}", s.n, s.timings);
    }
    // A scroll asks the network for nothing (the second one: the first may see the favicon the page asks
    // for after its load); a search and a navigation do.
    assert_eq!(steps[1].timings.page_ms, 0, "scroll: {:?}", steps[1].timings);
    assert!(steps[2].timings.page_ms > 0, "search: {:?}", steps[2].timings);
    assert!(steps[3].timings.page_ms > 0, "navigation: {:?}", steps[3].timings);
}

/// The quiet period is waived for a page that shows it needs none (its thread idle, no short timer
/// pending), and kept for one with a short timer pending: with a long quiet period (`--settle-ms 1500`),
/// a fetch that renders at once ends its step well before the quiet period would have, while a fetch whose
/// answer is shown from a 400 ms timer is waited for, and the observation after it shows the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quiet_period_is_waited_only_for_a_pending_short_timer() {
    const QUIET_MS: u64 = 1500;
    let home = tempfile::tempdir().unwrap();
    let (_origin, reach) = https_origin(home.path(), "timer.test").await;
    let task = r#"{"web_name": "Timers", "id": "Timers--0", "ques": "Fetch both", "web": "https://timer.test/timer/"}"#;
    let replies = [
        "Thought: now\nAction: Click [0]",
        "Thought: later\nAction: Click [1]",
        "Thought: done\nAction: ANSWER; ok",
    ];
    let scripted = Scripted::new(home.path(), task, &replies);
    let out_dir = home.path().join("run");
    let mut args = scripted.run_args("live", &out_dir);
    args.extend(strs(&["--settle-ms", &QUIET_MS.to_string()]));
    args.extend(reach);
    let out = cli(home.path(), args, vec![]).await;
    assert!(out.status.success(), "run: {}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&out_dir, "Timers--0");
    assert_eq!(t.outcome, trajectory::Outcome::Answered, "{t:?}");
    let steps = &t.steps;
    assert_eq!(steps.len(), 3, "{steps:?}");
    // The fetch shown at once: seen, and the step ended without the quiet period.
    assert!(steps[1].elements.contains("answer now"), "after Fetch: {}", steps[1].elements);
    assert!(steps[0].timings.page_ms > 0, "Fetch used the network: {:?}", steps[0].timings);
    assert!(
        steps[0].timings.act_ms < QUIET_MS,
        "a page with no short timer pending is not held for the quiet period: {:?}",
        steps[0].timings
    );
    // The answer shown from a timer: waited for.
    assert!(
        steps[2].elements.contains("answer later"),
        "the observation after the timer's step shows what the timer rendered: {}",
        steps[2].elements
    );
    assert!(
        steps[1].timings.act_ms >= TIMER_DELAY_MS,
        "the step waited for the pending timer: {:?}",
        steps[1].timings
    );
}

/// Run `task` live on a local origin at `edit.test` with `replies`, with a short page timeout (a wait for
/// what the test is about fails it in seconds, not the default 30): three steps answered, the second landing
/// on `/unload/saved`, and no step that waited out the page timeout or failed.
async fn three_steps_to_the_saved_page(task: &str, id: &str, replies: &[&str]) {
    let home = tempfile::tempdir().unwrap();
    let (_origin, reach) = https_origin(home.path(), "edit.test").await;
    let scripted = Scripted::new(home.path(), task, replies);
    let out_dir = home.path().join("run");
    let mut args = scripted.run_args("live", &out_dir);
    args.extend(strs(&["--page-timeout", "8"]));
    args.extend(reach);
    let out = cli(home.path(), args, vec![]).await;
    assert!(out.status.success(), "run: {}", String::from_utf8_lossy(&out.stderr));
    let t = traj(&out_dir, id);
    assert_eq!(t.outcome, trajectory::Outcome::Answered, "{t:?}");
    let steps = &t.steps;
    assert_eq!(steps.len(), 3, "{steps:?}");
    assert!(steps[1].url_after.ends_with("/unload/saved"), "the click left the page: {}", steps[1].url_after);
    for s in steps {
        assert!(!s.notes.iter().any(|n| n.contains("had not settled")), "step {}: {:?}", s.n, s.notes);
        assert!(s.error.is_none(), "step {}: {:?}", s.n, s.error);
    }
}

/// A request the old document started is not waited for once the next document has committed: a text box
/// whose `change` starts a request the server never answers (MediaWiki's edit stash), and a click on Save
/// that both blurs it and submits the form. Chromium does not always end such a request in its network
/// events (MediaWiki's saves each waited for the whole page timeout, live and recording); the step ends
/// when the saved page has settled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_of_the_document_left_behind_is_not_waited_for() {
    let task = r#"{"web_name": "Edit", "id": "Unload--0", "ques": "Save a text", "web": "https://edit.test/unload/"}"#;
    let replies = [
        "Thought: write\nAction: Type [0]; some text",
        "Thought: save\nAction: Click [1]",
        "Thought: done\nAction: ANSWER; saved",
    ];
    three_steps_to_the_saved_page(task, "Unload--0", &replies).await;
}

/// A page that asks "Leave site?" when left with changes (a `beforeunload` dialog, as MediaWiki's editor
/// does) does not hold the agent: the dialog is answered (leaving, as the agent chose to) and the click
/// lands on the next page within the step, not at the page timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_asks_before_it_is_left_does_not_hold_the_agent() {
    let task =
        r#"{"web_name": "Edit", "id": "Warn--0", "ques": "Leave", "web": "https://edit.test/unload/warn"}"#;
    let replies = [
        "Thought: write\nAction: Type [0]; unsaved text",
        "Thought: leave\nAction: Click [1]",
        "Thought: done\nAction: ANSWER; left",
    ];
    three_steps_to_the_saved_page(task, "Warn--0", &replies).await;
}
