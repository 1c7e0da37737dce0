//! The bundled demo "live web": two small HTTPS sites on loopback whose content drifts with a day counter
//! the way real sites do, plus a WebVoyager-format task file with evaluation specs and scripted
//! trajectories. `webfreeze demo` and the tests use it; nothing here touches the network.
//!
//! - `shop.test`: products whose prices drift day by day (so the price-sorted list reorders), a daily
//!   promotion picked at random (seeded by the day), cache-busted assets (`app.js?v=DAY`), and a search
//!   box backed by an XHR JSON API whose requests carry a `Math.random()` cache-buster;
//! - `news.test`: headlines that rotate daily, article pages with author and section;
//! - `forum.test` and `shop.test`'s cart and admin page: state the agent changes (votes, posts, a cart;
//!   logins by cookie), for WebArena-format tasks ([`state`]).
//!
//! Sites are served over TLS with certificates from a throwaway CA of their own ([`Sites::ca_pem`]);
//! clients reach them with `--resolve shop.test:443:ADDR` and `--upstream-ca FILE`.

use std::future::Future;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::Full;
use hyper::body::Incoming;
use proxy::CertificateAuthority;
use tokio::net::TcpListener;

pub mod dokuwiki;
pub mod mediawiki;
pub mod php_site;
mod running;
pub mod state;
pub mod static_site;
pub use running::RunningSites;

/// Host names the demo serves.
pub const HOSTS: &[&str] = &["shop.test", "news.test", "forum.test"];

/// The `--resolve` values (`HOST:443:ADDR`) that send every demo host to sites served at `addr`.
pub fn resolve_args(addr: std::net::SocketAddr) -> Vec<String> {
    HOSTS.iter().map(|h| format!("{h}:443:{addr}")).collect()
}

/// Demo failures.
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    /// The throwaway CA could not be made.
    #[error("demo CA: {0}")]
    Ca(#[from] proxy::CaError),
    /// I/O.
    #[error("demo sites: {0}")]
    Io(#[from] std::io::Error),
}

/// The demo sites: their CA and their clock.
pub struct Sites {
    ca: CertificateAuthority,
    day: AtomicU32,
    state: state::State,
}

impl std::fmt::Debug for Sites {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sites").field("day", &self.day()).finish_non_exhaustive()
    }
}

impl Sites {
    /// New sites at day 0 with a fresh CA kept in `ca_dir` (created).
    pub fn new(ca_dir: &Path, now: time::OffsetDateTime) -> Result<Self, DemoError> {
        Ok(Self {
            ca: CertificateAuthority::init(ca_dir, true, now)?,
            day: AtomicU32::new(0),
            state: state::State::default(),
        })
    }

    /// PEM of the sites' CA (pass it to the proxy as `--upstream-ca`).
    pub fn ca_pem(&self) -> &str {
        self.ca.cert_pem()
    }

    /// The sites' current day.
    pub fn day(&self) -> u32 {
        self.day.load(Ordering::SeqCst)
    }

    /// Move the sites' clock: the live web drifts.
    pub fn set_day(&self, day: u32) {
        self.day.store(day, Ordering::SeqCst);
    }

