//! Test support: local origin servers (HTTP and HTTPS with a throwaway CA, h1 and h2), a client that goes
//! through a proxy (absolute-form for http, CONNECT + TLS for https), and a harness that runs the
//! `webfreeze` binary as a child process and reads its `listening on ADDR` line.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::convert::Infallible;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

pub type BoxBody = http_body_util::combinators::BoxBody<Bytes, std::io::Error>;

pub fn full(b: impl Into<Bytes>) -> BoxBody {
    Full::new(b.into()).map_err(|n| match n {}).boxed()
}

/// A throwaway CA and a leaf for the origin's names, for HTTPS origins.
pub struct OriginTls {
    pub ca_pem: String,
    pub server: Arc<rustls::ServerConfig>,
}

pub fn origin_tls(names: &[&str], alpn: &[&[u8]]) -> OriginTls {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(rcgen::DnType::CommonName, "throwaway test origin CA");
    ca_params.key_usages =
        vec![rcgen::KeyUsagePurpose::KeyCertSign, rcgen::KeyUsagePurpose::DigitalSignature];
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let mut leaf_params =
        rcgen::CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    leaf_params.subject_alt_names.push(rcgen::SanType::IpAddress("127.0.0.1".parse().unwrap()));
    let leaf = leaf_params.signed_by(&leaf_key, &issuer).unwrap();
    let mut cfg = rustls::ServerConfig::builder_with_provider(proxy::crypto_provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
        )
        .unwrap();
    cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    OriginTls { ca_pem: ca_cert.pem(), server: Arc::new(cfg) }
}

/// What the origin observed.
#[derive(Default)]
pub struct OriginStats {
    /// TCP connections accepted.
    pub connections: AtomicUsize,
    /// Requests served.
    pub requests: AtomicUsize,
    /// Set when the body of `/infinite` was dropped (its client went away).
    pub infinite_dropped: AtomicBool,
    /// Notified when `/infinite` is dropped.
    pub dropped: Notify,
    /// Notified when `/gate` has arrived; `/gate` answers once `release` is notified.
    pub gate_arrived: Notify,
    pub release: Notify,
    /// Shown by the dynamic site's pages: a "changed origin" bumps it.
    pub generation: AtomicUsize,
}

/// A value that differs on every call (server timestamps and random ids of the dynamic site).
pub fn volatile() -> u128 {
    static N: AtomicUsize = AtomicUsize::new(0);
    #[allow(clippy::disallowed_methods)] // the live site is supposed to change with the wall clock
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    now + N.fetch_add(1, Ordering::SeqCst) as u128
}

fn site_page(title: &str, extra: &str, stats: &OriginStats) -> Response<BoxBody> {
    let v = volatile();
    let html = format!(
        "<!doctype html><html><head><title>{title}</title><link rel=icon href=\"data:,\">\
         <style>body{{font-family:sans-serif;margin:20px}} img{{width:40px;height:40px}}</style></head><body>\
         <h1>{title}</h1><p id=server>served at {v} id {id:x} generation {g}</p>{extra}\
         <p><a href=/site/p2>page two</a> <a href=/site/p3>page three</a></p>\
         <img src=/site/logo.svg alt=logo>\
         <script src=\"/site/app.js?v={v}\"></script></body></html>",
        id = v.wrapping_mul(2654435761),
        g = stats.generation.load(Ordering::SeqCst)
    );
    let mut r = Response::new(full(html));
    r.headers_mut().insert("content-type", "text/html; charset=utf-8".parse().unwrap());
    r.headers_mut().insert("cache-control", "no-store".parse().unwrap());
    r
}

