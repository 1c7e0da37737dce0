//! Local origin servers: HTTP and HTTPS (throwaway CA), h1 and h2, with the paths the scenarios need
//! (echo, gzip/br, chunked, redirects, cookies, a gate, a hang, WebSocket, a changing site).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Notify;

pub(crate) type BoxBody = http_body_util::combinators::BoxBody<Bytes, std::io::Error>;

pub(crate) fn full(b: impl Into<Bytes>) -> BoxBody {
    Full::new(b.into()).map_err(|n| match n {}).boxed()
}

/// A throwaway CA and a leaf for the origin's names, for HTTPS origins.
pub(crate) struct OriginTls {
    pub ca_pem: String,
    pub server: Arc<rustls::ServerConfig>,
    /// The leaf and its key (PEM), for origins that are not rustls (the Python fingerprint origin).
    pub leaf_pem: String,
    pub key_pem: String,
}

pub(crate) fn origin_tls(names: &[&str], alpn: &[&[u8]]) -> OriginTls {
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
    let (leaf_pem, key_pem) = (leaf.pem(), leaf_key.serialize_pem());
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
    OriginTls { ca_pem: ca_cert.pem(), server: Arc::new(cfg), leaf_pem, key_pem }
}

/// What the origin observed.
#[derive(Default)]
pub(crate) struct OriginStats {
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
    /// Requests per path, for the paths that count them (the sign-in app under `/app/`).
    pub paths: std::sync::Mutex<std::collections::HashMap<String, usize>>,
}

