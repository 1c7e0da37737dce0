//! The demo's stateful parts, for WebArena-style tasks whose `program_html` checks read what the agent
//! changed:
//!
//! - `forum.test`, a small Reddit: posts with votes; `/login` (any user name, password `demo`) sets a
//!   `forum_session` cookie; signed in, one can upvote (`POST /vote`) and submit posts (`POST /submit`);
//! - `shop.test`'s cart (`POST /cart/add`, `GET /cart`, per `wf_session` cookie, else a guest cart) and
//!   an admin page (`/admin`) that needs the `wf_session=abc123` cookie a storage-state file provides;
//! - `shop.test`'s orders and reviews, with Magento's URLs ([`orders`]), and the part of Magento's REST
//!   API that WebArena's shop helpers call ([`rest`]).
//!
//! The state lives in memory for the sites' lifetime (WebArena's `require_reset`: a fresh
//! [`crate::Sites`] is the reset). Everything is deterministic: no random tokens, no clock.

use std::collections::BTreeMap;
use std::sync::Mutex;

use bytes::Bytes;
use http::{header, HeaderMap, Method, Response, StatusCode};
use http_body_util::Full;

mod orders;
mod rest;

pub(crate) use orders::{Order, Review};

/// The password every forum user has.
pub const FORUM_PASSWORD: &str = "demo";

/// The shop's admin session (what the demo's storage-state file carries).
pub const SHOP_ADMIN_SESSION: &str = "abc123";

struct Post {
    title: String,
    body: String,
    author: String,
    votes: i64,
}

/// Posts, carts, orders and reviews.
pub(crate) struct State {
    posts: Mutex<Vec<Post>>,
    carts: Mutex<BTreeMap<String, Vec<String>>>,
    orders: Mutex<Vec<Order>>,
    reviews: Mutex<Vec<Review>>,
}

impl Default for State {
    fn default() -> Self {
        let post = |title: &str, body: &str, author: &str, votes| Post {
            title: title.into(),
            body: body.into(),
            author: author.into(),
            votes,
        };
        Self {
            posts: Mutex::new(vec![
                post("Welcome to the demo forum", "Be kind. Upvote what helps.", "admin", 12),
                post("Favourite kettle?", "Mine is the Blue Kettle from the Demo Shop.", "alice", 5),
                post("The comet is visible tonight", "Look north-east after 10 pm.", "priya", 9),
                post("Library weekend hours", "Open until 8 pm on Saturdays now.", "mei", 2),
            ]),
            carts: Mutex::new(BTreeMap::new()),
            orders: Mutex::new(orders::seed_orders()),
            reviews: Mutex::new(orders::seed_reviews()),
        }
    }
}

/// A response: status, content type, body, extra headers.
pub(crate) type Reply = Response<Full<Bytes>>;

fn reply(status: StatusCode, ctype: &'static str, body: String) -> Reply {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, http::HeaderValue::from_static(ctype));
    r
}

fn html(title: &str, body: &str) -> Reply {
    reply(StatusCode::OK, "text/html; charset=utf-8", crate::html_page(title, FORUM_HEAD, body))
}

fn redirect(to: &str, cookie: Option<String>) -> Reply {
    let mut r = reply(StatusCode::SEE_OTHER, "text/plain", String::new());
    if let Ok(v) = http::HeaderValue::from_str(to) {
        r.headers_mut().insert(header::LOCATION, v);
    }
    if let Some(c) = cookie.and_then(|c| http::HeaderValue::from_str(&c).ok()) {
        r.headers_mut().insert(header::SET_COOKIE, c);
    }
    r
}

const FORUM_HEAD: &str =
    "<style>body{font:16px/1.5 sans-serif;margin:24px}li{margin:6px 0}form.vote{display:inline}.votes{font-weight:bold}</style>";

/// A cookie's value.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|kv| {
            let (k, v) = kv.trim().split_once('=')?;
            (k == name && !v.is_empty()).then(|| v.to_string())
        })
}

fn form(body: &[u8]) -> BTreeMap<String, String> {
    form_urlencoded::parse(body).map(|(k, v)| (k.into_owned(), v.into_owned())).collect()
}

/// HTML-escape text or a double-quoted attribute value.
fn esc(s: &str) -> String {
    html_escape::encode_double_quoted_attribute(s).into_owned()
}