const SITE_JS: &str = r#"(function(){
  var d = document.createElement('p'); d.id = 'js';
  d.textContent = 'js: ' + new Date().toISOString() + ' ' + Math.random().toFixed(10) + ' ' + crypto.getRandomValues(new Uint32Array(1))[0];
  document.body.appendChild(d);
  var x = new XMLHttpRequest();
  x.open('POST', '/site/api/search');
  x.setRequestHeader('content-type', 'application/json');
  x.onload = function() {
    var r = document.createElement('p'); r.id = 'xhr'; r.textContent = 'xhr: ' + x.responseText; document.body.appendChild(r);
    var done = document.createElement('p'); done.id = 'done'; done.textContent = 'done'; document.body.appendChild(done);
  };
  x.send(JSON.stringify({q: 'socks', n: 2}));
})();"#;

async fn site_route(req: Request<Incoming>, stats: &OriginStats) -> Option<Response<BoxBody>> {
    let path = req.uri().path().to_string();
    let cookie =
        req.headers().get("cookie").map(|v| v.to_str().unwrap_or("").to_string()).unwrap_or_default();
    Some(match path.as_str() {
        "/site/" => {
            let mut r = site_page("Shop home", "", stats);
            r.headers_mut().insert("set-cookie", format!("visit={:x}; Path=/", volatile()).parse().unwrap());
            r
        }
        "/site/p2" => site_page("Page two", &format!("<p id=cookie>cookie {cookie}</p>"), stats),
        "/site/p3" => site_page("Page three", "", stats),
        "/site/p4" => site_page("Page four", "", stats),
        "/site/redirect" => {
            let mut r = Response::new(full(""));
            *r.status_mut() = StatusCode::FOUND;
            r.headers_mut().insert("location", "/site/p2".parse().unwrap());
            r
        }
        "/site/app.js" => {
            let mut r = Response::new(full(SITE_JS));
            r.headers_mut().insert("content-type", "application/javascript".parse().unwrap());
            r
        }
        "/site/logo.svg" => {
            let c = volatile() % 0xffffff;
            let svg = format!("<svg xmlns='http://www.w3.org/2000/svg' width='40' height='40'><rect width='40' height='40' fill='#{c:06x}'/></svg>");
            let mut r = Response::new(full(svg));
            r.headers_mut().insert("content-type", "image/svg+xml".parse().unwrap());
            r
        }
        "/site/api/search" => {
            let body = req.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
            let q: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
            let json = serde_json::json!({"query": q["q"], "results": ["wool socks", "cotton socks"], "server_time": volatile().to_string()});
            let mut r = Response::new(full(json.to_string()));
            r.headers_mut().insert("content-type", "application/json".parse().unwrap());
            r
        }
        _ => return None,
    })
}

/// A local origin server.
pub struct Origin {
    pub addr: SocketAddr,
    pub stats: Arc<OriginStats>,
    pub ca_pem: Option<String>,
    shutdown: Arc<Notify>,
}

impl Drop for Origin {
    fn drop(&mut self) {
        self.shutdown.notify_waiters();
    }
}

pub fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

pub fn brotli_enc(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut &data[..], &mut out, &brotli::enc::BrotliEncoderParams::default()).unwrap();
    out
}

pub const HELLO: &str = "hello from the origin";
pub const PAGE: &str = "<!doctype html><html><head><title>webfreeze test page</title></head><body><p id=t>hello from the origin</p></body></html>";

struct DropFlag(Arc<OriginStats>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.infinite_dropped.store(true, Ordering::SeqCst);
        self.0.dropped.notify_waiters();
        self.0.dropped.notify_one();
    }
}

