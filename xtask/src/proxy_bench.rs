//! `cargo xtask bench proxy` and `cargo xtask bench replay`: webfreeze against a ceiling (the same bytes
//! straight from an in-memory hyper+rustls origin) and against mitmproxy 12, measured in one run. The
//! ratios are taken against the **out-of-process** ceiling (`xtask bench-origin`: the same origin in a
//! process of its own, as webfreeze and mitmproxy are), so that the load client and the thing measured do
//! not share one process; the in-process origin is listed beside it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

use crate::load::{self, Via};
use crate::spawn::{listening, spawn_listening, Kill};
use crate::{gen, pct_ms, peak_rss_kib};

const SIZES: [(&str, usize); 2] = [("/1k", 1024), ("/100k", 100 * 1024)];
const CONCS: [usize; 3] = [1, 16, 64];

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("target"))
}

pub(crate) fn webfreeze_bin() -> anyhow::Result<PathBuf> {
    let st = Command::new("cargo").args(["build", "--release", "-q", "--bin", "webfreeze"]).status()?;
    anyhow::ensure!(st.success(), "building webfreeze failed");
    Ok(target_dir().join("release/webfreeze"))
}

/// mitmdump 12 from PyPI, installed into the build cache on first use (PLATFORM.md: Python 3.13).
pub(crate) fn mitmdump() -> Option<(PathBuf, PathBuf)> {
    let dir = std::env::var_os("WEBFREEZE_BUILD_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/webfreeze-build")
        })
        .join("mitmproxy-12.2.3");
    let py =
        std::fs::read_dir(PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".pyenv/versions"))
            .ok()?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("3.13")))?
            .join("bin/python");
    if !dir.join("bin/mitmdump").exists() {
        eprintln!("installing mitmproxy 12.2.3 into {} ...", dir.display());
        let ok = Command::new(&py)
            .args(["-m", "pip", "install", "-q", "--target"])
            .arg(&dir)
            .arg("mitmproxy==12.2.3")
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            return None;
        }
    }
    Some((py, dir))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap_or(0)
}

pub(crate) fn spawn_mitm(
    py: &Path,
    dir: &Path,
    confdir: &Path,
    extra: &[&str],
) -> anyhow::Result<(Kill, SocketAddr)> {
    let port = free_port();
    let child = Command::new(py)
        .arg(dir.join("bin/mitmdump"))
        .args(["--listen-host", "127.0.0.1", "--listen-port", &port.to_string(), "-q"])
        .arg("--set")
        .arg(format!("confdir={}", confdir.display()))
        .args(extra)
        .env("PYTHONPATH", dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse()?;
    let t = Instant::now();
    while std::net::TcpStream::connect(addr).is_err() || !confdir.join("mitmproxy-ca-cert.pem").exists() {
        anyhow::ensure!(t.elapsed() < Duration::from_secs(60), "mitmdump did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok((Kill(child), addr))
}

/// The ceiling and the origin: hyper + rustls serving `/1k` and `/100k` from memory.
pub(crate) async fn start_origin(work: &Path) -> anyhow::Result<(SocketAddr, String)> {
    start_origin_with(work, false).await
}

/// [`start_origin`], offering HTTP/2 as well when `h2` (the load benchmark: thousands of concurrent
/// requests share a few upstream connections instead of one each).
pub(crate) async fn start_origin_with(work: &Path, h2: bool) -> anyhow::Result<(SocketAddr, String)> {
    let ca_key = rcgen::KeyPair::generate()?;
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(rcgen::DnType::CommonName, "bench origin CA");
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let leaf_key = rcgen::KeyPair::generate()?;
    let mut lp = rcgen::CertificateParams::new(vec!["origin.test".to_string()])?;
    lp.subject_alt_names.push(rcgen::SanType::IpAddress("127.0.0.1".parse()?));
    let leaf = lp.signed_by(&leaf_key, &issuer)?;
    let mut cfg = rustls::ServerConfig::builder_with_provider(proxy::crypto_provider())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(rustls::pki_types::PrivatePkcs8KeyDer::from(
                leaf_key.serialize_der(),
            )),
        )?;
    cfg.alpn_protocols =
        if h2 { vec![b"h2".to_vec(), b"http/1.1".to_vec()] } else { vec![b"http/1.1".to_vec()] };
    std::fs::write(work.join("origin-ca.pem"), ca_cert.pem())?;
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(cfg));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let small = Bytes::from(vec![b'a'; 1024]);
    let big = Bytes::from(vec![b'b'; 100 * 1024]);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let _ = tcp.set_nodelay(true);
            let (acceptor, small, big) = (acceptor.clone(), small.clone(), big.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else { return };
                let svc = service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let body = if req.uri().path() == "/100k" { big.clone() } else { small.clone() };
                    async move {
                        let mut r = http::Response::new(http_body_util::Full::new(body));
                        r.headers_mut().insert(
                            "content-type",
                            http::HeaderValue::from_static("application/octet-stream"),
                        );
                        Ok::<_, std::convert::Infallible>(r)
                    }
                });
                let _ = hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), svc)
                    .await;
            });
        }
    });
    Ok((addr, ca_cert.pem()))
}

