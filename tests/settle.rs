//! A step ends when the page is quiet, decided by the browser's events, not a fixed wait
//! (agent/src/browser/settle.rs): with no quiet period at all (`--settle-ms 0`) the agent still sees what a
//! request chain (a submit handler's fetch, then its rendering) produced, and each step reports the page's
//! own work (`page_ms`) apart from the agent's.

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_waits_for_the_pages_own_work_and_no_longer() {
    let home = tempfile::tempdir().unwrap();
    let sites = DemoSites::start(home.path()).await;
    let tasks = home.path().join("tasks.jsonl");
    std::fs::write(
        &tasks,
        r#"{"web_name": "Demo Shop", "id": "Settle--0", "ques": "Open the kettle", "web": "https://shop.test/"}"#,
    )
    .unwrap();
    let script = home.path().join("script");
    let replies = [
        "Thought: look down\nAction: Scroll [WINDOW]; down",
        "Thought: back up\nAction: Scroll [WINDOW]; up",
        // The search form's submit handler fetches /api/search and renders the hits as links.
        "Thought: search\nAction: Type [0]; kettle",
        // The first hit: only there if the step above waited for the fetch and its rendering.
        "Thought: open it\nAction: Click [3]",
        "Thought: done\nAction: ANSWER; kettle",
    ];
    let task = agent::tasks::load(&tasks).unwrap().remove(0);
    agent::policy::write_script(&script, &[(task, replies.iter().map(|s| s.to_string()).collect())]).unwrap();
    let out_dir = home.path().join("run");
    let mut args = strs(&[
        "run",
        "--tasks",
        tasks.to_str().unwrap(),
        "--mode",
        "live",
        "--policy",
        &format!("trajectory:{}", script.display()),
        "--out",
        out_dir.to_str().unwrap(),
        "--settle-ms",
        "0",
    ]);
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
