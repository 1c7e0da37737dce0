//! Issue 60 part 3 in Chromium: the side-effect guard gets the label of the control a WebArena action
//! uses, as it does a WebVoyager click's. On the guard origin's pages whose order goes to a path that
//! says nothing (`POST /api/v2/tx`), a WebArena `click [id]` on the "Place order" button and a
//! `type [id] [2] [1]` whose Enter submits the form the "Place order" button belongs to are both refused
//! by the label alone (the origin never sees an order); the same Type without Enter sends nothing and
//! tells no label.

use std::sync::atomic::Ordering;

use crate::support::*;

fn tasks() -> String {
    [
        serde_json::json!({"web_name": "Guard", "id": "Guard--click", "ques": "Buy the glass jar.",
            "web": "https://guard.test/quick/"}),
        serde_json::json!({"web_name": "Guard", "id": "Guard--enter", "ques": "Buy two glass jars.",
            "web": "https://guard.test/quick-qty/"}),
    ]
    .iter()
    .map(|t| format!("{t}\n"))
    .collect()
}

/// WebArena's grammar over the accessibility tree: click the button, or type 2 and press Enter; then stop.
fn model(body: &serde_json::Value) -> Reply {
    let obs = last_user_text(body);
    let task = first_user_text(body);
    let turn = body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").count();
    if turn > 0 {
        return webarena_reply("stop [done]");
    }
    if task.contains("two glass jars") {
        webarena_reply(&format!("type [{}] [2] [1]", id_of(&obs, "textbox 'Quantity'")))
    } else {
        webarena_reply(&format!("click [{}]", id_of(&obs, "button 'Place order'")))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webarena_click_and_type_enter_are_refused_by_their_controls_label() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let origin = GuardOrigin::start("guard.test").await;
    let ca_file = h.join("origin-ca.pem");
    std::fs::write(&ca_file, &origin.ca_pem).unwrap();
    let tasks_file = h.join("tasks.jsonl");
    std::fs::write(&tasks_file, tasks()).unwrap();
    let llm = FakeLlm::start(model).await;
    let out_dir = h.join("live");
    let args = RunArgs::new(&tasks_file, "live", &out_dir)
        .settle_ms(100)
        .model(&llm.api_base())
        .opt("--action-space", "webarena")
        .opt("--observation", "axtree")
        .opt("--max-steps", "3")
        .args(strs(&[
            "--upstream-ca",
            ca_file.to_str().unwrap(),
            "--resolve",
            &format!("guard.test:443:{}", origin.addr),
        ]))
        .build();
    let out = cli(h, args, vec![]).await;
    assert!(out.status.success(), "live: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(origin.orders.load(Ordering::SeqCst), 0, "no order reached the site");
    for id in ["Guard--click", "Guard--enter"] {
        let t = traj(&out_dir, id);
        let g = t.guard.as_ref().unwrap_or_else(|| panic!("{id} was not guarded: {:?}", t.steps));
        assert_eq!(g.writes.len(), 1, "{id}: {g:?}");
        assert_eq!(g.writes[0].step, 1, "{id}: {g:?}");
        assert!(
            g.writes[0].what.starts_with("POST https://guard.test/api/v2/tx")
                && g.writes[0].what.ends_with(r#"(purchase; label "Place order")"#),
            "{id}: {g:?}"
        );
    }
}