    /// Serve until `shutdown` resolves. Each connection's TLS certificate is chosen by SNI.
    pub async fn serve(self: Arc<Self>, listener: TcpListener, shutdown: impl Future<Output = ()> + Send) {
        tokio::pin!(shutdown);
        loop {
            let (tcp, _) = tokio::select! {
                r = listener.accept() => match r { Ok(x) => x, Err(_) => continue },
                _ = &mut shutdown => return,
            };
            let sites = self.clone();
            tokio::spawn(async move {
                let acceptor =
                    tokio_rustls::LazyConfigAcceptor::new(rustls::server::Acceptor::default(), tcp);
                let Ok(start) = acceptor.await else { return };
                let host = start.client_hello().server_name().unwrap_or("shop.test").to_string();
                let Ok(cfg) = sites.ca.server_config(&host) else { return };
                let Ok(tls) = start.into_stream(cfg).await else { return };
                let svc = hyper::service::service_fn(move |req| {
                    let sites = sites.clone();
                    async move { Ok::<_, std::convert::Infallible>(sites.handle(req).await) }
                });
                let _ = hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new())
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), svc)
                    .await;
            });
        }
    }

    async fn handle(&self, req: Request<Incoming>) -> Response<Full<Bytes>> {
        use http_body_util::BodyExt as _;
        let (parts, body) = req.into_parts();
        let host = parts
            .uri
            .host()
            .map(str::to_string)
            .or_else(|| {
                parts.headers.get(http::header::HOST).and_then(|h| h.to_str().ok()).map(str::to_string)
            })
            .unwrap_or_default();
        let host = host.split(':').next().unwrap_or("").to_string();
        let path = parts.uri.path();
        let query = parts.uri.query().unwrap_or("");
        let day = self.day();
        // Form posts are small; a body past 1 MiB is refused.
        let body = match http_body_util::Limited::new(body, 1 << 20).collect().await {
            Ok(b) => b.to_bytes(),
            Err(_) => Bytes::new(),
        };
        let stateful = match host.as_str() {
            "forum.test" => Some(self.state.forum(&parts.method, path, &parts.headers, &body)),
            "shop.test" => self.state.shop(&parts.method, path, query, &parts.headers, &body, day),
            _ => None,
        };
        if let Some(mut res) = stateful {
            res.headers_mut().insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
            return res;
        }
        let photo = (host == "shop.test")
            .then(|| path.strip_prefix("/static/img/")?.strip_suffix(".png"))
            .flatten()
            .and_then(|slug| PRODUCTS.iter().find(|p| p.slug == slug));
        let (status, ctype, body) = match (host.as_str(), photo) {
            ("shop.test", Some(p)) => (StatusCode::OK, "image/png", Bytes::from(product_photo(p))),
            ("shop.test", None) => with_bytes(shop(path, query, day)),
            ("news.test", _) => with_bytes(news(path, day)),
            _ => (StatusCode::NOT_FOUND, "text/plain", Bytes::from(format!("no demo site {host}"))),
        };
        let mut res = Response::new(Full::new(body));
        *res.status_mut() = status;
        let h = res.headers_mut();
        h.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static(ctype));
        h.insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
        res
    }
}

fn with_bytes(
    (status, ctype, body): (StatusCode, &'static str, String),
) -> (StatusCode, &'static str, Bytes) {
    (status, ctype, Bytes::from(body))
}

/// A product's photo: a 96x96 PNG of its own colours and stripes (the same bytes every day), for
/// VisualWebArena-style image checks.
pub fn product_photo_of(slug: &str) -> Option<Vec<u8>> {
    PRODUCTS.iter().find(|p| p.slug == slug).map(product_photo)
}

fn product_photo(p: &Product) -> Vec<u8> {
    let h = fnv(&[p.slug, "photo"]);
    let bg = [(h & 0xff) as u8, ((h >> 8) & 0xff) as u8, ((h >> 16) & 0xff) as u8];
    let period = 6 + (h >> 24) % 14;
    let img = image::RgbImage::from_fn(96, 96, |x, y| {
        let stripe = ((u64::from(x) + u64::from(y) * ((h >> 32) % 3)) / period).is_multiple_of(2);
        let (dx, dy) = (i64::from(x) - 48, i64::from(y) - 48);
        if dx * dx + dy * dy < 400 {
            image::Rgb([255 - bg[0], 255 - bg[1], 255 - bg[2]])
        } else if stripe {
            image::Rgb(bg)
        } else {
            image::Rgb([bg[0] / 2, bg[1] / 2, bg[2] / 2])
        }
    });
    let mut out = std::io::Cursor::new(Vec::new());
    // Writing a PNG into memory cannot fail; an empty body would show as a broken image.
    let _ = img.write_to(&mut out, image::ImageFormat::Png);
    out.into_inner()
}

/// FNV-1a: a stable hash for the sites' daily randomness.
fn fnv(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

pub(crate) struct Product {
    /// Its page is `/product/SLUG` (and Magento's `/SLUG.html`); Magento's `url_key`.
    slug: &'static str,
    /// Magento's `sku` (what WebArena's REST helpers and order pages name).
    sku: &'static str,
    name: &'static str,
    cents: u64,
    reviews: u32,
}

const PRODUCTS: &[Product] = &[
    Product { slug: "blue-kettle", sku: "B0DEMO0001", name: "Blue Kettle", cents: 2400, reviews: 112 },
    Product { slug: "red-mug", sku: "B0DEMO0002", name: "Red Mug", cents: 850, reviews: 48 },
    Product { slug: "green-teapot", sku: "B0DEMO0003", name: "Green Teapot", cents: 3100, reviews: 27 },
    Product { slug: "steel-pan", sku: "B0DEMO0004", name: "Steel Pan", cents: 4200, reviews: 203 },
    Product { slug: "oak-board", sku: "B0DEMO0005", name: "Oak Board", cents: 1900, reviews: 65 },
    Product { slug: "glass-jar", sku: "B0DEMO0006", name: "Glass Jar", cents: 675, reviews: 15 },
];

/// The price on `day`: day 0 is the list price; later days drift by up to ±60%.
fn price(p: &Product, day: u32) -> u64 {
    if day == 0 {
        return p.cents;
    }
    let pct = (fnv(&[p.slug, &day.to_string()]) % 121) as i64 - 60;
    ((p.cents as i64) * (100 + pct) / 100).max(99) as u64
}

/// A product by its slug.
pub(crate) fn product(slug: &str) -> Option<&'static Product> {
    PRODUCTS.iter().find(|p| p.slug == slug)
}

/// A product by its SKU.
pub(crate) fn product_by_sku(sku: &str) -> Option<&'static Product> {
    PRODUCTS.iter().find(|p| p.sku == sku)
}

