//! Issue 23's faults, injected into the real binary: SIGKILL in the middle of every command that writes the
//! store. Each command is held at a fault point (`FAILPOINTS`, see `snapshots/src/fault.rs`) right after a
//! known amount of work is durably written, announced on its stderr, and killed there: no guessed delays.
//! Afterwards `snapshots verify` must be clean and the same command, run again, must finish the job.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::*;

/// Exchanges in the fixture; the writers are held after `HOLD_AFTER` of them.
const N: usize = 2_500;
const HOLD_AFTER: usize = 100;

/// A HAR of `n` exchanges with distinct bodies (so each is its own blob).
fn distinct_har(n: usize) -> String {
    distinct_har_at("https://site.test", n)
}

/// [`distinct_har`] with its URLs under `base`.
fn distinct_har_at(base: &str, n: usize) -> String {
    let entries: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            serde_json::json!({
                "startedDateTime": "2025-01-02T03:04:05.000Z", "time": 1,
                "request": {"method": "GET", "url": format!("{base}/p/{i}"), "httpVersion": "HTTP/1.1", "headers": []},
                "response": {"status": 200, "httpVersion": "HTTP/1.1",
                    "headers": [{"name": "content-type", "value": "text/plain"}],
                    "content": {"size": 512, "mimeType": "text/plain", "text": format!("{i:0512}")}},
            })
        })
        .collect();
    serde_json::json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": entries}})
        .to_string()
}

