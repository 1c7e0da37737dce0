//! `cargo xtask bench load`: issue 23's load figures.
//!
//! Part 1, many clients at once: the `webfreeze` binary recording, then replaying, while N connections
//! (1,000 and 10,000; HTTP/1.1 and HTTP/2 to the proxy, each CONNECT + TLS) request a mix of 1 KiB and
//! 100 KiB bodies (one in ten) for a fixed time. Per cell: requests served, connections refused with 503
//! (past `--max-connections`, the documented limit), errors (anything else), p50/p99 latency, and the
//! proxy's peak RSS and open file descriptors, sampled from /proc every 100 ms. The 10,000-connection
//! cells run once with `--max-connections 10240` and once with the default (1024).
//!
//! Part 2, many tasks in one process: `session::TaskProxy` (what `webfreeze run --jobs` starts per task)
//! for 1,000 tasks, 100 at a time, each driven by an HTTPS client making 5 requests (the model and the
//! browser are what this part leaves out: 100 Chromiums do not fit 2 cores), recording then replaying.
//! This process's RSS and open descriptors after 10 tasks and after 1,000 show whether anything is kept
//! per task.

use std::net::SocketAddr;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::proxy_bench::{fetch_sizes_once, start_origin_with, webfreeze_bin};
use crate::spawn::spawn_listening;

/// Raise this process's open-file limit (children inherit it): 10,000 client connections and the
/// origin's 10,000 do not fit the usual 1,024 or even 20,000.
fn raise_nofile(want: u64) -> anyhow::Result<u64> {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let cur = getrlimit(Resource::Nofile);
    if cur.current.is_some_and(|c| c >= want) {
        return Ok(cur.current.unwrap_or(want));
    }
    let max = cur.maximum.map_or(want, |m| m.max(want));
    if setrlimit(Resource::Nofile, Rlimit { current: Some(want), maximum: Some(max) }).is_err() {
        // Not root: as far as the hard limit allows.
        let hard = cur.maximum.unwrap_or(want);
        setrlimit(Resource::Nofile, Rlimit { current: Some(hard), maximum: Some(hard) })
            .map_err(|e| anyhow::anyhow!("cannot raise the open-file limit: {e}"))?;
        return Ok(hard);
    }
    Ok(want)
}

fn proc_status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn open_fds(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(|d| d.count() as u64).unwrap_or(0)
}