/// A cart's lines (`<li>`s) and total on `day`.
pub(crate) fn cart_lines(slugs: &[String], day: u32) -> (String, String) {
    let mut total = 0;
    let mut lines = String::new();
    for p in slugs.iter().filter_map(|s| product(s)) {
        total += price(p, day);
        lines.push_str(&format!("<li>{} <span class=price>{}</span></li>", p.name, money(price(p, day))));
    }
    (lines, money(total))
}

fn money(cents: u64) -> String {
    format!("${}.{:02}", cents / 100, cents % 100)
}

fn promo(day: u32) -> &'static Product {
    &PRODUCTS[(fnv(&["promo", &day.to_string()]) % PRODUCTS.len() as u64) as usize]
}

pub(crate) fn html_page(title: &str, head: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title>{head}</head><body>{body}</body></html>"
    )
}

fn shop(path: &str, query: &str, day: u32) -> (StatusCode, &'static str, String) {
    let head = format!(
        "<link rel=stylesheet href=\"/static/style.css?v={day}\"><script src=\"/static/app.js?v={day}\" defer></script>"
    );
    match path {
        "/" => {
            let mut items: Vec<&Product> = PRODUCTS.iter().collect();
            items.sort_by_key(|p| (price(p, day), p.slug));
            let list: String = items
                .iter()
                .map(|p| {
                    format!(
                        "<li><a href=\"/product/{}\">{}</a> <span class=price>{}</span></li>",
                        p.slug,
                        p.name,
                        money(price(p, day))
                    )
                })
                .collect();
            let pr = promo(day);
            let body = format!(
                "<header><h1>Demo Shop</h1><form id=search><input id=q name=q type=search placeholder=\"Search products\" aria-label=Search><button type=submit>Search</button></form></header>\
                 <p class=promo>Today only: <a href=\"/product/{}\">20% off {}</a></p>\
                 <div id=results></div><h2>All products, cheapest first</h2><ol id=products>{list}</ol>\
                 <footer>Prices as of <span id=asof></span></footer>",
                pr.slug, pr.name
            );
            (StatusCode::OK, "text/html; charset=utf-8", html_page("Demo Shop", &head, &body))
        }
        "/api/search" => {
            let q = form_urlencoded::parse(query.as_bytes())
                .find(|(k, _)| k == "q")
                .map(|(_, v)| v.to_lowercase())
                .unwrap_or_default();
            let hits: Vec<serde_json::Value> = PRODUCTS
                .iter()
                .filter(|p| !q.is_empty() && p.name.to_lowercase().contains(q.trim()))
                .map(|p| serde_json::json!({"slug": p.slug, "name": p.name, "price": money(price(p, day))}))
                .collect();
            (StatusCode::OK, "application/json", serde_json::json!({ "q": q, "results": hits }).to_string())
        }
        "/static/app.js" => (StatusCode::OK, "application/javascript", SHOP_JS.to_string()),
        "/static/style.css" => (StatusCode::OK, "text/css", SHOP_CSS.to_string()),
        _ => match path.strip_prefix("/product/").and_then(|s| PRODUCTS.iter().find(|p| p.slug == s)) {
            Some(p) => {
                let reviews = p.reviews + 3 * day;
                let left = 1 + p.reviews % 7;
                let body = format!(
                    "<header><a href=\"/\">Demo Shop</a></header><h1>{}</h1>\
                     <img class=photo src=\"/static/img/{}.png\" alt=\"{}\" width=96 height=96>\
                     <p>Price: <b id=price>{}</b></p>\
                     <p><span id=reviews>{reviews}</span> reviews</p>\
                     <p><a class=stock href=\"#stock\" data-hint=\"Only {left} left\">In stock</a> <span id=hint></span></p>\
                     <form method=post action=\"/cart/add\"><input type=hidden name=slug value=\"{}\"><button type=submit>Add to cart</button></form>\
                     <p class=sku>SKU <span id=sku>{}</span> · <a href=\"/review/product/list/id/{}/\">Reviews</a></p>",
                    p.name,
                    p.slug,
                    p.name,
                    money(price(p, day)),
                    p.slug,
                    p.sku,
                    p.slug
                );
                (StatusCode::OK, "text/html; charset=utf-8", html_page(p.name, &head, &body))
            }
            None => (
                StatusCode::NOT_FOUND,
                "text/html; charset=utf-8",
                html_page("Not found", "", "<h1>Not found</h1>"),
            ),
        },
    }
}