impl State {
    /// `forum.test`.
    pub(crate) fn forum(&self, method: &Method, path: &str, headers: &HeaderMap, body: &[u8]) -> Reply {
        let user = cookie(headers, "forum_session");
        let Ok(mut posts) = self.posts.lock() else {
            return reply(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", "state poisoned".into());
        };
        let who = match &user {
            Some(u) => format!(
                "<p id=user>Signed in as <b>{}</b> · <a href=\"/submit\">Submit a post</a></p>",
                esc(u)
            ),
            None => "<p id=user><a href=\"/login\">Log in</a></p>".to_string(),
        };
        let vote_form = |i: usize| {
            format!(
                "<form class=vote method=post action=\"/vote\"><input type=hidden name=id value={i}><button type=submit>Upvote</button></form>"
            )
        };
        match (method.as_str(), path) {
            ("GET", "/") => {
                let list: String = posts
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        format!(
                            "<li class=post id=post-{i}><a href=\"/post/{i}\">{}</a> <span class=votes>{}</span> points by {} {}</li>",
                            esc(&p.title),
                            p.votes,
                            esc(&p.author),
                            vote_form(i)
                        )
                    })
                    .collect();
                html("Demo Forum", &format!("<h1>Demo Forum</h1>{who}<ol id=posts>{list}</ol>"))
            }
            ("GET", "/login") => html(
                "Log in",
                "<h1>Log in</h1><form method=post action=\"/login\"><label>User name <input name=user id=user-name></label> \
                 <label>Password <input name=password type=password id=password></label> <button type=submit>Log in</button></form>",
            ),
            ("POST", "/login") => {
                let f = form(body);
                match (f.get("user").map(|u| u.trim()).filter(|u| !u.is_empty()), f.get("password")) {
                    (Some(u), Some(p)) if p == FORUM_PASSWORD => {
                        let u: String = u.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
                        redirect("/", Some(format!("forum_session={u}; Path=/; Secure; HttpOnly")))
                    }
                    _ => html("Log in", "<h1>Log in</h1><p class=error>Wrong user name or password.</p><p><a href=\"/login\">Try again</a></p>"),
                }
            }
            ("POST", "/vote") => {
                if user.is_none() {
                    return redirect("/login", None);
                }
                let id = form(body).get("id").and_then(|i| i.parse::<usize>().ok());
                match id.and_then(|i| posts.get_mut(i).map(|p| (i, p))) {
                    Some((i, p)) => {
                        p.votes += 1;
                        redirect(&format!("/post/{i}"), None)
                    }
                    None => reply(StatusCode::NOT_FOUND, "text/plain", "no such post".into()),
                }
            }
            ("GET", "/submit") => match user {
                None => redirect("/login", None),
                Some(_) => html(
                    "Submit a post",
                    &format!(
                        "<h1>Submit a post</h1>{who}<form method=post action=\"/submit\"><label>Title <input name=title id=title></label> \
                         <label>Text <textarea name=body id=body></textarea></label> <button type=submit>Post</button> \
                         <label>Image (optional) <input type=file name=image id=image accept=\"image/*\"></label></form>"
                    ),
                ),
            },
            ("POST", "/submit") => match user {
                None => redirect("/login", None),
                Some(u) => {
                    let f = form(body);
                    let title = f.get("title").map(|t| t.trim().to_string()).unwrap_or_default();
                    if title.is_empty() {
                        return html("Submit a post", "<h1>Submit a post</h1><p class=error>A post needs a title.</p>");
                    }
                    posts.push(Post { title, body: f.get("body").cloned().unwrap_or_default(), author: u, votes: 1 });
                    redirect(&format!("/post/{}", posts.len() - 1), None)
                }
            },
            ("GET", p) => match p.strip_prefix("/post/").and_then(|i| i.parse::<usize>().ok()).and_then(|i| posts.get(i).map(|x| (i, x))) {
                Some((i, post)) => html(
                    &post.title,
                    &format!(
                        "<p><a href=\"/\">Demo Forum</a></p>{who}<h1>{}</h1><p class=byline>by <span class=author>{}</span> · <span class=votes>{}</span> points {}</p><div class=body>{}</div>",
                        esc(&post.title),
                        esc(&post.author),
                        post.votes,
                        vote_form(i),
                        esc(&post.body)
                    ),
                ),
                None => reply(StatusCode::NOT_FOUND, "text/html; charset=utf-8", crate::html_page("Not found", "", "<h1>Not found</h1>")),
            },
            _ => reply(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "method not allowed".into()),
        }
    }

    /// `shop.test`'s stateful pages (`/cart/add`, `/cart`, `/admin`, orders, reviews, the REST API); None
    /// for the others.
    pub(crate) fn shop(
        &self,
        method: &Method,
        path: &str,
        query: &str,
        headers: &HeaderMap,
        body: &[u8],
        day: u32,
    ) -> Option<Reply> {
        if path.starts_with("/rest/") {
            return Some(self.rest(method, path, query, headers, body, day));
        }
        let session = cookie(headers, "wf_session").unwrap_or_else(|| "guest".into());
        if let Some(r) = self.orders_and_reviews(method, path, &session, body, day) {
            return Some(r);
        }
        let Ok(mut carts) = self.carts.lock() else {
            return Some(reply(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", "state poisoned".into()));
        };
        let head = format!("<link rel=stylesheet href=\"/static/style.css?v={day}\">");
        Some(match (method.as_str(), path) {
            ("POST", "/cart/add") => {
                let slug = form(body).get("slug").cloned().unwrap_or_default();
                if crate::product(&slug).is_none() {
                    return Some(reply(StatusCode::NOT_FOUND, "text/plain", "no such product".into()));
                }
                carts.entry(session).or_default().push(slug);
                redirect("/cart", None)
            }
            ("GET", "/cart") => {
                let items = carts.get(&session).cloned().unwrap_or_default();
                let (list, total) = crate::cart_lines(&items, day);
                let checkout = if items.is_empty() {
                    ""
                } else {
                    "<form method=post action=\"/checkout\"><button type=submit id=place-order>Place order</button></form>"
                };
                let body = format!(
                    "<header><a href=\"/\">Demo Shop</a></header><h1>Your cart</h1><ul id=cart>{list}</ul>\
                     <p>{} item(s), total <b id=total>{total}</b></p>{checkout}",
                    items.len()
                );
                reply(StatusCode::OK, "text/html; charset=utf-8", crate::html_page("Your cart", &head, &body))
            }
            ("GET", "/admin") => {
                if session != SHOP_ADMIN_SESSION {
                    let body = "<h1>Admin</h1><p class=error>Log in as the shop admin to see this page.</p>";
                    return Some(reply(
                        StatusCode::FORBIDDEN,
                        "text/html; charset=utf-8",
                        crate::html_page("Admin", &head, body),
                    ));
                }
                let rows: String = carts
                    .iter()
                    .map(|(who, items)| {
                        format!("<tr><td>{}</td><td class=n>{}</td></tr>", esc(who), items.len())
                    })
                    .collect();
                let body = format!(
                    "<h1>Admin</h1><p>Signed in as the shop admin.</p><table id=carts><tr><th>Cart</th><th>Items</th></tr>{rows}</table>"
                );
                reply(StatusCode::OK, "text/html; charset=utf-8", crate::html_page("Admin", &head, &body))
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(
        s: &State,
        method: Method,
        path: &str,
        cookie: Option<&str>,
        body: &str,
    ) -> (StatusCode, String, String) {
        let mut h = HeaderMap::new();
        if let Some(c) = cookie {
            h.insert(header::COOKIE, http::HeaderValue::from_str(c).unwrap());
        }
        let r = if path.starts_with("/cart") || path == "/admin" {
            s.shop(&method, path, "", &h, body.as_bytes(), 0).unwrap()
        } else {
            s.forum(&method, path, &h, body.as_bytes())
        };
        let h = |n| r.headers().get(n).map(|v: &http::HeaderValue| v.to_str().unwrap().to_string());
        let to =
            [h(header::LOCATION), h(header::SET_COOKIE)].into_iter().flatten().collect::<Vec<_>>().join(" ");
        let status = r.status();
        let body = body_text(r);
        (status, to, body)
    }

    fn body_text(r: Reply) -> String {
        use http_body_util::BodyExt as _;
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let b = rt.block_on(r.into_body().collect()).unwrap().to_bytes();
        String::from_utf8_lossy(&b).into_owned()
    }

    #[test]
    fn forum_and_cart_table() {
        let s = State::default();
        let alice = Some("forum_session=alice");
        // (method, path, cookie, body, status, Location / Set-Cookie, body contains)
        type Case<'a> = (Method, &'a str, Option<&'a str>, &'a str, u16, &'a str, &'a str);
        let cases: &[Case<'_>] = &[
            (Method::GET, "/", None, "", 200, "", "Log in"),
            (Method::POST, "/login", None, "user=alice&password=nope", 200, "", "Wrong user name"),
            (
                Method::POST,
                "/login",
                None,
                "user=alice&password=demo",
                303,
                "/ forum_session=alice; Path=/; Secure; HttpOnly",
                "",
            ),
            (Method::POST, "/vote", None, "id=1", 303, "/login", ""),
            (Method::POST, "/vote", alice, "id=1", 303, "/post/1", ""),
            (Method::GET, "/post/1", alice, "", 200, "", "<span class=votes>6</span>"),
            (Method::POST, "/vote", alice, "id=99", 404, "", "no such post"),
            (Method::GET, "/submit", None, "", 303, "/login", ""),
            (Method::POST, "/submit", alice, "title=&body=x", 200, "", "needs a title"),
            (Method::POST, "/submit", alice, "title=Hello&body=World", 303, "/post/4", ""),
            (Method::GET, "/", alice, "", 200, "", "Hello</a> <span class=votes>1</span> points by alice"),
            (Method::GET, "/post/7", None, "", 404, "", "Not found"),
            (Method::POST, "/cart/add", None, "slug=glass-jar", 303, "/cart", ""),
            (Method::POST, "/cart/add", None, "slug=nothing", 404, "", "no such product"),
            (Method::GET, "/cart", None, "", 200, "", "1 item(s), total <b id=total>$6.75</b>"),
            (Method::GET, "/admin", None, "", 403, "", "Log in as the shop admin"),
            (
                Method::GET,
                "/admin",
                Some("wf_session=abc123"),
                "",
                200,
                "",
                "<td>guest</td><td class=n>1</td>",
            ),
        ];
        for (i, (m, path, cookie, body, status, header, contains)) in cases.iter().enumerate() {
            let (st, h, b) = call(&s, m.clone(), path, *cookie, body);
            assert_eq!(st.as_u16(), *status, "case {i}: {b}");
            assert_eq!(h, *header, "case {i}");
            assert!(b.contains(contains), "case {i}: {b}");
        }
    }
}
