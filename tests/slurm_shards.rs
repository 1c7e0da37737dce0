//! Sharded runs on a real Slurm: the demo tasks recorded live as a 3-shard array (scripts/slurm/submit.sh,
//! each shard with its own store) plus the dependent merge job, checked task by task against the same
//! tasks recorded on one machine; then the merged run replays step for step from the merged store with
//! the sites stopped.

use std::path::Path;

use trajectory::{Outcome, RunDir, Trajectory};

use crate::support::*;

fn traj(run: &Path, id: &str) -> Trajectory {
    RunDir::new(run)
        .task(id)
        .read_trajectory()
        .unwrap()
        .unwrap_or_else(|| panic!("no trajectory for {id} in {}", run.display()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_three_shard_slurm_array_and_its_merge_equal_a_single_machine_run() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let cluster = SlurmCluster::start(&h.join("slurm"));
    let mut sites = DemoSites::start(h).await;
    let tasks = h.join("demo_tasks.jsonl");
    std::fs::write(&tasks, demo::TASKS_JSONL).unwrap();
    let script = h.join("script");
    write_demo_script(&script, &tasks);
    let ids: Vec<String> = agent::tasks::load(&tasks).unwrap().into_iter().map(|t| t.id).collect();
    assert_eq!(ids.len(), 6);
    let policy = format!("trajectory:{}", script.display());
    let mut run_opts = strs(&[
        "--tasks",
        tasks.to_str().unwrap(),
        "--mode",
        "record",
        "--policy",
        &policy,
        "--settle-ms",
        "300",
    ]);
    run_opts.extend(sites.reach.iter().cloned());

    // One machine.
    let single = h.join("runs/single");
    let mut args = strs(&["run", "--out", single.to_str().unwrap()]);
    args.extend(run_opts.iter().cloned());
    let out = cli(h, args, vec![]).await;
    assert!(out.status.success(), "single run: {}", String::from_utf8_lossy(&out.stderr));

    // Three shards on Slurm and the merge after them.
    let root = h.join("runs/sharded");
    let submit = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm/submit.sh");
    let mut cmd = cluster.command("bash");
    cmd.arg(&submit).args(["--wait", "3"]).arg(&root).arg("--").args(&run_opts);
    cmd.env("WEBFREEZE_HOME", h).env("WEBFREEZE_BIN", bin());
    let t0 = std::time::Instant::now();
    let out = tokio::task::spawn_blocking(move || cmd.output().unwrap()).await.unwrap();
    eprintln!("[{:>6.1}s] slurm: 3 shards + merge", t0.elapsed().as_secs_f64());
    let logs: String = ["shard-0", "shard-1", "shard-2", "merge"]
        .iter()
        .map(|l| {
            format!(
                "--- {l}\n{}",
                std::fs::read_to_string(root.join(format!("logs/{l}.log"))).unwrap_or_default()
            )
        })
        .collect();
    assert!(
        out.status.success(),
        "submit.sh: {}{}\n{logs}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // Every shard ran its part on the scheduler, in its own store.
    let mut sizes = Vec::new();
    for i in 0..3 {
        let rf = RunDir::new(root.join(format!("shards/shard-{i}"))).read_run_file().unwrap();
        let s = rf.shard.clone().unwrap();
        assert_eq!((s.index, s.count, s.tasks_total), (i, 3, 6));
        sizes.push(rf.tasks.len());
        assert!(root.join(format!("stores/shard-{i}")).is_dir(), "shard {i} recorded into its own store");
        assert!(logs.contains(&format!("webfreeze shard {i}/3")), "{logs}");
    }
    assert_eq!(sizes, vec![2, 2, 2], "balanced shards");

    // The merged run equals the single-machine run, task by task and step by step.
    let merged = root.join("merged");
    let rf = RunDir::new(&merged).read_run_file().unwrap();
    assert_eq!(rf.shard, None);
    assert_eq!(rf.snapshots.as_deref(), Some("merged"));
    assert_eq!(rf.tasks.keys().cloned().collect::<Vec<_>>(), {
        let mut s = ids.clone();
        s.sort();
        s
    });
    for id in &ids {
        let (a, b) = (traj(&single, id), traj(&merged, id));
        assert_eq!(b.outcome, Outcome::Answered, "{id}: {b:?}");
        assert_eq!((&a.outcome, &a.answer, &a.final_url), (&b.outcome, &b.answer, &b.final_url), "{id}");
        assert_eq!(a.steps.len(), b.steps.len(), "{id}");
        for (sa, sb) in a.steps.iter().zip(&b.steps) {
            assert_eq!((&sa.url_after, &sa.action), (&sb.url_after, &sb.action), "{id} step {}", sa.n);
        }
        assert_eq!(b.snapshot.as_deref(), Some(format!("merged/{id}").as_str()));
    }

    // The merged snapshots are whole: with the sites stopped, the merged run replays step for step.
    sites.stop();
    let replayed = replay_step_for_step(h, &tasks, &merged, &h.join("runs/replayed"), ids.len()).await;
    for id in &ids {
        for (sm, sr) in traj(&merged, id).steps.iter().zip(&replayed[id].steps) {
            assert_eq!(sm.screenshot_blake3, sr.screenshot_blake3, "{id} step {}", sm.n);
        }
    }
}