/// `xtask bench-origin --dir DIR`: [`start_origin`] in this process, its address on stdout
/// (`listening on ADDR`), its CA at `DIR/origin-ca.pem`; serves until killed.
pub(crate) fn serve_origin(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(async {
        let (addr, _) = start_origin(dir).await?;
        println!("listening on {addr}");
        std::future::pending::<()>().await;
        anyhow::Ok(())
    })
}

/// The out-of-process ceiling: `xtask bench-origin` as a child, its address and CA.
fn spawn_origin_process(work: &Path) -> anyhow::Result<(Kill, SocketAddr, String)> {
    let dir = work.join("ceiling");
    let child = Command::new(std::env::current_exe()?)
        .args(["bench-origin", "--dir"])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let (kill, addr) = listening(child)?;
    let ca = std::fs::read_to_string(dir.join("origin-ca.pem"))?;
    Ok((kill, addr, ca))
}

/// Request each benchmark size once through a proxy (to record it), checking the body length.
pub(crate) async fn fetch_sizes_once(proxy: SocketAddr, origin: SocketAddr, ca: &str) -> anyhow::Result<()> {
    use http_body_util::BodyExt;
    for (path, len) in SIZES {
        let tls = load::client_tls(&[ca.to_string()]);
        let mut s = load::connect(Via::Proxy(proxy), "127.0.0.1", origin.port(), tls).await?;
        let req = http::Request::builder()
            .uri(path)
            .header("host", format!("127.0.0.1:{}", origin.port()))
            .body(http_body_util::Empty::<Bytes>::new())?;
        let b = s.send_request(req).await?.into_body().collect().await?.to_bytes();
        anyhow::ensure!(b.len() == len, "{path}: {} bytes", b.len());
    }
    Ok(())
}

struct Row {
    target: String,
    size: &'static str,
    conc: usize,
    rps: f64,
    p50: f64,
    p99: f64,
    errors: u64,
    /// CPU microseconds per request of the process measured (when it is a process of its own).
    server_us: Option<f64>,
    /// CPU microseconds per request of this process: the load client (and, through a proxy, the
    /// in-process origin).
    client_us: f64,
}

/// A process's CPU time so far, user and system, all its threads (exited ones included), from /proc.
fn cpu_secs(pid: u32) -> Option<f64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count the fields after its last `)`.
    let rest = s.get(s.rfind(')')? + 2..)?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime (fields 14 and 15, the 12th and 13th after the name), in USER_HZ: 100 on Linux.
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