/// Peak RSS (KiB) and open descriptors of `pid`, sampled until `stop`.
fn sampler(pid: u32, stop: Arc<AtomicBool>) -> tokio::task::JoinHandle<(u64, u64)> {
    tokio::spawn(async move {
        let (mut rss, mut fds) = (0, 0);
        while !stop.load(Ordering::Relaxed) {
            rss = rss.max(proc_status_kib(pid, "VmRSS:"));
            fds = fds.max(open_fds(pid));
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        (rss, fds)
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Proto {
    H1,
    H2,
}

enum Sender {
    H1(hyper::client::conn::http1::SendRequest<Empty<Bytes>>),
    H2(hyper::client::conn::http2::SendRequest<Empty<Bytes>>),
}

enum Opened {
    Ready(Sender),
    Refused,
}

async fn open(
    proxy: SocketAddr,
    origin: SocketAddr,
    tls: Arc<rustls::ClientConfig>,
    proto: Proto,
) -> anyhow::Result<Opened> {
    let mut tcp = TcpStream::connect(proxy).await?;
    tcp.set_nodelay(true)?;
    let target = format!("127.0.0.1:{}", origin.port());
    tcp.write_all(format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").as_bytes()).await?;
    let mut buf = Vec::new();
    let mut b = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        tcp.read_exact(&mut b).await?;
        buf.push(b[0]);
    }
    if buf.starts_with(b"HTTP/1.1 503") {
        return Ok(Opened::Refused);
    }
    anyhow::ensure!(buf.starts_with(b"HTTP/1.1 200"), "CONNECT: {}", String::from_utf8_lossy(&buf));
    let tls = tokio_rustls::TlsConnector::from(tls).connect(ServerName::try_from("127.0.0.1")?, tcp).await?;
    Ok(Opened::Ready(match proto {
        Proto::H1 => {
            let (s, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls)).await?;
            tokio::spawn(conn);
            Sender::H1(s)
        }
        Proto::H2 => {
            let (s, conn) =
                hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tls)).await?;
            tokio::spawn(conn);
            Sender::H2(s)
        }
    }))
}

fn client_tls(roots_pem: &str, proto: Proto) -> Arc<rustls::ClientConfig> {
    crate::load::client_tls_alpn(
        &[roots_pem.to_string()],
        if proto == Proto::H2 { b"h2" } else { b"http/1.1" },
    )
}

async fn get(s: &mut Sender, origin: SocketAddr, path: &str) -> anyhow::Result<usize> {
    let authority = format!("127.0.0.1:{}", origin.port());
    let res = match s {
        Sender::H1(s) => {
            let req = http::Request::builder().uri(path).header("host", &authority).body(Empty::new())?;
            s.send_request(req).await?
        }
        Sender::H2(s) => {
            let req = http::Request::builder().uri(format!("https://{authority}{path}")).body(Empty::new())?;
            s.send_request(req).await?
        }
    };
    anyhow::ensure!(res.status() == 200, "status {}", res.status());
    Ok(res.into_body().collect().await?.to_bytes().len())
}

#[derive(Default)]
struct Cell {
    ok: u64,
    refused: u64,
    errors: u64,
    lat_us: Vec<u64>,
    connect_secs: f64,
    secs: f64,
    peak_rss_kib: u64,
    peak_fds: u64,
}

/// `conns` connections through `proxy` (pid `pid`): open them all (at most 256 handshakes at once), then
/// request for `secs`.
async fn cell(
    pid: u32,
    proxy: SocketAddr,
    origin: SocketAddr,
    ca: &str,
    proto: Proto,
    conns: usize,
    secs: f64,
) -> Cell {
    let stop = Arc::new(AtomicBool::new(false));
    let sampling = sampler(pid, stop.clone());
    let tls = client_tls(ca, proto);
    let gate = Arc::new(tokio::sync::Semaphore::new(256));
    // Two barriers: everyone connected; then the deadline is set and everyone starts.
    let connected = Arc::new(tokio::sync::Barrier::new(conns + 1));
    let go = Arc::new(tokio::sync::Barrier::new(conns + 1));
    let (ok, refused, errors) =
        (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let started = Instant::now();
    let deadline = Arc::new(std::sync::OnceLock::<Instant>::new());
    let mut tasks = Vec::with_capacity(conns);
    for k in 0..conns {
        let (tls, gate, deadline) = (tls.clone(), gate.clone(), deadline.clone());
        let (connected, go) = (connected.clone(), go.clone());
        let (ok, refused, errors) = (ok.clone(), refused.clone(), errors.clone());
        tasks.push(tokio::spawn(async move {
            let opened = {
                let _p = gate.acquire().await;
                open(proxy, origin, tls, proto).await
            };
            connected.wait().await;
            go.wait().await;
            let mut lat = Vec::new();
            let mut s = match opened {
                Ok(Opened::Ready(s)) => s,
                Ok(Opened::Refused) => {
                    refused.fetch_add(1, Ordering::Relaxed);
                    return lat;
                }
                Err(e) => {
                    if errors.fetch_add(1, Ordering::Relaxed) < 3 {
                        eprintln!("  connect error: {e:#}");
                    }
                    return lat;
                }
            };
            let end = *deadline.get().expect("set before the barrier opens");
            let mut i = k;
            while Instant::now() < end {
                let (path, len) = if i.is_multiple_of(10) { ("/100k", 100 * 1024) } else { ("/1k", 1024) };
                i += 1;
                let t = Instant::now();
                match get(&mut s, origin, path).await {
                    Ok(n) if n == len => {
                        ok.fetch_add(1, Ordering::Relaxed);
                        lat.push(t.elapsed().as_micros() as u64);
                    }
                    other => {
                        if errors.fetch_add(1, Ordering::Relaxed) < 3 {
                            eprintln!("  request error: {:?}", other.map_err(|e| format!("{e:#}")));
                        }
                        break;
                    }
                }
            }
            lat
        }));
    }
    connected.wait().await;
    let connect_secs = started.elapsed().as_secs_f64();
    let _ = deadline.set(Instant::now() + Duration::from_secs_f64(secs));
    go.wait().await;
    let mut lat_us = Vec::new();
    for t in tasks {
        if let Ok(l) = t.await {
            lat_us.extend(l);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let (peak_rss_kib, peak_fds) = sampling.await.unwrap_or_default();
    lat_us.sort_unstable();
    Cell {
        ok: ok.load(Ordering::Relaxed),
        refused: refused.load(Ordering::Relaxed),
        errors: errors.load(Ordering::Relaxed),
        lat_us,
        connect_secs,
        secs,
        peak_rss_kib,
        peak_fds,
    }
}

fn print_header() {
    println!(
        "{:<7} {:<5} {:>6} {:>9} {:>9} {:>8} {:>8} {:>7} {:>8} {:>8} {:>10} {:>9} {:>9}",
        "mode",
        "proto",
        "conns",
        "max-conn",
        "requests",
        "req/s",
        "refused",
        "errors",
        "p50 ms",
        "p99 ms",
        "peak RSS",
        "peak fds",
        "connect s"
    );
}

fn print_row(mode: &str, proto: Proto, conns: usize, max: usize, c: &Cell) {
    println!(
        "{:<7} {:<5} {:>6} {:>9} {:>9} {:>8.0} {:>8} {:>7} {:>8.2} {:>8.2} {:>7.0} MB {:>9} {:>9.1}",
        mode,
        if proto == Proto::H2 { "h2" } else { "h1" },
        conns,
        max,
        c.ok,
        c.ok as f64 / c.secs,
        c.refused,
        c.errors,
        crate::pct_ms(&c.lat_us, 50.0),
        crate::pct_ms(&c.lat_us, 99.0),
        c.peak_rss_kib as f64 / 1024.0,
        c.peak_fds,
        c.connect_secs,
    );
}

/// Part 1: `conns` connections per cell, `secs` of requests, recording then replaying.
pub(crate) fn run_conns(conns: &[usize], secs: f64) -> anyhow::Result<()> {
    let limit = raise_nofile(200_000)?;
    let bin = webfreeze_bin()?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let work = tempfile::tempdir()?;
    let home = work.path().join("wf");
    println!(
        "{secs}s per cell after all connections are open; 1 in 10 requests is 100 KiB, the rest 1 KiB; open-file limit {limit}"
    );
    rt.block_on(async {
        let (origin, _origin_ca) = start_origin_with(work.path(), true).await?;
        let ca_file = work.path().join("origin-ca.pem");
        let big = conns.iter().copied().max().unwrap_or(1000) + 240;
        // What replay serves: a snapshot of the two resources recorded once each (repeated requests get the
        // last recorded answer), as a browsing session records them; the record cells below store every
        // request, hundreds of thousands of copies of two URLs, which is no snapshot anyone replays.
        {
            let ca = ca_file.to_str().unwrap_or_default();
            let (rec, addr) =
                spawn_listening(&bin, &home, &["record", "--snapshot", "load-replay", "--upstream-ca", ca])?;
            let proxy_ca = std::fs::read_to_string(home.join("ca/ca.pem"))?;
            fetch_sizes_once(addr, origin, &proxy_ca).await?;
            Command::new("kill").args(["-INT", &rec.0.id().to_string()]).status()?;
            let mut rec = rec;
            rec.0.wait()?;
        }
        print_header();
        for mode in ["record", "replay"] {
            for max in [big, 1024] {
                if max == 1024 && !conns.iter().any(|&c| c > 1024) {
                    continue;
                }
                let max_s = max.to_string();
                let mut args =
                    vec![mode, "--snapshot", "load-replay", "--max-connections", &max_s, "--no-inject-shim"];
                let ca = ca_file.to_str().unwrap_or_default();
                if mode == "record" {
                    args = vec![
                        mode,
                        "--snapshot",
                        if max == 1024 { "load-default" } else { "load" },
                        "--max-connections",
                        &max_s,
                        "--upstream-ca",
                        ca,
                    ];
                }
                let (child, addr) = spawn_listening(&bin, &home, &args)?;
                let proxy_ca = std::fs::read_to_string(home.join("ca/ca.pem"))?;
                let pid = child.0.id();
                for &n in conns {
                    if max == 1024 && n <= 1024 {
                        continue;
                    }
                    for proto in [Proto::H1, Proto::H2] {
                        let c = cell(pid, addr, origin, &proxy_ca, proto, n, secs).await;
                        print_row(mode, proto, n, max, &c);
                    }
                }
                Command::new("kill").args(["-INT", &pid.to_string()]).status()?;
                let mut child = child;
                let status = child.0.wait()?;
                anyhow::ensure!(status.success(), "webfreeze {mode} exited with {status}");
            }
        }
        anyhow::Ok(())
    })?;
    println!(
        "\nrefused: answered 503 with Retry-After at once, past --max-connections (the documented limit);"
    );
    println!("errors: anything else (a failed connect or handshake, a wrong or cut body).");
    Ok(())
}

/// This process's resident set (KiB), open descriptors, and how many of those are sockets, now.
fn me() -> (u64, u64, u64) {
    let pid = std::process::id();
    let sockets = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    std::fs::read_link(e.path()).is_ok_and(|t| t.to_string_lossy().starts_with("socket:"))
                })
                .count() as u64
        })
        .unwrap_or(0);
    (proc_status_kib(pid, "VmRSS:"), open_fds(pid), sockets)
}