/// A value that differs on every call (server timestamps and random ids of the dynamic site).
pub(crate) fn volatile() -> u128 {
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
        // A page whose picture the origin holds (`/gate`) until the test releases it.
        "/site/held" => site_page("Held picture", "<img src=\"/gate?bytes=4096\" alt=held>", stats),
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
pub(crate) struct Origin {
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

pub(crate) fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

pub(crate) fn brotli_enc(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli::BrotliCompress(&mut &data[..], &mut out, &brotli::enc::BrotliEncoderParams::default()).unwrap();
    out
}

pub(crate) const HELLO: &str = "hello from the origin";
pub(crate) const PAGE: &str = "<!doctype html><html><head><title>webfreeze test page</title></head><body><p id=t>hello from the origin</p></body></html>";

struct DropFlag(Arc<OriginStats>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.infinite_dropped.store(true, Ordering::SeqCst);
        self.0.dropped.notify_waiters();
        self.0.dropped.notify_one();
    }
}

/// A site that rate-limits (under `/wall/`): its home page links two pages, a log-out link, a page that
/// answers 429, and one more page after it. Requests are counted per path.
fn wall_route(path: &str, stats: &OriginStats) -> Option<Response<BoxBody>> {
    let page = |title: &str, body: &str| {
        let mut r = Response::new(full(format!(
            "<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>"
        )));
        r.headers_mut().insert("content-type", "text/html; charset=utf-8".parse().unwrap());
        r
    };
    let r = match path {
        "/wall/" => page(
            "Reading room",
            "<a href=/wall/a>Shelf A</a> <a href=/wall/logout>Log out</a> <a href=/wall/b>Shelf B</a> \
             <a href=/wall/limited>Archive</a> <a href=/wall/c>Shelf C</a>",
        ),
        "/wall/a" | "/wall/b" | "/wall/c" | "/wall/logout" => {
            let name = path.trim_start_matches("/wall/");
            page(&format!("Shelf {name}"), &format!("<p>The books of shelf {name}.</p>"))
        }
        "/wall/limited" => {
            let mut r = page("Too Many Requests", "<p>Slow down.</p>");
            *r.status_mut() = StatusCode::TOO_MANY_REQUESTS;
            r
        }
        _ => return None,
    };
    *stats.paths.lock().unwrap().entry(path.to_string()).or_default() += 1;
    Some(r)
}

/// A page whose script asks for a URL it makes from `Math.random()` and `Date.now()` (a cache-buster and a
/// time stamp, under names no replay rule knows), then shows the answer: `/rand/data` echoes its query.
fn rand_route(uri: &http::Uri) -> Option<Response<BoxBody>> {
    let (body, ct) = match uri.path() {
        "/rand/" => (
            "<!doctype html><html><head><title>Random</title><link rel=icon href=\"data:,\"></head><body>\
             <p id=out></p><script>fetch('/rand/data?zq=' + Math.random() + '&zw=' + Date.now()).then(r => r.text())\
             .then(t => { const d = document.createElement('p'); d.id = 'done'; d.textContent = t; \
             document.body.appendChild(d); });</script></body></html>"
                .to_string(),
            "text/html; charset=utf-8",
        ),
        "/rand/data" => (format!("asked for {}", uri.query().unwrap_or("")), "text/plain"),
        _ => return None,
    };
    let mut r = Response::new(full(body));
    r.headers_mut().insert("content-type", ct.parse().unwrap());
    Some(r)
}

/// A page for the settle wait's short-timer count (tests/settle.rs): "Fetch" asks `/timer/data` and shows
/// the answer as a link at once; "Fetch, then wait" shows it from a timer of [`TIMER_DELAY_MS`] after the
/// answer arrives, so only a wait that saw the pending timer observes it.
pub(crate) const TIMER_DELAY_MS: u64 = 400;

fn timer_route(uri: &http::Uri) -> Option<Response<BoxBody>> {
    let (body, ct) = match uri.path() {
        "/timer/" => (
            format!(
                "<!doctype html><html><head><title>Timers</title><link rel=icon href=\"data:,\"></head><body>\
                 <button id=now>Fetch</button> <button id=later>Fetch, then wait</button><div id=out></div><script>\
                 const show = t => {{ const a = document.createElement('a'); a.href = '#'; a.textContent = t; \
                 document.getElementById('out').appendChild(a); }};\
                 document.getElementById('now').onclick = () => fetch('/timer/data?n=now').then(r => r.text()).then(show);\
                 document.getElementById('later').onclick = () => fetch('/timer/data?n=later').then(r => r.text())\
                 .then(t => setTimeout(() => show(t), {TIMER_DELAY_MS}));</script></body></html>"
            ),
            "text/html; charset=utf-8",
        ),
        "/timer/data" => (format!("answer {}", uri.query().unwrap_or("").trim_start_matches("n=")), "text/plain"),
        _ => return None,
    };
    let mut r = Response::new(full(body));
    r.headers_mut().insert("content-type", ct.parse().unwrap());
    Some(r)
}

/// A form whose text box, when it loses focus, starts a request the server never answers (`/unload/stash`,
/// as MediaWiki's edit stash does on `change`), while the click that took the focus submits the form: the
/// request is in flight when the next document commits (tests/settle.rs).
async fn unload_route(uri: &http::Uri) -> Option<Response<BoxBody>> {
    let page = |body: &str| {
        let mut r = Response::new(full(format!(
            "<!doctype html><html><head><title>Edit</title><link rel=icon href=\"data:,\"></head><body>{body}</body></html>"
        )));
        r.headers_mut().insert("content-type", "text/html; charset=utf-8".parse().unwrap());
        r
    };
    match uri.path() {
        "/unload/" => Some(page(
            "<form method=post action=/unload/saved><textarea name=t id=t></textarea><button>Save</button></form>\
             <script>document.getElementById('t').onchange = () => \
             fetch('/unload/stash', {method: 'POST', body: 'stash'});</script>",
        )),
        "/unload/saved" => Some(page("<h1>Saved</h1><a href=/unload/>Edit again</a>")),
        // An editor that warns before it is left with changes (MediaWiki's edit warning): leaving it
        // opens a `beforeunload` dialog.
        "/unload/warn" => Some(page(
            "<textarea id=t></textarea> <a href=/unload/saved>Elsewhere</a><script>\
             document.getElementById('t').oninput = () => { window.onbeforeunload = e => \
             { e.preventDefault(); e.returnValue = ''; }; };</script>",
        )),
        "/unload/stash" => {
            std::future::pending::<()>().await;
            None
        }
        _ => None,
    }
}

async fn route(req: Request<Incoming>, stats: Arc<OriginStats>, scheme: &'static str) -> Response<BoxBody> {
    stats.requests.fetch_add(1, Ordering::SeqCst);
    if req.uri().path().starts_with("/app/") {
        return super::login_app::app_route(req, &stats).await;
    }
    if let Some(r) = wall_route(req.uri().path(), &stats) {
        return r;
    }
    if let Some(r) = rand_route(req.uri()) {
        return r;
    }
    if let Some(r) = timer_route(req.uri()) {
        return r;
    }
    if let Some(r) = super::batch_origin::batch_route(req.uri()) {
        return r;
    }
    if let Some(r) = unload_route(req.uri()).await {
        return r;
    }
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
            match query.strip_prefix("bytes=").and_then(|v| v.parse::<usize>().ok()) {
                Some(n) => Response::new(full(vec![b'g'; n])),
                None => Response::new(full("released")),
            }
        }
        "/gate-body" => {
            // The head and a first 64 KiB at once, then `bytes=N` more once `release` is notified.
            let rest: usize = query.strip_prefix("bytes=").and_then(|v| v.parse().ok()).unwrap_or(1 << 20);
            let first = Bytes::from(vec![b'a'; 64 * 1024]);
            let stats = stats.clone();
            let frames = futures_util::stream::unfold(0u8, move |step| {
                let (first, stats) = (first.clone(), stats.clone());
                async move {
                    match step {
                        0 => Some((Ok::<_, std::io::Error>(Frame::data(first)), 1)),
                        1 => {
                            stats.release.notified().await;
                            Some((Ok(Frame::data(Bytes::from(vec![b'b'; rest]))), 2))
                        }
                        _ => None,
                    }
                }
            });
            let mut r = Response::new(StreamBody::new(frames).boxed());
            r.headers_mut().insert("content-length", (64 * 1024 + rest).to_string().parse().unwrap());
            r
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
    pub(crate) async fn start(tls: Option<OriginTls>) -> Origin {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::start_on(listener, tls).await
    }

    pub(crate) async fn start_on(listener: TcpListener, tls: Option<OriginTls>) -> Origin {
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
/// Read one HTTP/1.1 request head from `tcp`; its path (`None` if the peer closed first). For raw origins
/// that answer byte by byte.
pub(crate) async fn read_request_path(tcp: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match tcp.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let first = String::from_utf8_lossy(&head).lines().next().unwrap_or_default().to_string();
    Some(first.split(' ').nth(1).unwrap_or_default().to_string())
}

pub(crate) async fn truncating_origin() -> SocketAddr {
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
pub(crate) async fn https_origin(home: &Path, name: &str) -> (Origin, Vec<String>) {
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