const SHOP_JS: &str = r#"document.addEventListener('DOMContentLoaded', () => {
  const asof = document.getElementById('asof');
  if (asof) asof.textContent = new Date().toISOString().slice(0, 10);
  // Hovering a hint shows it (WebArena's hover action has something to read).
  for (const el of document.querySelectorAll('[data-hint]')) {
    el.addEventListener('mouseenter', () => { document.getElementById('hint').textContent = el.dataset.hint; });
  }
  const form = document.getElementById('search');
  if (!form) return;
  form.addEventListener('submit', ev => {
    ev.preventDefault();
    const q = document.getElementById('q').value;
    fetch('/api/search?q=' + encodeURIComponent(q) + '&_=' + Math.random().toString(36).slice(2))
      .then(r => r.json())
      .then(data => {
        const out = document.getElementById('results');
        out.innerHTML = '';
        const h = document.createElement('h2');
        h.textContent = data.results.length + ' result(s) for "' + data.q + '"';
        out.appendChild(h);
        for (const p of data.results) {
          const a = document.createElement('a');
          a.href = '/product/' + p.slug;
          a.textContent = p.name + ' (' + p.price + ')';
          const d = document.createElement('div');
          d.appendChild(a);
          out.appendChild(d);
        }
      });
  });
});"#;

const SHOP_CSS: &str =
    "body{font:16px/1.5 sans-serif;margin:24px;color:#222}header{display:flex;gap:24px;align-items:center}\
.promo{background:#ffe9a8;padding:8px}.price{color:#075}#results div{margin:4px 0}";

struct Article {
    slug: &'static str,
    title: &'static str,
    author: &'static str,
    section: &'static str,
}

const ARTICLES: &[Article] = &[
    Article {
        slug: "river-bridge",
        title: "City opens the new river bridge",
        author: "Ana Silva",
        section: "Local",
    },
    Article {
        slug: "rate-pause",
        title: "Central bank pauses rate rises",
        author: "Tom Becker",
        section: "Business",
    },
    Article {
        slug: "comet-visible",
        title: "Comet visible to the naked eye this week",
        author: "Priya Nair",
        section: "Science",
    },
    Article {
        slug: "cup-final",
        title: "Underdogs reach the cup final",
        author: "Leo Martin",
        section: "Sport",
    },
    Article {
        slug: "library-hours",
        title: "Libraries extend weekend hours",
        author: "Mei Tanaka",
        section: "Local",
    },
    Article {
        slug: "chip-plant",
        title: "Chip plant to hire 2,000 workers",
        author: "Omar Haddad",
        section: "Business",
    },
    Article {
        slug: "heat-record",
        title: "October heat record broken",
        author: "Sara Kowalski",
        section: "Weather",
    },
    Article {
        slug: "film-festival",
        title: "Film festival announces its lineup",
        author: "Jonas Berg",
        section: "Culture",
    },
];