async fn route(req: Request<Incoming>, stats: Arc<OriginStats>, scheme: &'static str) -> Response<BoxBody> {
    stats.requests.fetch_add(1, Ordering::SeqCst);
    if req.uri().path().starts_with("/site/") {
        if let Some(r) = site_route(req, &stats).await {
            return r;
        }
        let mut r = Response::new(full("not found"));
        *r.status_mut() = StatusCode::NOT_FOUND;
        return r;
    }
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let mut res = match path.as_str() {
        "/hello" => Response::new(full(HELLO)),
        "/page" => {
            let mut r = Response::new(full(PAGE));
            r.headers_mut().insert("content-type", "text/html; charset=utf-8".parse().unwrap());
            r
        }
        "/chunked" => {
            let frames =
                (0..5).map(|i| Ok::<_, std::io::Error>(Frame::data(Bytes::from(format!("chunk{i};")))));
            Response::new(StreamBody::new(futures_util::stream::iter(frames)).boxed())
        }
        "/gzip" => {
            let mut r = Response::new(full(gzip(HELLO.as_bytes())));
            r.headers_mut().insert("content-encoding", "gzip".parse().unwrap());
            r
        }
        "/br" => {
            let mut r = Response::new(full(brotli_enc(HELLO.as_bytes())));
            r.headers_mut().insert("content-encoding", "br".parse().unwrap());
            r
        }
        "/redirect" => {
            let mut r = Response::new(full(""));
            *r.status_mut() = StatusCode::FOUND;
            r.headers_mut().insert("location", "/hello".parse().unwrap());
            r
        }
        "/cookie" => {
            let seen =
                req.headers().get("cookie").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
            let mut r = Response::new(full(format!("cookie={seen}")));
            r.headers_mut().append("set-cookie", "session=abc; Path=/; HttpOnly".parse().unwrap());
            r.headers_mut().append("set-cookie", "theme=dark; Path=/".parse().unwrap());
            r
        }
        "/echo" => {
            let (parts, body) = req.into_parts();
            let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
            let mut headers: Vec<String> = parts
                .headers
                .iter()
                .map(|(k, v)| format!("{}: {}", k.as_str(), v.to_str().unwrap_or("?")))
                .collect();
            headers.sort();
            let text = format!(
                "{} {} {}\n{}\n\n{}",
                parts.method,
                scheme,
                parts.uri.path_and_query().map(|p| p.as_str()).unwrap_or("/"),
                headers.join("\n"),
                String::from_utf8_lossy(&body)
            );
            return Response::new(full(text));
        }
        "/altsvc" => {
            let mut r = Response::new(full("alt"));
            r.headers_mut().insert("alt-svc", "h3=\":443\"; ma=86400".parse().unwrap());
            r.headers_mut().insert("connection", "x-hop".parse().unwrap());
            r.headers_mut().insert("x-hop", "secret".parse().unwrap());
            r.headers_mut().insert("x-kept", "yes".parse().unwrap());
            r
        }
        "/stream" => {
            let total: u64 = query.strip_prefix("bytes=").and_then(|v| v.parse().ok()).unwrap_or(1 << 20);
            let chunk = Bytes::from(vec![b'x'; 64 * 1024]);
            let n = total / chunk.len() as u64;
            let frames = (0..n).map(move |_| Ok::<_, std::io::Error>(Frame::data(chunk.clone())));
            let mut r = Response::new(StreamBody::new(futures_util::stream::iter(frames)).boxed());
            r.headers_mut().insert("content-length", (n * 64 * 1024).to_string().parse().unwrap());
            r
        }
        "/infinite" => {
            let flag = DropFlag(stats.clone());
            let s = futures_util::stream::unfold(flag, |flag| async move {
                tokio::task::yield_now().await;
                Some((Ok::<_, std::io::Error>(Frame::data(Bytes::from(vec![b'i'; 16 * 1024]))), flag))
            });
            Response::new(StreamBody::new(s).boxed())
        }
        "/counter" => {
            let n = stats.requests.load(Ordering::SeqCst);
            Response::new(full(format!("request number {n}")))
        }
        "/hang" => {
            std::future::pending::<()>().await;
            unreachable!()
        }
        "/gate" => {
            stats.gate_arrived.notify_one();
            stats.release.notified().await;
            Response::new(full("released"))
        }
        "/ws" => {
            let upgrade = hyper::upgrade::on(req);
            tokio::spawn(async move {
                if let Ok(up) = upgrade.await {
                    let mut io = TokioIo::new(up);
                    let mut buf = [0u8; 1024];
                    loop {
                        match io.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => {
                                let mut echo = b"echo:".to_vec();
                                echo.extend_from_slice(&buf[..n]);
                                if io.write_all(&echo).await.is_err() {
                                    break;
                                }
                            }
                        }
                    }
                }
            });
            let mut r = Response::new(full(""));
            *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
            r.headers_mut().insert("upgrade", "websocket".parse().unwrap());
            r.headers_mut().insert("connection", "upgrade".parse().unwrap());
            return r;
        }
        _ => {
            let mut r = Response::new(full("not found"));
            *r.status_mut() = StatusCode::NOT_FOUND;
            r
        }
    };
    res.headers_mut().insert("x-origin-scheme", scheme.parse().unwrap());
    res
}