fn print_table(title: &str, rows: &[Row], ours: &str, ceiling: &str, peer: &str) {
    println!("\n{title}");
    println!(
        "{:<20} {:>6} {:>5} {:>10} {:>9} {:>9} {:>7} {:>10} {:>10} {:>11} {:>11}",
        "target",
        "size",
        "conc",
        "req/s",
        "p50 ms",
        "p99 ms",
        "errors",
        "vs ceiling",
        "vs peer",
        "srv us/req",
        "bench us/req"
    );
    for r in rows {
        let find = |t: &str| {
            rows.iter().find(|x| x.target == t && x.size == r.size && x.conc == r.conc).map(|x| x.rps)
        };
        let vs_ceiling = find(ceiling).map(|c| r.rps / c).unwrap_or(f64::NAN);
        let vs_peer =
            if r.target == ours { find(peer).map(|p| r.rps / p).unwrap_or(f64::NAN) } else { f64::NAN };
        println!(
            "{:<20} {:>6} {:>5} {:>10.0} {:>9.2} {:>9.2} {:>7} {:>10.2} {:>10} {:>11} {:>11.1}",
            r.target,
            r.size,
            r.conc,
            r.rps,
            r.p50,
            r.p99,
            r.errors,
            vs_ceiling,
            if vs_peer.is_nan() { "-".to_string() } else { format!("{vs_peer:.1}x") },
            r.server_us.map(|u| format!("{u:.1}")).unwrap_or_else(|| "-".to_string()),
            r.client_us,
        );
    }
}

/// Measure every size and concurrency against `via`. `server`: the process answering, when it is not this
/// one, so that its CPU time per request is measured too.
#[allow(clippy::too_many_arguments)] // a benchmark row set is described by exactly these values
async fn measure(
    rows: &mut Vec<Row>,
    name: &str,
    via: Via,
    server: Option<u32>,
    origin: SocketAddr,
    roots: &[String],
    secs: f64,
) {
    for (path, len) in SIZES {
        for conc in CONCS {
            let before = (server.and_then(cpu_secs), cpu_secs(std::process::id()));
            let r = load::run(via, "127.0.0.1", origin.port(), path, conc, secs, roots, len).await;
            let after = (server.and_then(cpu_secs), cpu_secs(std::process::id()));
            let per_req = |a: Option<f64>, b: Option<f64>| Some((b? - a?) * 1e6 / (r.requests.max(1) as f64));
            eprintln!("  {name:<18} {path:<6} c={conc:<3} {:>8.0} req/s", r.requests as f64 / r.secs);
            rows.push(Row {
                target: name.to_string(),
                size: &path[1..],
                conc,
                rps: r.requests as f64 / r.secs,
                p50: pct_ms(&r.lat_us, 50.0),
                p99: pct_ms(&r.lat_us, 99.0),
                errors: r.errors,
                server_us: per_req(before.0, after.0),
                client_us: per_req(before.1, after.1).unwrap_or(f64::NAN),
            });
        }
    }
}

