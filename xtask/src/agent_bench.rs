//! `cargo xtask bench agent [--tasks N]`: per-step agent overhead in replay mode (observation = labels +
//! screenshot + element list; action incl. the page settling), median over 10-step runs, against the same
//! trajectory live on the demo sites in the same run (the peer), and browser start time per task.
//!
//! It records N copies of a 10-step scripted task with the release `webfreeze run`, replays them with the
//! `trajectory:` policy, and runs the script live again, then reads the figures from the trajectories.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use anyhow::{bail, Context as _};

const SCRIPT: &[&str] = &[
    "Thought: look down\nAction: Scroll [WINDOW]; down",
    "Thought: back up\nAction: Scroll [WINDOW]; up",
    "Thought: search\nAction: Type [0]; kettle",
    "Thought: open it\nAction: Click [3]",
    "Thought: back\nAction: GoBack",
    "Thought: the promotion\nAction: Click [2]",
    "Thought: home\nAction: Click [0]",
    "Thought: search again\nAction: Type [0]; mug",
    "Thought: open it\nAction: Click [3]",
    "Thought: done\nAction: ANSWER; 48",
];

fn median(mut v: Vec<u64>) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    v[v.len() / 2]
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

fn write_script(dir: &Path, tasks: &[agent::tasks::Task]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(
        dir.join("run.json"),
        r#"{"v":1,"webfreeze":"bench","mode":"script","policy":"script","tasks_file":"","chrome":"","config":{},"started_ms":0,"tasks":{}}"#,
    )?;
    let script: Vec<String> = SCRIPT.iter().map(|s| s.to_string()).collect();
    let pairs: Vec<_> = tasks.iter().map(|t| (t.clone(), script.clone())).collect();
    agent::policy::write_script(dir, &pairs)?;
    Ok(())
}

struct Figures {
    /// Task wall time / steps (browser start and the first page load excluded).
    step: u64,
    observe: u64,
    act: u64,
    start: u64,
    steps: usize,
    reproduced: usize,
}

fn figures(run: &Path, ids: &[String]) -> anyhow::Result<Figures> {
    let (mut observe, mut act, mut start, mut per_step) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut steps, mut reproduced) = (0, 0);
    for id in ids {
        let t: serde_json::Value =
            serde_json::from_slice(&std::fs::read(run.join(id).join("trajectory.json"))?)?;
        if t["outcome"] != "answered" {
            bail!("{id} in {} did not answer: {}", run.display(), t["error"]);
        }
        let b = t["browser_start_ms"].as_u64().unwrap_or(0);
        start.push(b);
        let n = t["steps"].as_array().map(Vec::len).unwrap_or(1).max(1) as u64;
        per_step.push(t["duration_ms"].as_u64().unwrap_or(0).saturating_sub(b) / n);
        for s in t["steps"].as_array().into_iter().flatten() {
            steps += 1;
            observe.push(s["timings"]["observe_ms"].as_u64().unwrap_or(0));
            // The last step answers: no action to time.
            if s["action"].as_str().is_some_and(|a| !a.starts_with("ANSWER")) {
                act.push(s["timings"]["act_ms"].as_u64().unwrap_or(0));
            }
            if s["reproduced"]["url"] == true && s["reproduced"]["screenshot"] == true {
                reproduced += 1;
            }
        }
    }
    Ok(Figures {
        step: median(per_step),
        observe: median(observe),
        act: median(act),
        start: median(start),
        steps,
        reproduced,
    })
}

pub fn run(tasks: usize) -> anyhow::Result<()> {
    let status = Command::new("cargo").args(["build", "-q", "--release", "--bin", "webfreeze"]).status()?;
    if !status.success() {
        bail!("cargo build --release failed");
    }
    let wf = target_dir().join("release/webfreeze");
    let work = tempfile_dir()?;
    let home = work.join("home");
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
    let now = time::OffsetDateTime::now_utc();
    let sites = Arc::new(demo::Sites::new(&work.join("sites-ca"), now)?);
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
    let addr = listener.local_addr()?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    rt.spawn(sites.clone().serve(listener, async move {
        let _ = rx.await;
    }));
    std::fs::write(work.join("ca.pem"), sites.ca_pem())?;
    let ids: Vec<String> = (0..tasks).map(|i| format!("Bench--{i}")).collect();
    let tasks: Vec<agent::tasks::Task> = ids
        .iter()
        .map(|id| agent::tasks::Task {
            web_name: "Demo Shop".into(),
            id: id.clone(),
            ques: "How many reviews does the Red Mug have?".into(),
            web: "https://shop.test/".into(),
        })
        .collect();
    let mut jsonl = String::new();
    for t in &tasks {
        jsonl.push_str(
            &serde_json::json!({"web_name": t.web_name, "id": t.id, "ques": t.ques, "web": t.web})
                .to_string(),
        );
        jsonl.push('\n');
    }
    let task_file = work.join("tasks.jsonl");
    std::fs::write(&task_file, jsonl)?;
    let script = work.join("script");
    write_script(&script, &tasks)?;
    let mut reach = vec!["--upstream-ca".to_string(), work.join("ca.pem").display().to_string()];
    for r in demo::resolve_args(addr) {
        reach.push("--resolve".into());
        reach.push(r);
    }
    let run = |mode: &str, policy: String, out: &Path, extra: &[String]| -> anyhow::Result<()> {
        eprintln!("bench agent: {mode} run of {} x 10 steps", ids.len());
        let st = Command::new(&wf)
            .args(["run", "--tasks", task_file.to_str().unwrap_or(""), "--mode", mode, "--policy", &policy])
            .args(["--out", out.to_str().unwrap_or(""), "--settle-ms", "300"])
            .args(extra)
            .env("WEBFREEZE_HOME", &home)
            .status()
            .context("running webfreeze")?;
        if !st.success() {
            bail!("webfreeze run --mode {mode} failed");
        }
        Ok(())
    };
    let (rec, rep, live) = (work.join("rec"), work.join("rep"), work.join("live"));
    let script_policy = format!("trajectory:{}", script.display());
    run("record", script_policy.clone(), &rec, &reach)?;
    run("replay", format!("trajectory:{}", rec.display()), &rep, &[])?;
    run("live", script_policy, &live, &reach)?;
    let _ = tx.send(());
    let (r, p, l) = (figures(&rec, &ids)?, figures(&rep, &ids)?, figures(&live, &ids)?);
    println!("agent overhead per step (median over {} tasks x 10 steps; ms)", ids.len());
    println!("{:<8} {:>10} {:>10} {:>12} {:>14}", "mode", "observe", "action", "whole step", "browser start");
    for (name, f) in [("live", &l), ("record", &r), ("replay", &p)] {
        println!("{name:<8} {:>10} {:>10} {:>12} {:>14}", f.observe, f.act, f.step, f.start);
    }
    let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
    println!(
        "replay / live: observe {:.2}x, action {:.2}x, whole step {:.2}x; replay reproduced {}/{} steps (URL + screenshot hash)",
        ratio(p.observe, l.observe),
        ratio(p.act, l.act),
        ratio(p.step, l.step),
        p.reproduced,
        p.steps
    );
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn tempfile_dir() -> anyhow::Result<PathBuf> {
    let d = std::env::temp_dir().join(format!("webfreeze-bench-agent-{}", std::process::id()));
    std::fs::create_dir_all(&d)?;
    Ok(d)
}