impl Origin {
    /// Start an origin on 127.0.0.1:0. With `tls`, HTTPS with the given server config.
    pub async fn start(tls: Option<OriginTls>) -> Origin {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::start_on(listener, tls).await
    }

    pub async fn start_on(listener: TcpListener, tls: Option<OriginTls>) -> Origin {
        let addr = listener.local_addr().unwrap();
        let stats = Arc::new(OriginStats::default());
        let shutdown = Arc::new(Notify::new());
        let ca_pem = tls.as_ref().map(|t| t.ca_pem.clone());
        let acceptor = tls.map(|t| tokio_rustls::TlsAcceptor::from(t.server));
        let (st, sd) = (stats.clone(), shutdown.clone());
        tokio::spawn(async move {
            loop {
                let (tcp, _) = tokio::select! {
                    r = listener.accept() => match r { Ok(x) => x, Err(_) => continue },
                    _ = sd.notified() => break,
                };
                st.connections.fetch_add(1, Ordering::SeqCst);
                let st = st.clone();
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let scheme = if acceptor.is_some() { "https" } else { "http" };
                    let svc = service_fn(move |req| {
                        let st = st.clone();
                        async move { Ok::<_, Infallible>(route(req, st, scheme).await) }
                    });
                    let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    match acceptor {
                        Some(a) => {
                            if let Ok(tls) = a.accept(tcp).await {
                                let _ = builder.serve_connection_with_upgrades(TokioIo::new(tls), svc).await;
                            }
                        }
                        None => {
                            let _ = builder.serve_connection_with_upgrades(TokioIo::new(tcp), svc).await;
                        }
                    }
                });
            }
        });
        Origin { addr, stats, ca_pem, shutdown }
    }
}

/// An origin that answers every request with a fixed status line, a Content-Length of 100 and only 10
/// body bytes, then closes: a response cut short.
pub async fn truncating_origin() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = l.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let _ = tcp.read(&mut buf).await;
                let _ = tcp.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 100\r\n\r\n0123456789").await;
                let _ = tcp.shutdown().await;
            });
        }
    });
    addr
}

/// An HTTPS origin (h2 and http/1.1) for `name` with a throwaway CA, and the proxy options that reach it:
/// `--upstream-ca <its CA>` and `--resolve NAME:443:ADDR`.
pub async fn https_origin(home: &Path, name: &str) -> (Origin, Vec<String>) {
    let origin = Origin::start(Some(origin_tls(&[name], &[b"h2", b"http/1.1"]))).await;
    let ca_file = home.join(format!("origin-ca-{}.pem", origin.addr.port()));
    std::fs::write(&ca_file, origin.ca_pem.as_ref().unwrap()).unwrap();
    let reach = vec![
        "--upstream-ca".to_string(),
        ca_file.display().to_string(),
        "--resolve".to_string(),
        format!("{name}:443:{}", origin.addr),
    ];
    (origin, reach)
}

/// The `webfreeze` binary run as a child process.
pub struct Webfreeze {
    pub child: Child,
    pub addr: SocketAddr,
    pub home: PathBuf,
    pub stderr_path: PathBuf,
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_webfreeze")
}

