//! An HTTPS origin for the crawl: a small site with real-looking chrome (a navigation bar with log-in,
//! log-out and an "about" page on every page), twelve articles linking each other in their main content, an
//! `?add-to-cart=` link, a robots.txt that disallows `/private/`, a page whose script calls a cross-origin
//! API (`api.test`, answered on the same server, CORS allowed), and a counter of every request by path (what
//! the crawl loaded, and how often; `OPTIONS PATH` for preflights). Article pages count how many of them
//! were being answered at once ([`CrawlOrigin::most_at_once`]); once [`CrawlOrigin::hold_articles`] is
//! called, each holds its answer until a second one arrives (at most [`HOLD`]), so a crawl that loads two
//! at once is seen doing so.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::sync::Notify;

use super::origin::{full, origin_tls, BoxBody};

/// Articles on the site.
pub(crate) const CRAWL_ARTICLES: usize = 12;

pub(crate) struct CrawlOrigin {
    pub addr: SocketAddr,
    pub ca_pem: String,
    /// Requests by path and query.
    pub hits: Arc<Mutex<BTreeMap<String, usize>>>,
    at_once: Arc<AtOnce>,
    shutdown: Arc<Notify>,
}

/// How long an article waits for a second one to be asked for at the same time.
pub(crate) const HOLD: std::time::Duration = std::time::Duration::from_secs(3);

/// Article requests being answered now, and the most at one time.
#[derive(Default)]
struct AtOnce {
    now: Mutex<(usize, usize)>,
    arrived: Notify,
    hold: std::sync::atomic::AtomicBool,
}

impl Drop for CrawlOrigin {
    fn drop(&mut self) {
        self.shutdown.notify_waiters();
    }
}

