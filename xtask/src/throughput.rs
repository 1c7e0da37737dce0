//! `cargo xtask bench throughput [--copies C] [--jobs 1,2,4] [--slurm-bin PATH] [--shards 1,3]`: tasks
//! per hour for the demo tasks in replay on this machine, and where a task's time goes.
//!
//! The demo's 6 tasks are copied C times (distinct ids, same scripted trajectories), recorded once live
//! on the demo sites through `session::run_tasks`, then replayed with the `trajectory:` policy at each
//! `--jobs` value (in process). With `--slurm-bin` (the `webfreeze` binary, e.g.
//! `$CARGO_TARGET_DIR/release/webfreeze`) the same replay also runs as a Slurm array of 1 and 3 shards
//! (scripts/slurm/submit.sh, one CPU per shard, `--jobs 1` each) on a single-node cluster started
//! by scripts/slurm/local-cluster.sh (root, slurm-wlm and munge needed), timed from submission to the
//! end of the merge.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent::runner::AgentConfig;
use anyhow::{bail, Context as _};
use clock::{Clock, SystemClock};
use proxy::CertificateAuthority;
use session::{PolicySpec, ProxyMode, RunOptions};
use snapshots::Store;
use trajectory::{RunDir, TaskState};

/// Mean milliseconds per task.
#[derive(Default)]
struct Split {
    tasks: usize,
    total: f64,
    browser: f64,
    observe: f64,
    decide: f64,
    act: f64,
    /// Steps taken, and those that reproduced the recording's URL and screenshot.
    steps: usize,
    reproduced: usize,
}

impl Split {
    fn of(run: &Path) -> anyhow::Result<Split> {
        let mut s = Split::default();
        for (_, t) in RunDir::new(run).trajectories()? {
            s.tasks += 1;
            s.total += t.duration_ms as f64;
            s.browser += t.browser_start_ms as f64;
            s.steps += t.steps.len();
            s.reproduced += t.reproduced_steps.unwrap_or(0) as usize;
            for st in &t.steps {
                s.observe += st.timings.observe_ms as f64;
                s.decide += st.timings.decide_ms as f64;
                s.act += st.timings.act_ms as f64;
            }
        }
        let n = s.tasks.max(1) as f64;
        for v in [&mut s.total, &mut s.browser, &mut s.observe, &mut s.decide, &mut s.act] {
            *v /= n;
        }
        Ok(s)
    }

    fn row(&self, what: &str, wall: Duration) -> String {
        let per_hour = self.tasks as f64 / wall.as_secs_f64() * 3600.0;
        let other = (self.total - self.browser - self.observe - self.decide - self.act).max(0.0);
        format!(
            "{what:<22} {:>6} {:>8.1} {:>10.0} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>9.0} {:>5}/{:<5}",
            self.tasks,
            wall.as_secs_f64(),
            per_hour,
            self.total,
            self.browser,
            self.observe,
            self.decide,
            self.act,
            other,
            self.reproduced,
            self.steps
        )
    }
}

fn header() -> String {
    format!(
        "{:<22} {:>6} {:>8} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>11}",
        "run",
        "tasks",
        "wall s",
        "tasks/h",
        "task ms",
        "browser",
        "observe",
        "model",
        "act",
        "other",
        "reproduced"
    )
}

/// The machine's busy CPU time since boot, in USER_HZ ticks (10 ms): `/proc/stat`'s first line, all but
/// idle and iowait.
fn machine_busy_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let f: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    f.iter().enumerate().filter(|(i, _)| *i != 3 && *i != 4).map(|(_, v)| v).sum()
}

/// This process's CPU time (user and system), in USER_HZ ticks.
fn own_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of the file; after the command's closing parenthesis they are the 12th and 13th.
    f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
}