fn news(path: &str, day: u32) -> (StatusCode, &'static str, String) {
    let head = format!("<link rel=stylesheet href=\"/static/news.css?v={day}\">");
    match path {
        "/" => {
            let n = ARTICLES.len();
            let list: String = (0..5)
                .map(|i| {
                    let a = &ARTICLES[(day as usize * 3 + i) % n];
                    format!(
                        "<li><a href=\"/article/{}\">{}</a> <small>{}</small></li>",
                        a.slug, a.title, a.section
                    )
                })
                .collect();
            // The weather desk opens in a new tab, as many real sites do.
            let body = format!(
                "<h1>The Demo Times</h1><h2>Top stories</h2><ol>{list}</ol>\
                 <p><a href=\"/article/heat-record\" target=\"_blank\">Weather desk</a></p>"
            );
            (StatusCode::OK, "text/html; charset=utf-8", html_page("The Demo Times", &head, &body))
        }
        "/static/news.css" => {
            (StatusCode::OK, "text/css", "body{font:17px/1.5 serif;margin:24px}small{color:#777}".into())
        }
        _ => match path.strip_prefix("/article/").and_then(|s| ARTICLES.iter().find(|a| a.slug == s)) {
            Some(a) => {
                let body = format!(
                    "<p><a href=\"/\">The Demo Times</a></p><h1>{}</h1><p class=byline>By <span id=author>{}</span> in <span id=section>{}</span></p>",
                    a.title, a.author, a.section
                );
                (StatusCode::OK, "text/html; charset=utf-8", html_page(a.title, &head, &body))
            }
            None => (
                StatusCode::NOT_FOUND,
                "text/html; charset=utf-8",
                html_page("Not found", "", "<h1>Not found</h1>"),
            ),
        },
    }
}

/// The demo's task file (WebVoyager's jsonl, plus an `eval` spec per task for the reference matchers).
pub const TASKS_JSONL: &str = include_str!("../tasks/demo_tasks.jsonl");

/// WebArena-format demo tasks (a `test.raw.json`-style array; sites `__SHOPPING__`, `__REDDIT__`,
/// `__NEWS__`): a login, an upvote and a post on the forum, a cart filled from the second of two start
/// tabs, a storage-state admin page, hover, press, goto, an input image; every eval type but the ones that
/// need a model (string_match, url_match, program_html, page_image_query).
pub const WEBARENA_TASKS_JSON: &str = include_str!("../tasks/webarena_tasks.json");

/// WebArena-Verified tasks on the demo shop, in that benchmark's file format (an answer in its typed
/// JSON, network checks over the recorded requests); their replies are in [`WEBARENA_SCRIPTS_JSON`].
pub const WEBARENA_VERIFIED_TASKS_JSON: &str = include_str!("../tasks/webarena_verified_tasks.json");

/// The storage-state file [`WEBARENA_TASKS_JSON`] names (`./.auth/state.json`): bob's forum session and
/// the shop admin's.
pub const WEBARENA_AUTH_JSON: &str = include_str!("../tasks/webarena_auth.json");

/// Scripted replies for [`WEBARENA_TASKS_JSON`] in WebArena's grammar (ids are the day-0 pages'
/// Set-of-Marks labels).
pub const WEBARENA_SCRIPTS_JSON: &str = include_str!("../tasks/webarena_scripts.json");

/// Where the WebArena demo tasks' sites are.
pub const WEBARENA_SITES: &[&str] =
    &["SHOPPING=https://shop.test", "REDDIT=https://forum.test", "NEWS=https://news.test"];

/// Scripted trajectories: per task id, the model replies the trajectory policy replays (labels as the
/// day-0 pages number them).
pub const SCRIPTS_JSON: &str = include_str!("../tasks/demo_scripts.json");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_zero_is_list_price_and_later_days_drift() {
        for p in PRODUCTS {
            assert_eq!(price(p, 0), p.cents);
        }
        let moved = (1..10).filter(|d| PRODUCTS.iter().any(|p| price(p, *d) != p.cents)).count();
        assert_eq!(moved, 9);
        assert_eq!(money(675), "$6.75");
    }

    #[test]
    fn search_api_finds_by_name() {
        let (s, _, body) = shop("/api/search", "q=Kettle", 0);
        assert_eq!(s, StatusCode::OK);
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["results"][0]["name"], "Blue Kettle");
        assert_eq!(v["results"][0]["price"], "$24.00");
    }
}
