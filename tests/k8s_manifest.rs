//! The Kubernetes Indexed Job in scripts/k8s: what can be checked without a cluster. Each pod's shell
//! command is run as Kubernetes would run it (bash -c, with JOB_COMPLETION_INDEX set, the volume path
//! replaced by a temporary directory) against a stand-in `webfreeze` that records its arguments; the
//! shards it asks for must be exactly 0..completions of `completions`, and together cover the task list.
//! Not checked here: that a cluster schedules it, the image, the volume.

use std::path::{Path, PathBuf};

use session::Shard;

fn manifest(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/k8s").join(name)).unwrap()
}

/// `key: value` (first occurrence, any indentation).
fn field(yaml: &str, key: &str) -> String {
    yaml.lines()
        .find_map(|l| l.trim().strip_prefix(&format!("{key}:")).map(|v| v.trim().to_string()))
        .unwrap_or_else(|| panic!("no {key} in the manifest"))
}

/// The block scalar after `args:` / `- |`: the container's shell script.
fn script(yaml: &str) -> String {
    let lines: Vec<&str> = yaml.lines().collect();
    let start = lines.iter().position(|l| l.trim() == "- |").expect("an args block `- |`");
    let indent = |l: &str| l.len() - l.trim_start().len();
    let base = indent(lines[start]);
    lines[start + 1..]
        .iter()
        .take_while(|l| l.trim().is_empty() || indent(l) > base)
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `script` as a pod would run it, with a stand-in `webfreeze` that writes its arguments to `args_file`.
fn pod(script: &str, volume: &Path, index: Option<u32>, args_file: &Path) -> std::process::Command {
    let fake = volume.join("bin");
    std::fs::create_dir_all(&fake).unwrap();
    std::fs::write(fake.join("webfreeze"), "#!/usr/bin/env bash\nprintf '%s\\n' \"$@\" > \"$ARGS_FILE\"\n")
        .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(fake.join("webfreeze"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = script.replace("/runs", volume.to_str().unwrap());
    let mut cmd = std::process::Command::new("bash");
    cmd.args(["-c", &script])
        .env("PATH", format!("{}:{}", fake.display(), std::env::var("PATH").unwrap_or_default()))
        .env("ARGS_FILE", args_file);
    match index {
        Some(i) => cmd.env("JOB_COMPLETION_INDEX", i.to_string()),
        None => cmd.env_remove("JOB_COMPLETION_INDEX"),
    };
    cmd
}

fn run_pod(script: &str, volume: &Path, index: Option<u32>, args_file: &Path) -> Vec<String> {
    let out = pod(script, volume, index, args_file).output().unwrap();
    assert!(out.status.success(), "pod script failed: {}", String::from_utf8_lossy(&out.stderr));
    std::fs::read_to_string(args_file).unwrap().lines().map(str::to_string).collect()
}

fn value_after<'a>(args: &'a [String], flag: &str) -> &'a str {
    let i = args.iter().position(|a| a == flag).unwrap_or_else(|| panic!("no {flag} in {args:?}"));
    &args[i + 1]
}

#[test]
fn the_indexed_job_runs_every_shard_once_and_the_merge_joins_them() {
    let yaml = manifest("shards-job.yaml");
    assert_eq!(field(&yaml, "completionMode"), "Indexed");
    let n: u32 = field(&yaml, "completions").parse().unwrap();
    assert!(n >= 1);
    let volume = tempfile::tempdir().unwrap();
    let tasks: Vec<agent::tasks::Task> = (0..50)
        .map(|i| agent::tasks::Task {
            web_name: "S".into(),
            id: format!("S--{i}"),
            question: "q".into(),
            start_url: "https://s.test/".into(),
            benchmark: Default::default(),
            setup: Default::default(),
        })
        .collect();
    let mut covered = std::collections::BTreeSet::new();
    let mut outs: Vec<PathBuf> = Vec::new();
    for i in 0..n {
        let args = run_pod(&script(&yaml), volume.path(), Some(i), &volume.path().join(format!("args-{i}")));
        assert!(args.contains(&"run".to_string()), "{args:?}");
        let shard: Shard = value_after(&args, "--shard").parse().unwrap();
        assert_eq!(
            (shard.index, shard.count),
            (i, n),
            "pod {i} runs shard {shard}: --shard must say /{n}, as completions does"
        );
        let out = PathBuf::from(value_after(&args, "--out"));
        assert!(out.ends_with(format!("shard-{i}")), "{}", out.display());
        std::fs::create_dir_all(&out).unwrap();
        outs.push(out);
        let (mine, _) = shard.select(tasks.clone());
        for t in mine {
            assert!(covered.insert(t.id.clone()), "{} in two pods", t.id);
        }
    }
    assert_eq!(covered.len(), tasks.len(), "the pods together run every task");
    // A pod without its index is an error, not shard 0 run n times.
    let args_file = volume.path().join("args-unset");
    let unset = pod(&script(&yaml), volume.path(), None, &args_file).output().unwrap();
    assert!(
        !unset.status.success() && !args_file.exists(),
        "the shard script ran without JOB_COMPLETION_INDEX"
    );

    let merge = manifest("merge-job.yaml");
    let args = run_pod(&script(&merge), volume.path(), None, &volume.path().join("args-merge"));
    assert_eq!(args[0], "merge");
    let given: Vec<PathBuf> =
        args.iter().filter(|a| a.contains("/shards/shard-")).map(PathBuf::from).collect();
    assert_eq!(given, outs, "the merge gets every shard directory");
    assert!(value_after(&args, "--out").ends_with("/merged"));
}

/// Run a pod script for real: `/work` is the pod's own directory (an emptyDir: pods share nothing),
/// `/config` the task file's, `webfreeze` the real binary.
fn run_real_pod(script: &str, pod_dir: &Path, config: &Path, env: &[(&str, String)]) {
    let bin_dir = pod_dir.join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let _ = std::os::unix::fs::symlink(crate::support::bin(), bin_dir.join("webfreeze"));
    let script =
        script.replace("/work", pod_dir.to_str().unwrap()).replace("/config", config.to_str().unwrap());
    let mut cmd = std::process::Command::new("bash");
    cmd.args(["-c", &script])
        .env("PATH", format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default()))
        .env("WEBFREEZE_HOME", pod_dir.join("home"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "pod in {} failed:\n{}",
        pod_dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn record_pods_push_bundles_the_merge_pod_joins_them_and_another_lab_replays_the_result() {
    use crate::support::*;
    let s3 = S3Server::start();
    s3.create_bucket("webfreeze-runs");
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let mut sites = DemoSites::start(t).await;
    let config = t.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("tasks.jsonl"), demo::TASKS_JSONL).unwrap();
    let replies = t.join("script");
    write_demo_script(&replies, &config.join("tasks.jsonl"));
    let mut env: Vec<(&str, String)> = vec![
        ("BUNDLE_URL", "s3://webfreeze-runs/test-run".to_string()),
        ("AWS_ACCESS_KEY_ID", "test".into()),
        ("AWS_SECRET_ACCESS_KEY", "test".into()),
        ("AWS_ENDPOINT_URL", s3.endpoint.clone()),
        ("WEBFREEZE_POLICY", format!("trajectory:{}", replies.display())),
        ("WEBFREEZE_RUN_ARGS", format!("--settle-ms 300 {}", sites.reach.join(" "))),
        ("SHARDS", "3".into()),
    ];
    let shards = manifest("record-shards-job.yaml");
    let n: u32 = field(&shards, "completions").parse().unwrap();
    for i in 0..n {
        let mut e = env.clone();
        e.push(("JOB_COMPLETION_INDEX", i.to_string()));
        let (s, pod, cfg) = (script(&shards), t.join(format!("pod-{i}")), config.clone());
        tokio::task::spawn_blocking(move || run_real_pod(&s, &pod, &cfg, &e)).await.unwrap();
    }
    sites.stop();
    let merge = script(&manifest("record-merge-job.yaml"));
    let merge_pod = t.join("merge-pod");
    {
        let (e, pod, cfg) = (env.clone(), merge_pod.clone(), config.clone());
        tokio::task::spawn_blocking(move || run_real_pod(&merge, &pod, &cfg, &e)).await.unwrap();
    }
    let merged = trajectory::RunDir::new(merge_pod.join("merged")).read_run_file().unwrap();
    assert_eq!(merged.tasks.len(), 6);
    assert!(merged.tasks.values().all(|s| s.status == trajectory::TaskState::Answered), "{merged:?}");

    // Another lab: pull the merged bundle by name, import it into a fresh home, replay with the sites down.
    let lab = t.join("lab-b");
    std::fs::create_dir_all(&lab).unwrap();
    env.retain(|(k, _)| k.starts_with("AWS_"));
    let envs: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let file = lab.join("merged.wfb");
    let ok = |o: std::process::Output| assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    ok(run_cli_env(
        &lab,
        &["bundle", "pull", "s3://webfreeze-runs/test-run", "merged", "--out", file.to_str().unwrap()],
        &envs,
    ));
    let run_dir = lab.join("runs/merged");
    ok(run_cli_env(
        &lab,
        &["bundle", "import", file.to_str().unwrap(), "--run-dir", run_dir.to_str().unwrap()],
        &envs,
    ));
    replay_step_for_step(&lab, &config.join("tasks.jsonl"), &run_dir, &lab.join("runs/replayed"), 6).await;
}