/// One task: a TaskProxy, five HTTPS requests through it, finish.
async fn one_task(
    mode: &session::ProxyMode,
    ca: Arc<proxy::CertificateAuthority>,
    opts: &session::TaskProxyOptions,
    origin: SocketAddr,
    tls: Arc<rustls::ClientConfig>,
) -> anyhow::Result<()> {
    let tp = session::TaskProxy::start(mode, ca, opts).await?;
    let mut s = match open(tp.addr(), origin, tls, Proto::H1).await? {
        Opened::Ready(s) => s,
        Opened::Refused => anyhow::bail!("task proxy refused a connection"),
    };
    for i in 0..5 {
        let (path, len) = if i == 0 { ("/100k", 100 * 1024) } else { ("/1k", 1024) };
        let n = get(&mut s, origin, path).await?;
        anyhow::ensure!(n == len, "{path}: {n} bytes");
    }
    drop(s);
    tp.finish().await?;
    Ok(())
}

/// Part 2: `tasks` task proxies, `jobs` at a time, recording then replaying, in this process.
pub(crate) fn run_tasks(tasks: usize, jobs: usize) -> anyhow::Result<()> {
    raise_nofile(200_000)?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let work = tempfile::tempdir()?;
    rt.block_on(async {
        let (origin, _) = start_origin_with(work.path(), true).await?;
        let store = snapshots::Store::open(&work.path().join("store"))?;
        #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
        let now = time::OffsetDateTime::now_utc();
        let ca = Arc::new(proxy::CertificateAuthority::init(&work.path().join("ca"), false, now)?);
        let tls = client_tls(ca.cert_pem(), Proto::H1);
        let mut pcfg = proxy::ProxyConfig::default();
        pcfg.upstream.extra_ca_files = vec![work.path().join("origin-ca.pem")];
        println!("{tasks} tasks, {jobs} at a time, 5 HTTPS requests each (one of 100 KiB), in one process");
        println!(
            "{:<7} {:>10} {:>12} {:>12} {:>12} {:>8} {:>8} {:>8} {:>14} {:>7}",
            "mode",
            "tasks/s",
            "RSS @10",
            "RSS @half",
            "RSS @end",
            "fds @10",
            "@half",
            "@end",
            "sockets 10/½/end",
            "errors"
        );
        for mode_name in ["record", "replay"] {
            let mode = if mode_name == "record" {
                session::ProxyMode::Record {
                    store: store.clone(),
                    run: "load".into(),
                    run_dir: "/load".into(),
                }
            } else {
                session::ProxyMode::Replay {
                    store: store.clone(),
                    run: "load".into(),
                    on_miss: session::MissPolicy::NotFound,
                    frozen_web: session::FrozenWeb::recorded(),
                }
            };
            let gate = Arc::new(tokio::sync::Semaphore::new(jobs));
            let errors = Arc::new(AtomicU64::new(0));
            let t = Instant::now();
            // Three phases, each measured with no task in flight: the first 10 tasks, up to half, the rest.
            let mut idle = Vec::new();
            let (a, b) = (tasks.min(10), (tasks / 2).max(tasks.min(10)));
            for (from, to) in [(0, a), (a, b), (b, tasks)] {
                let mut handles = Vec::with_capacity(to - from);
                for i in from..to {
                    let permit = gate.clone().acquire_owned().await?;
                    let (mode, ca, tls) = (mode.clone(), ca.clone(), tls.clone());
                    let errors = errors.clone();
                    let opts = session::TaskProxyOptions {
                        task_id: format!("t{i}"),
                        web_name: "Load".into(),
                        proxy: pcfg.clone(),
                        clock: Arc::new(clock::SystemClock),
                        time_zone: "UTC".into(),
                        locale: "en-US".into(),
                        explore: false,
                        guard: None,
                        wire: None,
                    };
                    handles.push(tokio::spawn(async move {
                        let _permit = permit;
                        if let Err(e) = one_task(&mode, ca, &opts, origin, tls).await {
                            if errors.fetch_add(1, Ordering::Relaxed) < 3 {
                                eprintln!("task t{i}: {e:#}");
                            }
                        }
                    }));
                }
                for h in handles {
                    let _ = h.await;
                }
                idle.push(me());
            }
            let secs = t.elapsed().as_secs_f64();
            let ((rss10, fds10, s10), (rss_half, fds_half, s_half), (rss, fds, s_end)) =
                (idle[0], idle[1], idle[2]);
            println!(
                "{:<7} {:>10.1} {:>9.0} MB {:>9.0} MB {:>9.0} MB {:>8} {:>8} {:>8} {:>14} {:>7}",
                mode_name,
                tasks as f64 / secs,
                rss10 as f64 / 1024.0,
                rss_half as f64 / 1024.0,
                rss as f64 / 1024.0,
                fds10,
                fds_half,
                fds,
                format!("{s10}/{s_half}/{s_end}"),
                errors.load(Ordering::Relaxed)
            );
        }
        anyhow::Ok(())
    })?;
    Ok(())
}
