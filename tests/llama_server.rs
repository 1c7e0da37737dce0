//! The agent against a real OpenAI-compatible server nobody here wrote (llama-cpp-python's server with
//! Gemma 3 270M), on the demo sites, in both action spaces: what is checked is the protocol, not the
//! model's skill. Every request is accepted, every reply is recorded, text-only turns reach the prompt
//! (the server's own prompt token counts), roles alternate; then each run is re-executed from its run
//! directory alone and the WebArena one re-scored offline.

use std::path::Path;

use trajectory::{Outcome, RunDir};

use crate::support::*;

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

/// The server's prompt token count for the system prompt alone.
fn system_only_tokens(server: &LlamaServer, system: &str) -> u64 {
    let r = server.chat(&serde_json::json!({
        "model": "gemma", "max_tokens": 1,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": "."}],
    }));
    r["usage"]["prompt_tokens"].as_u64().unwrap()
}

/// The protocol checks on one recorded run: no task errored (every request was answered 200), every
/// step's reply is recorded with the server's usage, the transcript's roles alternate, and (given the
/// system prompt's own count) step 1's prompt holds far more than the system prompt: the observation
/// arrived as text.
fn check_run(run: &Path, system_tokens: Option<u64>) {
    let rd = RunDir::new(run);
    let trajectories = rd.trajectories().unwrap();
    assert!(!trajectories.is_empty());
    for (dir, t) in trajectories {
        assert_ne!(t.outcome, Outcome::Error, "{}: {:?}", t.task_id, t.error);
        assert!(!t.steps.is_empty(), "{}", t.task_id);
        let messages = json(&dir.path().join("messages.json"));
        let messages = messages["steps"].as_array().unwrap();
        assert_eq!(messages.len(), t.steps.len(), "{}: a step without its model call", t.task_id);
        for (m, s) in messages.iter().zip(&t.steps) {
            assert_eq!(m["reply"].as_str(), Some(s.raw_reply.as_str()), "{}", t.task_id);
            assert!(m["usage"]["completion_tokens"].as_u64().unwrap() > 0, "{m}");
        }
        let first = messages[0]["usage"]["prompt_tokens"].as_u64().unwrap();
        assert!(first > 0, "{}", t.task_id);
        // The figures docs/BENCHMARKS.md quotes (tokens and seconds per step).
        let per = |k: &str| {
            messages.iter().map(|m| m["usage"][k].as_u64().unwrap_or(0)).sum::<u64>() / messages.len() as u64
        };
        let ms = messages.iter().map(|m| m["ms"].as_u64().unwrap_or(0)).sum::<u64>() / messages.len() as u64;
        eprintln!(
            "figures {}: {} steps, {} prompt + {} completion tokens per step, {:.1} s per model call",
            t.task_id,
            messages.len(),
            per("prompt_tokens"),
            per("completion_tokens"),
            ms as f64 / 1000.0
        );
        let Some(system_tokens) = system_tokens else { continue };
        assert!(
            first > system_tokens + 100,
            "{}: step 1 prompt {first} tokens, the system prompt alone {system_tokens}: the observation did not reach the prompt",
            t.task_id
        );
        let transcript = json(&dir.path().join("interact_messages.json"));
        let roles: Vec<&str> =
            transcript.as_array().unwrap().iter().skip(1).map(|m| m["role"].as_str().unwrap()).collect();
        assert!(roles.windows(2).all(|w| w[0] != w[1]), "{}: roles {roles:?}", t.task_id);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_model_server_drives_both_action_spaces_then_replays_and_rescores() {
    let server = LlamaServer::start();
    let home = tempfile::tempdir().unwrap();
    let sites = DemoSites::start(home.path()).await;
    let model = ["--api-base", &server.api_base(), "--api-key-env", "NO_SUCH_KEY_VAR", "--model", "gemma"];
    let budget = ["--max-steps", "2", "--max-tokens", "48", "--settle-ms", "200", "--api-attempts", "1"];

    // WebVoyager format, Set-of-Marks (the screenshot goes as an image part; the model ignores it).
    let wv_tasks = home.path().join("wv.jsonl");
    std::fs::write(&wv_tasks, demo::TASKS_JSONL.lines().next().unwrap()).unwrap();
    // WebArena format, accessibility tree: text only, the case llama.cpp's string templates dropped.
    let wa_tasks = home.path().join("wa.json");
    std::fs::write(
        &wa_tasks,
        serde_json::json!([{
            "sites": ["shopping"], "task_id": 1, "require_login": false, "storage_state": null,
            "start_url": "__SHOPPING__/", "geolocation": null, "require_reset": false,
            "intent": "What is the price of the Red Mug?",
            "eval": {"eval_types": ["string_match", "program_html"],
                     "reference_answers": {"must_include": ["$"]}, "reference_url": "", "url_note": "",
                     "program_html": [{"url": "last", "locator": "document.title",
                                       "required_contents": {"must_include": ["Demo"]}}]},
        }])
        .to_string(),
    )
    .unwrap();
    let record = |tasks: &Path, out: &str, extra: &[&str]| {
        RunArgs::new(tasks, "record", &home.path().join(out))
            .args(model)
            .args(budget)
            .args(extra)
            .args(&sites.reach)
            .build()
    };
    let out = cli(home.path(), record(&wv_tasks, "wv", &[]), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let wa_extra =
        ["--site", "SHOPPING=https://shop.test", "--action-space", "webarena", "--observation", "axtree"];
    let out = cli(home.path(), record(&wa_tasks, "wa", &wa_extra), vec![]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // With a screenshot the user turn must be a list of parts, which this text-only server's llama-2
    // template renders as nothing: only the text-only run can show its observation in the prompt count.
    check_run(&home.path().join("wv"), None);
    check_run(
        &home.path().join("wa"),
        Some(system_only_tokens(&server, agent::policy::system_prompt(agent::action::ActionSpace::WebArena))),
    );

    // Re-executed from the run directories alone, sealed: task for task, step for step.
    drop(server);
    let mut sites = sites;
    sites.stop();
    for (tasks, run, site) in [(&wv_tasks, "wv", None), (&wa_tasks, "wa", Some("SHOPPING=https://shop.test"))]
    {
        let original = home.path().join(run);
        let again = home.path().join(format!("{run}-again"));
        let mut a = RunArgs::new(tasks, "replay", &again)
            .opt("--policy", format!("trajectory:{}", original.display()));
        if let Some(s) = site {
            a = a.opt("--site", s);
        }
        let out = cli(home.path(), a.build(), vec![]).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let (o, r) =
            (RunDir::new(&original).trajectories().unwrap(), RunDir::new(&again).trajectories().unwrap());
        assert_eq!(o.len(), r.len());
        for ((_, a), (_, b)) in o.iter().zip(&r) {
            assert_eq!((a.outcome, a.steps.len()), (b.outcome, b.steps.len()), "{}", a.task_id);
            for (x, y) in a.steps.iter().zip(&b.steps) {
                assert_eq!(
                    (&x.url_before, &x.url_after),
                    (&y.url_before, &y.url_after),
                    "{} step {}",
                    a.task_id,
                    x.n
                );
            }
        }
    }
    let out = cli(
        home.path(),
        vec!["eval".into(), home.path().join("wa").display().to_string(), "--rescore".into()],
        vec![],
    )
    .await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let eval = json(&home.path().join("wa/eval.json"));
    assert_eq!(eval["unscored"], serde_json::json!([]), "{eval}");
    assert_eq!(eval["tasks"][0]["rescored"], true, "{eval}");
}
