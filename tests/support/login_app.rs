//! A small sign-in application under `/app/` on the test origin, for issue 22's "replayed after the
//! lifetimes have passed" test. Everything it hands out lives [`LIFE_SECS`] seconds:
//! - `POST /app/login` sets the session cookie by header (`sid`, absolute `Expires` = its `Date` + LIFE);
//! - the welcome page sets a preference cookie by script (`pref`, `expires` = the page's `Date.now()` +
//!   LIFE);
//! - every page uses `/app/s.css` and `/app/app.js`, served with `Cache-Control: max-age=LIFE` and a `Date`.
//!
//! The account and orders pages say, server side, whether the session cookie came back, and, by script,
//! which cookies the page can see; so a cookie lost, or a resource fetched again, shows.
//!
//! For the warm browsers' isolation test: `GET /app/visit` leaves state behind in the browser (the session
//! cookie by header, a cookie by script, a localStorage item, the cached stylesheet and script), and
//! `GET /app/probe` shows what a page finds there (server side: the session cookie; by script: the cookies
//! and the localStorage item).

use http::{Method, Request, Response};
use hyper::body::Incoming;

use super::origin::{full, BoxBody, OriginStats};

/// How long the app's cookies and cached resources live.
pub(crate) const LIFE_SECS: u64 = 8;

/// An HTTP date (`Wed, 25 Nov 2026 06:38:22 GMT`) `plus` seconds from now.
fn http_date(plus: u64) -> String {
    #[allow(clippy::disallowed_methods)] // an origin dates its responses by the wall clock
    let t = time::OffsetDateTime::now_utc() + time::Duration::seconds(plus as i64);
    let f = time::macros::format_description!(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
    );
    t.format(&f).unwrap()
}

fn page(body: &str) -> Response<BoxBody> {
    let html = format!(
        "<!doctype html><html><head><title>App</title><link rel=icon href=\"data:,\">\
         <link rel=stylesheet href=/app/s.css><script src=/app/app.js></script></head><body>{body}</body></html>"
    );
    let mut r = Response::new(full(html));
    r.headers_mut().insert("content-type", "text/html; charset=utf-8".parse().unwrap());
    r.headers_mut().insert("cache-control", "no-store".parse().unwrap());
    r.headers_mut().insert("date", http_date(0).parse().unwrap());
    r
}

fn cached(body: &'static str, content_type: &str) -> Response<BoxBody> {
    let mut r = Response::new(full(body));
    r.headers_mut().insert("content-type", content_type.parse().unwrap());
    r.headers_mut().insert("cache-control", format!("max-age={LIFE_SECS}").parse().unwrap());
    r.headers_mut().insert("date", http_date(0).parse().unwrap());
    r
}

/// What the script on the account and orders pages shows: the cookies it can see.
const SHOW_COOKIES: &str =
    "<p id=c></p><script>document.getElementById('c').textContent = 'script sees: ' + document.cookie</script>";

/// Answer a request under `/app/`, counting it per path in `stats.paths`.
pub(crate) async fn app_route(req: Request<Incoming>, stats: &OriginStats) -> Response<BoxBody> {
    let path = req.uri().path().to_string();
    *stats.paths.lock().unwrap().entry(path.clone()).or_default() += 1;
    let signed_in = req
        .headers()
        .get_all("cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .any(|c| c.trim() == "sid=s-ann");
    let state = if signed_in { "Signed in as ann" } else { "Signed out" };
    match (req.method().clone(), path.as_str()) {
        (Method::GET, "/app/login") => page(
            "<h1>Sign in</h1><form id=f method=post action=/app/login>\
             <input name=user value=ann><button>Sign in</button></form>",
        ),
        (Method::POST, "/app/login") => {
            let mut r = page(&format!(
                "<h1>Welcome ann</h1><p>Your session lasts {LIFE_SECS} seconds.</p>\
                 <script>document.cookie = 'pref=compact; expires=' + \
                 new Date(Date.now() + {LIFE_SECS}000).toUTCString() + '; path=/app'</script>\
                 <a id=next href=/app/account>Your account</a>"
            ));
            let cookie = format!("sid=s-ann; Expires={}; Path=/app; Secure", http_date(LIFE_SECS));
            r.headers_mut().insert("set-cookie", cookie.parse().unwrap());
            r
        }
        (Method::GET, "/app/account") => page(&format!(
            "<h1>Account</h1><p id=s>{state}</p>{SHOW_COOKIES}<a id=next href=/app/orders>Your orders</a>"
        )),
        (Method::GET, "/app/orders") => {
            let orders = if signed_in { "Orders: kettle, teapot" } else { "Orders: sign in to see them" };
            page(&format!("<h1>Orders</h1><p id=s>{state}</p><p>{orders}</p>{SHOW_COOKIES}"))
        }
        (Method::GET, "/app/visit") => {
            let mut r = page(
                "<h1>Visited</h1><script>document.cookie = 'pref=compact; max-age=3600; path=/app'; \
                 localStorage.setItem('visited', 'yes')</script>",
            );
            r.headers_mut().insert("set-cookie", "sid=s-ann; Max-Age=3600; Path=/app; Secure".parse().unwrap());
            r
        }
        (Method::GET, "/app/probe") => page(&format!(
            "<h1>Probe</h1><p id=s>{state}</p>{SHOW_COOKIES}<p id=l></p><script>\
             document.getElementById('l').textContent = 'storage: ' + (localStorage.getItem('visited') || 'none')\
             </script>"
        )),
        (Method::GET, "/app/s.css") => cached("h1 { color: rgb(1, 2, 3) }", "text/css"),
        (Method::GET, "/app/app.js") => cached("window.appVersion = 7;", "text/javascript"),
        _ => {
            let mut r = Response::new(full("not found"));
            *r.status_mut() = http::StatusCode::NOT_FOUND;
            r
        }
    }
}