impl Webfreeze {
    /// Run `webfreeze ARGS --listen 127.0.0.1:0` with WEBFREEZE_HOME=home and wait for `listening on`.
    pub fn spawn(home: &Path, args: &[&str]) -> Webfreeze {
        let stderr_path = home.join(format!(
            "stderr-{}.log",
            args.join("_").replace(['/', ':', '.'], "_").chars().take(60).collect::<String>()
        ));
        let stderr = std::fs::File::create(&stderr_path).unwrap();
        let mut child = Command::new(bin())
            .args(args)
            .args(["--listen", "127.0.0.1:0"])
            .env("WEBFREEZE_HOME", home)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let addr = line
            .strip_prefix("listening on ")
            .unwrap_or_else(|| {
                panic!(
                    "first line was {line:?}; stderr: {}",
                    std::fs::read_to_string(&stderr_path).unwrap_or_default()
                )
            })
            .trim()
            .parse()
            .unwrap();
        Webfreeze { child, addr, home: home.to_path_buf(), stderr_path }
    }

    /// Like [`Webfreeze::spawn`], with extra owned arguments (e.g. from [`https_origin`]).
    pub fn spawn_with(home: &Path, args: &[&str], extra: &[String]) -> Webfreeze {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(extra.iter().map(String::as_str));
        Self::spawn(home, &all)
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Send a signal (INT, TERM) and wait for the exit status.
    pub fn signal_and_wait(&mut self, sig: &str) -> std::process::ExitStatus {
        Command::new("kill").args([&format!("-{sig}"), &self.child.id().to_string()]).status().unwrap();
        self.child.wait().unwrap()
    }

    /// Peak resident memory of the child (VmHWM), in KiB.
    pub fn peak_rss_kib(&self) -> u64 {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        s.lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    pub fn ca_pem_path(&self) -> PathBuf {
        self.home.join("ca/ca.pem")
    }
}

impl Drop for Webfreeze {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Run `webfreeze ARGS` to completion with WEBFREEZE_HOME=home.
pub fn run_cli(home: &Path, args: &[&str]) -> std::process::Output {
    Command::new(bin()).args(args).env("WEBFREEZE_HOME", home).output().unwrap()
}

/// A rustls client config trusting the given PEM roots.
pub fn client_tls(roots_pem: &[&str], alpn: &[&[u8]]) -> Arc<rustls::ClientConfig> {
    let mut roots = rustls::RootCertStore::empty();
    for pem in roots_pem {
        for c in rustls_pemfile::certs(&mut pem.as_bytes()) {
            roots.add(c.unwrap()).unwrap();
        }
    }
    let mut cfg = rustls::ClientConfig::builder_with_provider(proxy::crypto_provider())
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(cfg)
}

/// A response as the test sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Got {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub version: http::Version,
}

impl Got {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

async fn collect(res: Response<Incoming>) -> Got {
    let status = res.status().as_u16();
    let version = res.version();
    let headers = res
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
        .collect();
    let body = res.into_body().collect().await.unwrap().to_bytes().to_vec();
    Got { status, headers, body, version }
}

/// How to reach a URL.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Via {
    Direct,
    Proxy(SocketAddr),
}

/// Send one request for `url` (absolute) directly or through a proxy. `h2` picks ALPN h2 for https.
/// `connect_to` is where the origin really is (the URL's host may be a name only the proxy resolves).
pub async fn fetch(
    via: Via,
    url: &str,
    connect_to: SocketAddr,
    roots: &[&str],
    h2: bool,
    req: Request<Full<Bytes>>,
) -> Got {
    let uri: http::Uri = url.parse().unwrap();
    let https = uri.scheme_str() == Some("https");
    let host = uri.host().unwrap().to_string();
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let (mut parts, body) = req.into_parts();
    let tcp = match via {
        Via::Direct => TcpStream::connect(connect_to).await.unwrap(),
        Via::Proxy(p) => TcpStream::connect(p).await.unwrap(),
    };
    if !https {
        parts.uri = uri.clone();
        if matches!(via, Via::Direct) {
            parts.uri = uri.path_and_query().unwrap().as_str().parse().unwrap();
        }
        parts.headers.insert("host", uri.authority().unwrap().as_str().parse().unwrap());
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await.unwrap();
        tokio::spawn(conn);
        return collect(sender.send_request(Request::from_parts(parts, body)).await.unwrap()).await;
    }
    let mut tcp = tcp;
    if let Via::Proxy(_) = via {
        tcp.write_all(format!("CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut buf = Vec::new();
        let mut byte = [0u8; 1];
        while !buf.ends_with(b"\r\n\r\n") {
            tcp.read_exact(&mut byte).await.unwrap();
            buf.push(byte[0]);
        }
        assert!(buf.starts_with(b"HTTP/1.1 200"), "CONNECT answered {}", String::from_utf8_lossy(&buf));
    }
    let alpn: &[&[u8]] = if h2 { &[b"h2"] } else { &[b"http/1.1"] };
    let tls = tokio_rustls::TlsConnector::from(client_tls(roots, alpn))
        .connect(ServerName::try_from(host.clone()).unwrap(), tcp)
        .await
        .unwrap();
    let negotiated_h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
    assert_eq!(negotiated_h2, h2, "ALPN");
    if h2 {
        parts.uri = uri.clone();
        parts.version = http::Version::HTTP_2;
        let (mut sender, conn) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tls)).await.unwrap();
        tokio::spawn(conn);
        collect(sender.send_request(Request::from_parts(parts, body)).await.unwrap()).await
    } else {
        parts.uri = uri.path_and_query().unwrap().as_str().parse().unwrap();
        parts.headers.insert("host", uri.authority().unwrap().as_str().parse().unwrap());
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls)).await.unwrap();
        tokio::spawn(conn);
        collect(sender.send_request(Request::from_parts(parts, body)).await.unwrap()).await
    }
}