pub(crate) fn run_proxy(secs: f64) -> anyhow::Result<()> {
    let bin = webfreeze_bin()?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let work = std::env::temp_dir().join(format!("webfreeze-bench-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    rt.block_on(async {
        let (origin, origin_ca) = start_origin(&work).await?;
        let ca_file = work.join("origin-ca.pem");
        let mut rows = Vec::new();
        println!(
            "HTTPS keep-alive, HTTP/1.1, {secs}s per cell, 2-core machine shared by client, proxy and origin"
        );
        measure(
            &mut rows,
            "direct, in-process",
            Via::Direct(origin),
            None,
            origin,
            std::slice::from_ref(&origin_ca),
            secs,
        )
        .await;
        let (ceiling_proc, ceiling, ceiling_ca) = spawn_origin_process(&work)?;
        let pid = Some(ceiling_proc.0.id());
        measure(&mut rows, "direct (ceiling)", Via::Direct(ceiling), pid, ceiling, &[ceiling_ca], secs).await;
        // The default upstream stack (BoringSSL, presenting Chrome's ClientHello to this non-browser
        // client's origin) and rustls (no mirroring, the stack before it), in the same run.
        for (name, tls) in [("webfreeze proxy", "boring"), ("webfreeze (rustls up)", "rustls")] {
            let home = work.join(format!("wf-{tls}"));
            let (wf, addr) = spawn_listening(
                &bin,
                &home,
                &["proxy", "--upstream-tls", tls, "--upstream-ca", ca_file.to_str().unwrap_or("")],
            )?;
            let ca = std::fs::read_to_string(home.join("ca/ca.pem"))?;
            measure(&mut rows, name, Via::Proxy(addr), Some(wf.0.id()), origin, &[ca], secs).await;
        }
        match mitmdump() {
            Some((py, dir)) => {
                let conf = work.join("mitm");
                let (m, addr) = spawn_mitm(
                    &py,
                    &dir,
                    &conf,
                    &["--set", &format!("ssl_verify_upstream_trusted_ca={}", ca_file.display())],
                )?;
                let ca = std::fs::read_to_string(conf.join("mitmproxy-ca-cert.pem"))?;
                measure(&mut rows, "mitmproxy 12", Via::Proxy(addr), Some(m.0.id()), origin, &[ca], secs)
                    .await;
            }
            None => println!(
                "mitmproxy 12 could not be installed (needs pyenv Python 3.13 and PyPI): peer column missing"
            ),
        }
        print_table("proxy throughput", &rows, "webfreeze proxy", "direct (ceiling)", "mitmproxy 12");
        println!("\ntargets: webfreeze >= 0.50 of the ceiling; >= 10x mitmproxy");
        anyhow::Ok(())
    })?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// `throughput_only`: the first table alone (for profiling the hot path), skipping the store-bound cells and
/// the snapshot-size section.
/// `before`: another webfreeze binary (an older build) measured in the same run, replaying the same store.
pub(crate) fn run_replay(secs: f64, throughput_only: bool, before: Option<PathBuf>) -> anyhow::Result<()> {
    let bin = webfreeze_bin()?;
    if let Some(b) = &before {
        anyhow::ensure!(b.is_file(), "--before {}: no such binary", b.display());
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let work = std::env::temp_dir().join(format!("webfreeze-bench-replay-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    rt.block_on(async {
        let (origin, origin_ca) = start_origin(&work).await?;
        let ca_file = work.join("origin-ca.pem");
        let home = work.join("wf");
        let mut rows = Vec::new();
        println!("HTTPS keep-alive, HTTP/1.1, {secs}s per cell; replay answers from the store, the ceiling from memory");
        measure(&mut rows, "in-memory, in-process", Via::Direct(origin), None, origin, std::slice::from_ref(&origin_ca), secs).await;
        let (ceiling_proc, ceiling, ceiling_ca) = spawn_origin_process(&work)?;
        let pid = Some(ceiling_proc.0.id());
        measure(&mut rows, "in-memory (ceiling)", Via::Direct(ceiling), pid, ceiling, &[ceiling_ca], secs).await;
        // Record the two exchanges through webfreeze, then replay them.
        {
            let (rec, addr) = spawn_listening(&bin, &home, &["record", "--snapshot", "bench", "--upstream-ca", ca_file.to_str().unwrap_or("")])?;
            let ca = std::fs::read_to_string(home.join("ca/ca.pem"))?;
            fetch_sizes_once(addr, origin, &ca).await?;
            Command::new("kill").args(["-INT", &rec.0.id().to_string()]).status()?;
            let mut rec = rec;
            rec.0.wait()?;
        }
        {
            let (rep, addr) = spawn_listening(&bin, &home, &["replay", "--snapshot", "bench", "--no-inject-shim"])?;
            let ca = std::fs::read_to_string(home.join("ca/ca.pem"))?;
            measure(&mut rows, "webfreeze replay", Via::Proxy(addr), Some(rep.0.id()), origin, &[ca], secs).await;
        }
        if let Some(before) = &before {
            let (rep, addr) = spawn_listening(before, &home, &["replay", "--snapshot", "bench", "--no-inject-shim"])?;
            let ca = std::fs::read_to_string(home.join("ca/ca.pem"))?;
            measure(&mut rows, "replay, --before", Via::Proxy(addr), Some(rep.0.id()), origin, &[ca], secs).await;
        }
        match mitmdump() {
            Some((py, dir)) => {
                let conf = work.join("mitm");
                let flows = work.join("flows.mitm");
                {
                    let (rec, addr) = spawn_mitm(&py, &dir, &conf, &["-w", flows.to_str().unwrap_or(""), "--set", &format!("ssl_verify_upstream_trusted_ca={}", ca_file.display())])?;
                    let ca = std::fs::read_to_string(conf.join("mitmproxy-ca-cert.pem"))?;
                    fetch_sizes_once(addr, origin, &ca).await?;
                    Command::new("kill").args(["-INT", &rec.0.id().to_string()]).status()?;
                    let mut rec = rec;
                    rec.0.wait()?;
                }
                let (m, addr) = spawn_mitm(
                    &py,
                    &dir,
                    &conf,
                    &["-S", flows.to_str().unwrap_or(""), "--set", "server_replay_reuse=true", "--set", "server_replay_extra=404", "--set", "connection_strategy=lazy"],
                )?;
                let ca = std::fs::read_to_string(conf.join("mitmproxy-ca-cert.pem"))?;
                measure(&mut rows, "mitmproxy 12 replay", Via::Proxy(addr), Some(m.0.id()), origin, &[ca], secs).await;
            }
            None => println!("mitmproxy 12 could not be installed: peer column missing"),
        }
        print_table("replay throughput", &rows, "webfreeze replay", "in-memory (ceiling)", "mitmproxy 12 replay");
        println!("\ntargets: replay >= 0.80 of the ceiling; >= 20x mitmproxy server replay");
        if throughput_only {
            return anyhow::Ok(());
        }
        crate::replay_store_bench::run(&bin, &work, secs).await?;

        // Flatness in snapshot size: a 100- and a 100k-exchange snapshot.
        println!("\nreplay start, first request and RSS by snapshot size");
        println!("{:>10} {:>14} {:>16} {:>18} {:>12}", "exchanges", "start ms", "first req ms", "1000 reqs p50 ms", "peak RSS MB");
        for n in [100usize, 100_000] {
            let h = work.join(format!("snap{n}"));
            std::fs::create_dir_all(&h)?;
            let har = h.join("gen.har");
            gen::write_har(&har, n, 42)?;
            let st = Command::new(&bin).env("WEBFREEZE_HOME", &h).args(["snapshots", "import"]).arg(&har).args(["--snapshot", "big"]).stdout(Stdio::null()).status()?;
            anyhow::ensure!(st.success(), "import failed");
            let _ = std::fs::remove_file(&har);
            let t = Instant::now();
            let (rep, addr) = spawn_listening(&bin, &h, &["replay", "--snapshot", "big", "--no-inject-shim"])?;
            let start_ms = t.elapsed().as_secs_f64() * 1000.0;
            let ca = std::fs::read_to_string(h.join("ca/ca.pem"))?;
            let url = gen::url_for(n / 2);
            let uri: http::Uri = url.parse()?;
            let host = uri.host().unwrap_or("").to_string();
            let pq = uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_default();
            let t = Instant::now();
            let tls = load::client_tls(std::slice::from_ref(&ca));
            let mut s = load::connect(Via::Proxy(addr), &host, 443, tls.clone()).await?;
            let req = http::Request::builder().uri(&pq).header("host", &host).body(http_body_util::Empty::<Bytes>::new())?;
            use http_body_util::BodyExt;
            let res = s.send_request(req).await?;
            anyhow::ensure!(res.status() == 200, "first request: {}", res.status());
            let _ = res.into_body().collect().await?;
            let first_ms = t.elapsed().as_secs_f64() * 1000.0;
            let mut lat = Vec::new();
            for i in 0..1000usize {
                let url = gen::url_for((i * 7919) % n);
                let uri: http::Uri = url.parse()?;
                let host = uri.host().unwrap_or("").to_string();
                let pq = uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_default();
                let mut s = load::connect(Via::Proxy(addr), &host, 443, tls.clone()).await?;
                let t = Instant::now();
                let res = s.send_request(http::Request::builder().uri(&pq).header("host", &host).body(http_body_util::Empty::<Bytes>::new())?).await?;
                anyhow::ensure!(res.status() == 200);
                let _ = res.into_body().collect().await?;
                lat.push(t.elapsed().as_micros() as u64);
            }
            lat.sort_unstable();
            let rss = peak_rss_kib(rep.0.id()) as f64 / 1024.0;
            println!("{n:>10} {start_ms:>14.1} {first_ms:>16.2} {:>18.3} {rss:>12.1}", pct_ms(&lat, 50.0));
        }
        anyhow::Ok(())
    })?;
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