fn list(home: &Path) -> serde_json::Value {
    let out = run_cli(home, &["snapshots", "list", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// (state, exchanges) of one snapshot.
fn snapshot(home: &Path, name: &str) -> (String, u64) {
    let l = list(home);
    let s =
        l.as_array().unwrap().iter().find(|s| s["name"] == name).unwrap_or_else(|| panic!("{name} in {l}"));
    (s["state"].as_str().unwrap().to_string(), s["counts"]["exchanges"].as_u64().unwrap())
}

/// Run `webfreeze ARGS` with the fault point configured to hold it, wait for the point to announce itself,
/// SIGKILL it there. Returns what it printed on stderr.
fn kill_at(home: &Path, args: &[String], failpoints: &str, point: &str) -> String {
    // A build without the feature is a clear failure, not a test that silently proves nothing.
    if !cfg!(feature = "faults") {
        panic!(
            "the fault points are compiled in only with the `faults` feature: run `cargo test --features \
             webfreeze/faults` (scripts/test.sh does)"
        );
    }
    let mut child = Command::new(bin())
        .args(args)
        .env("WEBFREEZE_HOME", home)
        .env("FAILPOINTS", failpoints)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = String::new();
    let mut held = false;
    for line in BufReader::new(child.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line == format!("fault point {point}: holding") {
            held = true;
            break;
        }
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert!(held, "{args:?} never reached fault point {point} (exit {status}); stderr:\n{seen}");
    seen
}

/// A case's check after the rerun: the home and the rerun's stdout.
type Check = Box<dyn Fn(&Path, &str)>;

struct Case {
    what: &'static str,
    home: PathBuf,
    args: Vec<String>,
    failpoints: &'static str,
    point: &'static str,
    /// Checked after the rerun.
    check: Check,
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// A one-task record-mode shard run directory whose task recorded into snapshot `big`.
fn record_shard(dir: &Path) {
    use trajectory::{Outcome, RunDir, RunFile, RunMode, TaskStatus, Trajectory, TRAJECTORY_VERSION};
    let task = agent::tasks::Task {
        web_name: "Site".into(),
        id: "Site--0".into(),
        question: "q".into(),
        start_url: "https://site.test/p/0".into(),
        benchmark: Default::default(),
        setup: Default::default(),
    };
    let (mine, info) = session::Shard { index: 0, count: 1 }.select(vec![task]);
    let run = RunDir::new(dir);
    run.create().unwrap();
    let mut rf = RunFile {
        v: 1,
        mode: RunMode::Record,
        policy: "script".into(),
        started_ms: 1_000,
        finished_ms: Some(2_000),
        snapshots: Some("rec".into()),
        shard: Some(info),
        ..Default::default()
    };
    for t in mine {
        let tr = Trajectory {
            v: TRAJECTORY_VERSION,
            task_id: t.id.clone(),
            web_name: t.web_name.clone(),
            mode: RunMode::Record,
            snapshot: Some("big".into()),
            outcome: Outcome::Answered,
            answer: Some("a".into()),
            ..Default::default()
        };
        let td = run.task(&t.id);
        td.create().unwrap();
        td.write_trajectory(&tr).unwrap();
        rf.tasks.insert(t.id.clone(), TaskStatus::of(&tr));
    }
    run.write_run_file(&rf).unwrap();
}

#[test]
fn sigkill_midway_through_every_store_writer_leaves_a_clean_store_and_the_command_reruns() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let har = root.join("big.har");
    std::fs::write(&har, distinct_har(N)).unwrap();
    // The source every case starts from: one imported snapshot of N exchanges.
    let src = root.join("src");
    let out = run_cli(&src, &["snapshots", "import", har.to_str().unwrap(), "--snapshot", "big"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let warc = root.join("big.warc.gz");
    let out =
        run_cli(&src, &["snapshots", "export", "big", "--format", "warc", "--out", warc.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bundle = root.join("big.wfz");
    let out = run_cli(&src, &["bundle", "create", "big", "--out", bundle.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let shard = root.join("shard-0");
    record_shard(&shard);
    // gc's victim: a store whose only snapshot is removed, leaving N unreferenced bodies (several batches).
    let gc_home = root.join("gc");
    let out = run_cli(&gc_home, &["snapshots", "import", har.to_str().unwrap(), "--snapshot", "gone"]);
    assert!(out.status.success());
    assert!(run_cli(&gc_home, &["snapshots", "rm", "gone"]).status.success());

    let hold_append = Box::leak(format!("snapshot-append={HOLD_AFTER}*off->return").into_boxed_str());
    let whole = |name: &'static str, state: &'static str| -> Check {
        Box::new(move |home: &Path, _: &str| assert_eq!(snapshot(home, name), (state.to_string(), N as u64)))
    };
    let cases = vec![
        Case {
            what: "HAR import",
            home: root.join("har"),
            args: s(&["snapshots", "import", har.to_str().unwrap(), "--snapshot", "big"]),
            failpoints: hold_append,
            point: "snapshot-append",
            check: whole("big", "imported"),
        },
        Case {
            what: "WARC import",
            home: root.join("warc"),
            args: s(&["snapshots", "import", warc.to_str().unwrap(), "--snapshot", "big"]),
            failpoints: hold_append,
            point: "snapshot-append",
            check: whole("big", "imported"),
        },
        Case {
            what: "bundle import",
            home: root.join("bundle"),
            args: s(&["bundle", "import", bundle.to_str().unwrap()]),
            failpoints: hold_append,
            point: "snapshot-append",
            check: whole("big", "imported"),
        },
        Case {
            what: "merge (snapshot copy between stores)",
            home: root.join("merge"),
            args: s(&[
                "merge",
                shard.to_str().unwrap(),
                "--out",
                root.join("merged").to_str().unwrap(),
                "--from-store",
                src.join("store").to_str().unwrap(),
            ]),
            failpoints: hold_append,
            point: "snapshot-append",
            check: Box::new(|home: &Path, _: &str| {
                assert_eq!(snapshot(home, "merged/Site--0"), ("imported".to_string(), N as u64));
                assert_eq!(list(home).as_array().unwrap().len(), 1, "one copy, nothing left over");
            }),
        },
        Case {
            what: "snapshots merge (union of recordings)",
            home: src.clone(),
            args: s(&["snapshots", "merge", "big", "--into", "union"]),
            failpoints: hold_append,
            point: "snapshot-append",
            check: whole("union", "imported"),
        },
        Case {
            what: "gc",
            home: gc_home,
            args: s(&["snapshots", "gc", "--json"]),
            failpoints: "gc-batch=return",
            point: "gc-batch",
            check: Box::new(|home: &Path, rerun_stdout: &str| {
                let r: serde_json::Value = serde_json::from_str(rerun_stdout).unwrap();
                let deleted = r["blobs_deleted"].as_u64().unwrap();
                assert!(deleted > 0 && deleted < N as u64, "the rerun deletes what the killed gc left: {r}");
                let again = run_cli(home, &["snapshots", "gc", "--json"]);
                let r: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
                assert_eq!(
                    (r["blobs_deleted"].as_u64(), r["chunks_deleted"].as_u64()),
                    (Some(0), Some(0)),
                    "{r}"
                );
            }),
        },
    ];
    let mut failures = Vec::new();
    for c in &cases {
        eprintln!("case: {}", c.what);
        kill_at(&c.home, &c.args, c.failpoints, c.point);
        let verify = run_cli(&c.home, &["snapshots", "verify"]);
        if !verify.status.success() {
            failures.push(format!(
                "{}: verify after the kill: {}{}",
                c.what,
                String::from_utf8_lossy(&verify.stdout),
                String::from_utf8_lossy(&verify.stderr)
            ));
            continue;
        }
        let args: Vec<&str> = c.args.iter().map(String::as_str).collect();
        let rerun = run_cli(&c.home, &args);
        if !rerun.status.success() {
            failures.push(format!(
                "{}: the same command again: {}",
                c.what,
                String::from_utf8_lossy(&rerun.stderr)
            ));
            continue;
        }
        (c.check)(&c.home, &String::from_utf8_lossy(&rerun.stdout));
        let verify = run_cli(&c.home, &["snapshots", "verify"]);
        assert!(
            verify.status.success(),
            "{}: verify after the rerun: {}",
            c.what,
            String::from_utf8_lossy(&verify.stdout)
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // A sealed snapshot is never replaced by a rerun.
    let again =
        run_cli(&root.join("har"), &["snapshots", "import", har.to_str().unwrap(), "--snapshot", "big"]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists already"));
}

/// A size-limited tmpfs, unmounted on drop. Mounting needs root (CI runs as root).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output();
        let out = out.expect("`mount` (util-linux) is needed: apt-get install mount");
        assert!(
            out.status.success(),
            "mounting a {size} tmpfs on {} failed (this test needs root): {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs(dir.to_path_buf())
    }

    fn resize(&self, size: &str) {
        let out = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.0)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// 256 KiB that zstd cannot shrink, different for every `i`.
fn incompressible(i: usize) -> Vec<u8> {
    let mut out = vec![0u8; 256 * 1024];
    blake3::Hasher::new().update(&i.to_le_bytes()).finalize_xof().fill(&mut out);
    out
}

/// A plain-HTTP origin: `GET /blob/<i>` answers [`incompressible`]`(i)`, one request per connection.
async fn blob_origin() -> std::net::SocketAddr {
    use tokio::io::AsyncWriteExt;
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = l.accept().await {
            tokio::spawn(async move {
                let Some(path) = read_request_path(&mut tcp).await else { return };
                let i: usize = path.strip_prefix("/blob/").and_then(|n| n.parse().ok()).unwrap_or(0);
                let body = incompressible(i);
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = tcp.write_all(head.as_bytes()).await;
                let _ = tcp.write_all(&body).await;
                let _ = tcp.shutdown().await;
            });
        }
    });
    addr
}

/// GET `url` through the proxy at `proxy` (absolute form); the body if the whole response arrived.
async fn get_via(proxy: std::net::SocketAddr, url: &str) -> Option<Vec<u8>> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tcp = tokio::net::TcpStream::connect(proxy).await.ok()?;
    let host = url.strip_prefix("http://")?.split('/').next()?;
    tcp.write_all(format!("GET {url} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n").as_bytes())
        .await
        .ok()?;
    let mut raw = Vec::new();
    tcp.read_to_end(&mut raw).await.ok()?;
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&raw[..split]).to_lowercase();
    let len: usize = head.lines().find_map(|l| l.strip_prefix("content-length: "))?.trim().parse().ok()?;
    (head.starts_with("http/1.1 200") && raw.len() - split == len).then(|| raw[split..].to_vec())
}

/// Issue 23: the disk fills while recording. Recording stops with a clear error; every exchange stored
/// before it reads back whole (with the disk still full); once space is freed the snapshot is
/// `interrupted` and the rest of the store is untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_stops_recording_cleanly_and_loses_nothing_stored() {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let mnt = Tmpfs::mount(&tmp.path().join("small"), "6m");
    let store = mnt.0.join("store");
    let st = store.to_str().unwrap().to_string();
    // Something else in the store, which must come through untouched.
    let har = tmp.path().join("before.har");
    std::fs::write(&har, distinct_har(20)).unwrap();
    let out = run_cli(
        &home,
        &["--store", &st, "snapshots", "import", har.to_str().unwrap(), "--snapshot", "before"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let origin = blob_origin().await;
    let mut rec = Webfreeze::spawn(&home, &["--store", &st, "record", "--snapshot", "full"]);
    let mut delivered = 0;
    for i in 0..200 {
        // 200 x 256 KiB is far past 6 MiB: the store fails well before the loop ends.
        match get_via(rec.addr, &format!("http://{origin}/blob/{i}")).await {
            Some(body) => {
                assert!(body == incompressible(i), "response {i} reached the client damaged");
                delivered += 1;
            }
            None => break,
        }
    }
    if delivered == 200 {
        let _ = rec.child.kill();
        panic!("the proxy kept recording past a full disk: {}", rec.stderr());
    }
    let status = tokio::task::spawn_blocking(move || {
        let s = rec.child.wait().unwrap();
        (s, std::fs::read_to_string(&rec.stderr_path).unwrap())
    })
    .await
    .unwrap();
    let (status, stderr) = status;
    assert!(!status.success(), "recording must stop with an error: {stderr}");
    assert!(stderr.contains("recording stopped") && stderr.contains("No space left"), "{stderr}");

    // Restart with the disk still full: read-only commands read every exchange stored, each body whole.
    let out = run_cli(&home, &["--store", &st, "snapshots", "show", "full", "--json", "--limit", "1000"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let shown: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let xs = shown["exchanges"].as_array().unwrap();
    assert!(!xs.is_empty() && xs.len() <= delivered, "{} stored, {delivered} delivered", xs.len());
    let said = format!("The {} exchange(s) stored before it are kept", xs.len());
    assert!(stderr.contains(&said), "{said:?} in {stderr}");
    for (i, x) in xs.iter().enumerate() {
        assert_eq!(x["request"]["url"], format!("http://{origin}/blob/{i}"), "stored in order, none skipped");
        assert_eq!(x["response"]["body"]["hash"], blake3::hash(&incompressible(i)).to_hex().as_str());
        assert!(x["flags"]["truncated"].is_null() || x["flags"]["truncated"] == false, "{x}");
    }
    let out = run_cli(
        &home,
        &[
            "--store",
            &st,
            "snapshots",
            "export",
            "full",
            "--format",
            "har",
            "--out",
            tmp.path().join("full.har").to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "every stored body reads back: {}", String::from_utf8_lossy(&out.stderr));

    // Space freed: the next writable open seals the snapshot `interrupted`; nothing else is damaged.
    mnt.resize("64m");
    let out = run_cli(&home, &["--store", &st, "snapshots", "gc"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let l = run_cli(&home, &["--store", &st, "snapshots", "list", "--json"]);
    let l: serde_json::Value = serde_json::from_slice(&l.stdout).unwrap();
    let state = |n: &str| {
        l.as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == n)
            .map(|s| (s["state"].clone(), s["counts"]["exchanges"].clone()))
    };
    assert_eq!(state("full"), Some((serde_json::json!("interrupted"), serde_json::json!(xs.len()))));
    assert_eq!(state("before"), Some((serde_json::json!("imported"), serde_json::json!(20))));
    let out = run_cli(&home, &["--store", &st, "snapshots", "verify"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

/// Issue 35.2: a store lookup that blocks stalls no other connection. The replay runs with one async worker
/// (`TOKIO_WORKER_THREADS=1`) and its first index lookup held for good at the `store-lookup` fault point; of
/// two requests sent together, the one whose lookup is not held is answered. Were the lookup run on the
/// worker itself (not through `proxy::offload`), it would hold the only worker and neither would be.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocked_store_lookup_stalls_no_other_connection() {
    if !cfg!(feature = "faults") {
        panic!(
            "the fault points are compiled in only with the `faults` feature: run `cargo test --features \
             webfreeze/faults` (scripts/test.sh does)"
        );
    }
    let home = tempfile::tempdir().unwrap();
    let har = home.path().join("two.har");
    std::fs::write(&har, distinct_har_at("http://site.test", 2)).unwrap();
    let out = run_cli(home.path(), &["snapshots", "import", har.to_str().unwrap(), "--snapshot", "two"]);
    assert!(out.status.success(), "import: {}", String::from_utf8_lossy(&out.stderr));
    let wf = Webfreeze::spawn_env(
        home.path(),
        &["replay", "--snapshot", "two", "--no-inject-shim"],
        &[("FAILPOINTS", "store-lookup=1*return"), ("TOKIO_WORKER_THREADS", "1")],
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    for i in 0..2usize {
        let (tx, addr) = (tx.clone(), wf.addr);
        tokio::spawn(async move {
            let _ = tx.send((i, get_via(addr, &format!("http://site.test/p/{i}")).await));
        });
    }
    let (i, body) = tokio::time::timeout(std::time::Duration::from_secs(60), rx.recv())
        .await
        .unwrap_or_else(|_| {
            panic!(
                "neither request was answered: the held lookup stalled the proxy; stderr:\n{}",
                wf.stderr()
            )
        })
        .unwrap();
    assert_eq!(body.as_deref(), Some(format!("{i:0512}").as_bytes()), "request {i} got the wrong answer");
    // The other one is the held lookup: still unanswered.
    assert!(rx.try_recv().is_err(), "both requests were answered: the fault point held nothing");
    assert!(wf.stderr().contains("fault point store-lookup: holding"), "stderr:\n{}", wf.stderr());
}