/// Which Chromium to use: $WEBFREEZE_CHROME, else /usr/bin/chromium. A missing browser is an error
/// that says how to install it, never a skip.
pub fn chromium_path() -> PathBuf {
    let p = std::env::var_os("WEBFREEZE_CHROME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        p.exists(),
        "Chromium not found at {} : install it with `apt-get install -y chromium` (or set WEBFREEZE_CHROME)",
        p.display()
    );
    p
}

/// What the fake model answers.
pub enum Reply {
    /// A chat completion with this text.
    Text(String),
    /// An HTTP error status.
    Status(u16),
}

/// One request the fake model received.
#[derive(Clone, Debug)]
pub struct Seen {
    pub auth: Option<String>,
    pub body: serde_json::Value,
}

/// A local server speaking the OpenAI chat-completions API with scripted replies; it keeps every request
/// so tests can check what the client sent.
pub struct FakeLlm {
    pub addr: SocketAddr,
    pub seen: Arc<std::sync::Mutex<Vec<Seen>>>,
}

impl FakeLlm {
    pub fn api_base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    pub async fn start(reply: impl Fn(&serde_json::Value) -> Reply + Send + Sync + 'static) -> FakeLlm {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen: Arc<std::sync::Mutex<Vec<Seen>>> = Arc::default();
        let reply = Arc::new(reply);
        let log = seen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else { return };
                let (reply, log) = (reply.clone(), log.clone());
                tokio::spawn(async move {
                    let svc = service_fn(move |req: Request<Incoming>| {
                        let (reply, log) = (reply.clone(), log.clone());
                        async move {
                            let auth = req
                                .headers()
                                .get(http::header::AUTHORIZATION)
                                .map(|v| v.to_str().unwrap().to_string());
                            let path = req.uri().path().to_string();
                            let bytes = req.into_body().collect().await.unwrap().to_bytes();
                            let body: serde_json::Value =
                                serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
                            log.lock().unwrap().push(Seen { auth, body: body.clone() });
                            let res = if path != "/v1/chat/completions" {
                                Response::builder().status(404).body(full("no such endpoint")).unwrap()
                            } else {
                                match reply(&body) {
                                    Reply::Text(t) => {
                                        let v = serde_json::json!({
                                            "id": "fake", "object": "chat.completion", "model": body["model"],
                                            "choices": [{"index": 0, "finish_reason": "stop",
                                                         "message": {"role": "assistant", "content": t}}],
                                            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
                                        });
                                        Response::builder()
                                            .header("content-type", "application/json")
                                            .body(full(v.to_string()))
                                            .unwrap()
                                    }
                                    Reply::Status(s) => Response::builder()
                                        .status(s)
                                        .body(full(format!("{{\"error\": \"scripted {s}\"}}")))
                                        .unwrap(),
                                }
                            };
                            Ok::<_, Infallible>(res)
                        }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tcp), svc)
                        .await;
                });
            }
        });
        FakeLlm { addr, seen }
    }
}