impl CrawlOrigin {
    /// From now on an article waits for a second one (at most [`HOLD`]) before it is answered.
    pub(crate) fn hold_articles(&self) {
        self.at_once.hold.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// The most article pages that were being answered at one time.
    pub(crate) fn most_at_once(&self) -> usize {
        self.at_once.now.lock().unwrap().1
    }

    /// How often `path` (with its query) was asked for.
    pub(crate) fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

fn page(title: &str, main: &str) -> Response<BoxBody> {
    let mut r = Response::new(full(format!(
        "<!doctype html><html><head><title>{title}</title><link rel=\"search\" \
         type=\"application/opensearchdescription+xml\" href=\"/opensearch.xml\"></head><body>\
         <nav><a href=\"/login\">Log in</a> <a href=\"/logout\">Log out</a> <a href=\"/about\">About</a></nav>\
         <main><h1>{title}</h1>{main}</main><footer><a href=\"/about\">About this site</a></footer></body></html>"
    )));
    r.headers_mut().insert("content-type", "text/html; charset=utf-8".parse().unwrap());
    r
}

fn route(req: &Request<Incoming>) -> Response<BoxBody> {
    let path = req.uri().path();
    let host = req
        .uri()
        .host()
        .map(str::to_string)
        .or_else(|| {
            req.headers()
                .get("host")
                .and_then(|h| h.to_str().ok())
                .map(|h| h.split(':').next().unwrap_or(h).to_string())
        })
        .unwrap_or_default();
    if host == "api.test" {
        let mut r = if req.method() == http::Method::OPTIONS {
            let mut r = Response::new(full(""));
            *r.status_mut() = StatusCode::NO_CONTENT;
            r.headers_mut().insert("access-control-allow-headers", "*".parse().unwrap());
            r
        } else {
            let mut r = Response::new(full(r#"{"name": "Fern"}"#));
            r.headers_mut().insert("content-type", "application/json".parse().unwrap());
            r
        };
        r.headers_mut().insert("access-control-allow-origin", "*".parse().unwrap());
        return r;
    }
    let article =
        |n: usize| format!("<a href=\"/a/{}\">Article {}</a>", n % CRAWL_ARTICLES, n % CRAWL_ARTICLES);
    match path {
        "/robots.txt" => {
            let mut r = Response::new(full("User-agent: *\nDisallow: /private/\n"));
            r.headers_mut().insert("content-type", "text/plain".parse().unwrap());
            r
        }
        "/" => page(
            "Home",
            &format!(
                "<p>{} {} {}</p><p><a href=\"/shop?add-to-cart=7\">Add to cart</a> <a href=\"/private/secret\">Secret</a> \
                 <a href=\"/api-page\">Plants</a></p>",
                article(0),
                article(1),
                article(2)
            ),
        ),
        "/login" | "/about" | "/private/secret" | "/logout" | "/shop" => page(path, "<p>x</p>"),
        // No link leads here: only an agent told its address (a `goto`) finds it.
        "/orphan" => page("Orphan", "<p>Orphan answer</p>"),
        "/opensearch.xml" => {
            let mut r = Response::new(full(
                "<OpenSearchDescription><Url type=\"text/html\" template=\"https://crawl.test/find?q={searchTerms}\"/></OpenSearchDescription>",
            ));
            r.headers_mut().insert("content-type", "application/opensearchdescription+xml".parse().unwrap());
            r
        }
        // A page whose only control calls the cross-origin API when clicked (a simple GET: no preflight of
        // its own).
        "/click-page" => {
            let mut r = Response::new(full(
                "<!doctype html><html><head><title>Click</title></head><body><p id=name>...</p>\
                 <button onclick=\"fetch('https://api.test/data.json').then(r => r.json())\
                 .then(d => { document.getElementById('name').textContent = d.name; })\">Load plants</button>\
                 </body></html>",
            ));
            r.headers_mut().insert("content-type", "text/html; charset=utf-8".parse().unwrap());
            r
        }
        "/api-page" => page(
            "Plants",
            "<p id=name>...</p><script>fetch('https://api.test/data.json').then(r => r.json())\
             .then(d => { document.getElementById('name').textContent = d.name; });</script>",
        ),
        p if p.starts_with("/a/") => {
            let n: usize = p[3..].parse().unwrap_or(0);
            page(&format!("Article {n}"), &format!("<p>Text {n}. See {} and {}.</p>", article(n + 3), article(n + 5)))
        }
        _ => {
            let mut r = Response::new(full("not found"));
            *r.status_mut() = StatusCode::NOT_FOUND;
            r
        }
    }
}

impl CrawlOrigin {
    /// Start on 127.0.0.1:0 as `name` (HTTPS, a throwaway CA).
    pub(crate) async fn start(name: &str) -> CrawlOrigin {
        let tls = origin_tls(&[name, "api.test"], &[b"h2", b"http/1.1"]);
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let hits = Arc::new(Mutex::new(BTreeMap::new()));
        let shutdown = Arc::new(Notify::new());
        let acceptor = tokio_rustls::TlsAcceptor::from(tls.server);
        let at_once = Arc::new(AtOnce::default());
        let (sd, h, once) = (shutdown.clone(), hits.clone(), at_once.clone());
        tokio::spawn(async move {
            loop {
                let (tcp, _) = tokio::select! {
                    r = listener.accept() => match r { Ok(x) => x, Err(_) => continue },
                    _ = sd.notified() => break,
                };
                let (acceptor, h, once) = (acceptor.clone(), h.clone(), once.clone());
                tokio::spawn(async move {
                    let svc = service_fn(move |req: Request<Incoming>| {
                        let (h, once) = (h.clone(), once.clone());
                        async move {
                            let mut key =
                                req.uri().path_and_query().map(|p| p.to_string()).unwrap_or_default();
                            if req.method() == http::Method::OPTIONS {
                                key = format!("OPTIONS {key}");
                            }
                            *h.lock().unwrap().entry(key).or_insert(0) += 1;
                            if !req.uri().path().starts_with("/a/") {
                                return Ok::<_, Infallible>(route(&req));
                            }
                            let alone = {
                                let mut n = once.now.lock().unwrap();
                                n.0 += 1;
                                n.1 = n.1.max(n.0);
                                n.0 == 1
                            };
                            once.arrived.notify_waiters();
                            if alone && once.hold.load(std::sync::atomic::Ordering::SeqCst) {
                                let _ = tokio::time::timeout(HOLD, once.arrived.notified()).await;
                            }
                            let r = route(&req);
                            once.now.lock().unwrap().0 -= 1;
                            Ok::<_, Infallible>(r)
                        }
                    });
                    if let Ok(tls) = acceptor.accept(tcp).await {
                        let b = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                        let _ = b.serve_connection(TokioIo::new(tls), svc).await;
                    }
                });
            }
        });
        CrawlOrigin { addr, ca_pem: tls.ca_pem, hits, at_once, shutdown }
    }
}
