//! A recorded run leaves the machine as one bundle and replays step for step from a fresh store on
//! another WEBFREEZE_HOME, with the sites stopped.

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundled_run_replays_step_for_step_in_another_home() {
    let tmp = tempfile::tempdir().unwrap();
    let (lab_a, lab_b) = (tmp.path().join("lab-a"), tmp.path().join("lab-b"));
    std::fs::create_dir_all(&lab_a).unwrap();
    let mut sites = DemoSites::start(&lab_a).await;
    let tasks = lab_a.join("demo_tasks.jsonl");
    std::fs::write(&tasks, demo::TASKS_JSONL).unwrap();
    let script = lab_a.join("script");
    write_demo_script(&script, &tasks);
    let rec = lab_a.join("runs/frozen");
    let args = RunArgs::new(&tasks, "record", &rec)
        .settle_ms(300)
        .opt("--policy", format!("trajectory:{}", script.display()))
        .args(&sites.reach);
    let out = cli(&lab_a, args.build(), vec![]).await;
    assert!(out.status.success(), "record: {}", String::from_utf8_lossy(&out.stderr));
    sites.stop();

    let file = tmp.path().join("frozen.wfb");
    let out = cli(
        &lab_a,
        strs(&["bundle", "create", rec.to_str().unwrap(), "--out", file.to_str().unwrap()]),
        vec![],
    )
    .await;
    assert!(out.status.success(), "bundle create: {}", String::from_utf8_lossy(&out.stderr));
    let root = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(root.len(), 64, "the bundle's root hash on stdout: {root:?}");

    // Lab B: a fresh home; verify, import, replay.
    std::fs::create_dir_all(&lab_b).unwrap();
    let out = cli(&lab_b, strs(&["bundle", "verify", file.to_str().unwrap()]), vec![]).await;
    assert!(out.status.success(), "verify: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), root);
    let imported = lab_b.join("runs/frozen");
    let out = cli(
        &lab_b,
        strs(&["bundle", "import", file.to_str().unwrap(), "--run-dir", imported.to_str().unwrap()]),
        vec![],
    )
    .await;
    assert!(out.status.success(), "import: {}", String::from_utf8_lossy(&out.stderr));
    // The text the browser rendered of the recorded pages is recorded data: the bundle carries it.
    let (store_a, store_b) = (
        snapshots::Store::open_read_only(&lab_a.join("store")).unwrap(),
        snapshots::Store::open_read_only(&lab_b.join("store")).unwrap(),
    );
    let mut rendered = 0;
    for m in store_a.manifests().unwrap().into_iter().filter(|m| m.name.starts_with("frozen/")) {
        let a = store_a.rendered_text(&m).unwrap();
        rendered += a.len();
        assert_eq!(store_b.rendered_text(&store_b.manifest(&m.name).unwrap()).unwrap(), a, "{}", m.name);
    }
    assert!(rendered > 0, "the recording kept the rendered text of the pages it observed");
    drop((store_a, store_b));
    let tasks_b = imported.join("../demo_tasks.jsonl");
    std::fs::write(&tasks_b, demo::TASKS_JSONL).unwrap();
    replay_step_for_step(&lab_b, &tasks_b, &imported, &lab_b.join("runs/replayed"), 6).await;
}