fn list(args: &[String], name: &str, default: &[usize]) -> Vec<usize> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let copies: usize = crate::arg(args, "--copies", 3);
    let jobs_list = list(args, "--jobs", &[1, 2, 4]);
    let shards_list = list(args, "--shards", &[1, 3]);
    let slurm_bin: String = crate::arg(args, "--slurm-bin", String::new());
    let settle_ms = agent::runner::DEFAULT_SETTLE_MS.to_string();
    let work = std::env::temp_dir().join(format!("webfreeze-bench-throughput-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
    let now = time::OffsetDateTime::now_utc();
    let mut sites = demo::RunningSites::start(&work, now)?;
    let mut scripts: std::collections::BTreeMap<String, Vec<String>> =
        serde_json::from_str(demo::SCRIPTS_JSON)?;
    let base_tasks = agent::tasks::parse(demo::TASKS_JSONL, "demo tasks").context("demo tasks")?;
    let mut tasks = Vec::new();
    let mut pairs = Vec::new();
    for t in &base_tasks {
        let replies = scripts.remove(&t.id).context("a demo task without a script")?;
        for c in 0..copies {
            let task = agent::tasks::Task { id: format!("{}-c{c}", t.id), ..t.clone() };
            pairs.push((task.clone(), replies.clone()));
            tasks.push(task);
        }
    }
    let script = work.join("script");
    agent::policy::write_script(&script, &pairs)?;
    let tasks_file = work.join("tasks.jsonl");
    let jsonl: String = tasks
        .iter()
        .map(|t| {
            serde_json::json!({"web_name": t.web_name, "id": t.id, "ques": t.question, "web": t.start_url})
                .to_string()
                + "\n"
        })
        .collect();
    std::fs::write(&tasks_file, jsonl)?;

    let chrome = agent::browser::find_chrome(None)?;
    let mut agent = AgentConfig::new(chrome.clone());
    // The default quiet period, as a user's run gets it (it was 300 ms before the event-driven settle).
    agent.settle_quiet = Duration::from_millis(agent::runner::DEFAULT_SETTLE_MS);
    agent.wait = Duration::from_millis(1000);
    agent.search_url = "https://shop.test/".into();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let home = work.join("home");
    let ca = Arc::new(CertificateAuthority::load_or_init(&home.join("ca"), now)?);
    let base = RunOptions {
        jobs: 2,
        tasks_file: tasks_file.display().to_string(),
        ..RunOptions::scripted(&script, agent, ca, sites.proxy_config(), clock)
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let run = |what: &str, opts: RunOptions| -> anyhow::Result<Duration> {
        eprintln!("bench throughput: {what} ({} tasks)", tasks.len());
        let cpu0 = (machine_busy_ticks(), own_ticks());
        let t0 = Instant::now();
        let out =
            rt.block_on(session::run_tasks(opts, tasks.clone(), std::future::pending(), Arc::new(())))?;
        let wall = t0.elapsed();
        let per_task = |ticks: u64| ticks as f64 * 10.0 / tasks.len() as f64;
        eprintln!(
            "bench throughput: {what}: CPU per task {:.0} ms, of which this process (proxies, agent) {:.0} ms",
            per_task(machine_busy_ticks().saturating_sub(cpu0.0)),
            per_task(own_ticks().saturating_sub(cpu0.1))
        );
        let failed: Vec<_> =
            out.run_file.tasks.iter().filter(|(_, s)| s.status != TaskState::Answered).collect();
        if !failed.is_empty() {
            bail!("{what}: tasks did not answer: {failed:?}");
        }
        Ok(wall)
    };
    let rec = work.join("rec");
    let store_dir = home.join("store");
    let rec_wall = {
        let mode = ProxyMode::record(Store::open(&store_dir)?, &rec)?;
        run("record (live, jobs 2)", RunOptions { out: rec.clone(), mode, ..base.clone() })?
    };
    sites.stop();
    let mut rows = vec![Split::of(&rec)?.row("record, jobs 2", rec_wall)];
    let policy = PolicySpec::Trajectory(rec.clone());
    let mut per_hour_1 = None;
    let auto = session::auto_jobs_here();
    let mut jobs_list = jobs_list;
    if !jobs_list.contains(&auto) {
        jobs_list.push(auto);
    }
    // (jobs, fresh tasks/h, warm tasks/h, the warm pool's stats)
    let mut pairs = Vec::new();
    for &jobs in &jobs_list {
        let mut per_hour = [0.0; 2];
        let mut warm_stats = agent::browser::PoolStats::default();
        for (i, warm) in [false, true].into_iter().enumerate() {
            let what = format!("replay, jobs {jobs}{}", if warm { ", warm" } else { "" });
            let out = work.join(format!("replay-j{jobs}{}", if warm { "-warm" } else { "" }));
            let mode = ProxyMode::Replay {
                store: Store::open_read_only(&store_dir)?,
                run: "rec".into(),
                on_miss: session::MissPolicy::NotFound,
                frozen_web: session::FrozenWeb::recorded(),
            };
            let mut agent = base.agent.clone();
            let pool = warm.then(|| agent::browser::BrowserPool::new(agent::browser::PoolOptions::default()));
            agent.browsers = pool.clone();
            let wall = run(
                &what,
                RunOptions { out: out.clone(), mode, policy: policy.clone(), jobs, agent, ..base.clone() },
            )?;
            per_hour[i] = tasks.len() as f64 / wall.as_secs_f64() * 3600.0;
            if jobs == 1 && !warm {
                per_hour_1 = Some(tasks.len() as f64 / wall.as_secs_f64());
            }
            let split = Split::of(&out)?;
            if split.reproduced != split.steps {
                bail!("{what}: {} of {} steps reproduced the recording", split.reproduced, split.steps);
            }
            rows.push(split.row(&what, wall));
            if let Some(p) = pool {
                warm_stats = p.stats();
            }
        }
        pairs.push((jobs, per_hour[0], per_hour[1], warm_stats));
    }
    let mut slurm_rows = Vec::new();
    if !slurm_bin.is_empty() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let cluster = work.join("slurm");
        let start = Command::new("bash")
            .arg(root.join("scripts/slurm/local-cluster.sh"))
            .arg("start")
            .arg(&cluster)
            .output()?;
        if !start.status.success() {
            bail!("starting Slurm: {}", String::from_utf8_lossy(&start.stderr));
        }
        let conf = cluster.join("slurm.conf");
        let result = (|| -> anyhow::Result<()> {
            for &n in &shards_list {
                let out = work.join(format!("slurm-{n}"));
                eprintln!("bench throughput: replay as {n} Slurm shard(s)");
                let t0 = Instant::now();
                let o = Command::new("bash")
                    .arg(root.join("scripts/slurm/submit.sh"))
                    .args(["--wait", &n.to_string()])
                    .arg(&out)
                    .arg("--")
                    .args([
                        "--store",
                        store_dir.to_str().unwrap_or_default(),
                        "--tasks",
                        tasks_file.to_str().unwrap_or_default(),
                    ])
                    .args([
                        "--mode",
                        "replay",
                        "--snapshots",
                        "rec",
                        "--jobs",
                        "1",
                        "--settle-ms",
                        &settle_ms,
                        "--wait-ms",
                        "1000",
                    ])
                    .args([
                        "--search-url",
                        "https://shop.test/",
                        "--policy",
                        &format!("trajectory:{}", rec.display()),
                    ])
                    .env("SLURM_CONF", &conf)
                    .env("WEBFREEZE_HOME", &home)
                    .env("WEBFREEZE_BIN", &slurm_bin)
                    .output()?;
                let wall = t0.elapsed();
                if !o.status.success() {
                    bail!(
                        "{n} shard(s): {}{}",
                        String::from_utf8_lossy(&o.stdout),
                        String::from_utf8_lossy(&o.stderr)
                    );
                }
                slurm_rows.push(Split::of(&out.join("merged"))?.row(&format!("slurm, {n} shard(s)"), wall));
            }
            Ok(())
        })();
        let _ = Command::new("bash")
            .arg(root.join("scripts/slurm/local-cluster.sh"))
            .arg("stop")
            .arg(&cluster)
            .output();
        result?;
    }
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    println!(
        "throughput: {} demo tasks ({} x {copies}) on {cores} cores; per task, mean ms",
        tasks.len(),
        base_tasks.len()
    );
    println!("{}", header());
    for r in rows.iter().chain(&slurm_rows) {
        println!("{r}");
    }
    println!("task ms: a task's mean wall time; then its split: browser start, observations, model (0 with the trajectory policy), actions incl. the settle wait, and the rest (proxy start, snapshot open, browser close, writing the trajectory)");
    println!("reproduced: steps whose URL and screenshot matched the recording's, of all steps (the bench fails unless all do)");
    println!("warm browsers (a kept Chromium per job, a fresh context per task, replaced after 50 tasks or 1 GiB):");
    for (jobs, fresh, warm, st) in &pairs {
        println!(
            "  jobs {jobs}{}: {warm:.0} tasks/h warm against {fresh:.0} fresh = {:.2}x; {} browser process(es) started for {} tasks; peak memory per browser (PSS, after a task) {:.0} MiB",
            if *jobs == auto { " (auto)" } else { "" },
            warm / fresh.max(f64::MIN_POSITIVE),
            st.launched,
            st.leases,
            st.peak_memory_kib as f64 / 1024.0
        );
    }
    if let Some((_, fresh, warm, _)) = pairs.iter().find(|p| p.0 == auto) {
        println!(
            "target: warm at --jobs auto ({auto}) >= 3x fresh at --jobs auto: {:.2}x, {}",
            warm / fresh.max(f64::MIN_POSITIVE),
            if *warm >= 3.0 * fresh { "met" } else { "NOT met" }
        );
    }
    if let Some(p1) = per_hour_1 {
        println!(
            "replay jobs 1: {:.0} tasks/h (the baseline for the speed-ups in docs/BENCHMARKS.md)",
            p1 * 3600.0
        );
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