/// The text of a chat request's first user message (the task statement).
pub fn first_user_text(body: &serde_json::Value) -> String {
    let msgs = body["messages"].as_array().cloned().unwrap_or_default();
    let Some(m) = msgs.iter().find(|m| m["role"] == "user") else { return String::new() };
    match &m["content"] {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(parts) => {
            parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(" ")
        }
        _ => String::new(),
    }
}

/// Images attached across a chat request.
pub fn image_count(body: &serde_json::Value) -> usize {
    body["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .filter_map(|m| m["content"].as_array())
                .flatten()
                .filter(|p| p["type"] == "image_url")
                .count()
        })
        .unwrap_or(0)
}

/// The bundled demo sites on a loopback port, with the options that reach them through a proxy.
pub struct DemoSites {
    pub sites: Arc<demo::Sites>,
    pub reach: Vec<String>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl DemoSites {
    pub async fn start(home: &Path) -> DemoSites {
        let sites =
            // Certificate validity needs the real time.
            Arc::new(demo::Sites::new(&home.join("sites-ca"), #[allow(clippy::disallowed_methods)] time::OffsetDateTime::now_utc()).unwrap());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let ca = home.join("sites-ca.pem");
        std::fs::write(&ca, sites.ca_pem()).unwrap();
        let mut reach = vec!["--upstream-ca".to_string(), ca.display().to_string()];
        for r in demo::resolve_args(addr) {
            reach.push("--resolve".into());
            reach.push(r);
        }
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(sites.clone().serve(listener, async move {
            let _ = rx.await;
        }));
        DemoSites { sites, reach, stop: Some(tx) }
    }

    /// Stop serving: later connections are refused.
    pub fn stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

/// SIGKILL every process whose command line contains `pattern` (read from /proc); returns how many.
pub fn kill_matching(pattern: &str) -> usize {
    let me = std::process::id().to_string();
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !name.chars().all(|c| c.is_ascii_digit()) || name == me {
            continue;
        }
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmd).contains(pattern) {
                pids.push(name);
            }
        }
    }
    if !pids.is_empty() {
        let _ = Command::new("sh").arg("-c").arg(format!("kill -9 {}", pids.join(" "))).status();
    }
    pids.len()
}

/// Run the binary with WEBFREEZE_HOME=home and extra environment.
pub fn run_cli_env(home: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    Command::new(bin()).args(args).env("WEBFREEZE_HOME", home).envs(env.iter().copied()).output().unwrap()
}

/// The binary run off the async runtime (so in-process servers keep serving), timed on stderr.
pub async fn cli(home: &Path, args: Vec<String>, env: Vec<(String, String)>) -> std::process::Output {
    let home = home.to_path_buf();
    let t0 = std::time::Instant::now();
    let what = args.iter().take(6).cloned().collect::<Vec<_>>().join(" ");
    let _guard = Elapsed(t0, what);
    tokio::task::spawn_blocking(move || {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let e: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        run_cli_env(&home, &a, &e)
    })
    .await
    .unwrap()
}

/// Prints how long a CLI call took (shown with --nocapture, and on failure).
struct Elapsed(std::time::Instant, String);

impl Drop for Elapsed {
    fn drop(&mut self) {
        eprintln!("[{:>6.1}s] {}", self.0.elapsed().as_secs_f64(), self.1);
    }
}

pub fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}
