//! `shop.test`'s orders and reviews, at Magento's URLs, for WebArena-style tasks scored by the shop's
//! REST helpers (`shopping_get_latest_order_url`, `shopping_get_sku_latest_review_*`):
//!
//! - `POST /checkout` turns the session's cart into an order and shows it at
//!   `/sales/order/view/order_id/N/` (Magento's order page markup: `.order-details-items.ordered`,
//!   `#my-orders-table`, one `tbody` per line); `/sales/order/history/` lists the session's orders;
//! - `/review/product/list/id/SLUG/` lists a product's reviews and has the form that posts one
//!   (nickname, summary, review, a 1-5 star rating) to `/review/product/post/id/SLUG/`;
//! - `/SLUG.html` is the product's page (Magento's `url_key` URL).
//!
//! Two orders of another customer and a review per product exist from the start, so the REST answers
//! are never empty and "the latest" is a real choice. Times are derived from the order's or review's
//! number (no clock).

use http::{Method, StatusCode};

use super::{esc, form, redirect, reply, Reply, State, SHOP_ADMIN_SESSION};

/// An order: whose, its lines (slug, quantity, unit price in cents), its number.
pub(crate) struct Order {
    pub(crate) id: u64,
    pub(crate) session: String,
    pub(crate) lines: Vec<(&'static str, u32, u64)>,
}

impl Order {
    /// Magento's `increment_id`.
    pub(crate) fn increment_id(&self) -> String {
        format!("{:09}", self.id)
    }

    /// `created_at`, in Magento's format: one minute per order after a fixed start.
    pub(crate) fn created_at(&self) -> String {
        format!("2026-03-01 {:02}:{:02}:00", 9 + self.id / 60, self.id % 60)
    }

    /// The total, in cents.
    pub(crate) fn total(&self) -> u64 {
        self.lines.iter().map(|(_, q, c)| u64::from(*q) * c).sum()
    }
}

/// A product review.
pub(crate) struct Review {
    pub(crate) id: u64,
    pub(crate) slug: &'static str,
    pub(crate) nickname: String,
    pub(crate) title: String,
    pub(crate) detail: String,
    /// 1 to 5 stars.
    pub(crate) stars: u8,
}

impl Review {
    /// `created_at`: one minute per review after a fixed start.
    pub(crate) fn created_at(&self) -> String {
        format!("2026-02-01 {:02}:{:02}:00", 9 + self.id / 60, self.id % 60)
    }
}

/// The session of the customer whose orders exist from the start.
const SEED_CUSTOMER: &str = "seed-customer";

/// The orders that exist from the start.
pub(crate) fn seed_orders() -> Vec<Order> {
    let line = |slug: &'static str, qty| {
        let p = crate::product(slug).map_or(0, |p| p.cents);
        (slug, qty, p)
    };
    vec![
        Order { id: 1, session: SEED_CUSTOMER.into(), lines: vec![line("red-mug", 2), line("oak-board", 1)] },
        Order { id: 2, session: SEED_CUSTOMER.into(), lines: vec![line("steel-pan", 1)] },
    ]
}

/// One review per product from the start.
pub(crate) fn seed_reviews() -> Vec<Review> {
    let seeds: [(&'static str, &str, &str, &str, u8); 6] = [
        ("blue-kettle", "Emma Lopez", "Boils fast", "A litre in three minutes, and quiet.", 5),
        ("red-mug", "Sam Okafor", "Nice colour", "The red has not faded after a year of washing.", 4),
        ("green-teapot", "Mei", "Drips a little", "Pretty, but the spout drips when pouring fast.", 3),
        ("steel-pan", "Jonas", "Heavy and even", "Heats evenly; heavy for one hand.", 4),
        ("oak-board", "Ana", "Solid board", "Thick oak, no warping so far.", 5),
        ("glass-jar", "Leo", "Lid is loose", "The jar is fine, the lid does not seal.", 2),
    ];
    seeds
        .iter()
        .enumerate()
        .map(|(i, (slug, nick, title, detail, stars))| Review {
            id: i as u64 + 1,
            slug,
            nickname: (*nick).into(),
            title: (*title).into(),
            detail: (*detail).into(),
            stars: *stars,
        })
        .collect()
}

fn page(title: &str, body: &str, day: u32) -> Reply {
    let head = format!("<link rel=stylesheet href=\"/static/style.css?v={day}\">");
    let body = format!(
        "<header><a href=\"/\">Demo Shop</a> <a href=\"/sales/order/history/\">My orders</a></header>{body}"
    );
    reply(StatusCode::OK, "text/html; charset=utf-8", crate::html_page(title, &head, &body))
}

fn not_found(what: &str) -> Reply {
    reply(
        StatusCode::NOT_FOUND,
        "text/html; charset=utf-8",
        crate::html_page("Not found", "", &format!("<h1>Not found</h1><p>{}</p>", esc(what))),
    )
}

/// The order page's table of lines, as Magento marks it up.
fn order_table(o: &Order) -> String {
    let rows: String = o
        .lines
        .iter()
        .filter_map(|(slug, qty, cents)| {
            let p = crate::product(slug)?;
            Some(format!(
                "<tbody><tr><td class=\"col name\">{}</td><td class=\"col sku\">{}</td><td class=\"col price\">{}</td>\
                 <td class=\"col qty\">Ordered {qty}</td><td class=\"col subtotal\">{}</td></tr></tbody>",
                p.name,
                p.sku,
                crate::money(*cents),
                crate::money(u64::from(*qty) * cents)
            ))
        })
        .collect();
    format!(
        "<div class=\"order-details-items ordered\"><table class=\"data table table-order-items\" id=\"my-orders-table\">\
         <thead><tr><th>Product Name</th><th>SKU</th><th>Price</th><th>Qty</th><th>Subtotal</th></tr></thead>{rows}\
         <tfoot><tr><th colspan=4>Grand Total</th><td class=grand-total>{}</td></tr></tfoot></table></div>",
        crate::money(o.total())
    )
}

impl State {
    /// The pages above; None for any other path.
    pub(super) fn orders_and_reviews(
        &self,
        method: &Method,
        path: &str,
        session: &str,
        body: &[u8],
        day: u32,
    ) -> Option<Reply> {
        let poisoned = || reply(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", "state poisoned".into());
        if let Some(slug) = path.strip_prefix('/').and_then(|p| p.strip_suffix(".html")) {
            let p = crate::product(slug)?;
            let (status, ctype, body) = crate::shop(&format!("/product/{}", p.slug), "", day);
            return Some(reply(status, ctype, body));
        }
        if let Some(rest) = path.strip_prefix("/review/product/") {
            let (action, slug) = rest.trim_end_matches('/').split_once("/id/")?;
            let Some(p) = crate::product(slug) else { return Some(not_found("No such product.")) };
            let Ok(mut reviews) = self.reviews.lock() else { return Some(poisoned()) };
            return Some(match (method.as_str(), action) {
                ("GET", "list") => {
                    let list: String = reviews
                        .iter()
                        .filter(|r| r.slug == p.slug)
                        .map(|r| {
                            format!(
                                "<li class=review><b class=review-title>{}</b> by <span class=review-author>{}</span> \
                                 <span class=rating>{}%</span><p class=review-detail>{}</p></li>",
                                esc(&r.title),
                                esc(&r.nickname),
                                u32::from(r.stars) * 20,
                                esc(&r.detail)
                            )
                        })
                        .collect();
                    let stars: String = (1..=5)
                        .map(|n| {
                            format!(
                                "<input type=radio name=rating value={n} id=rating-{n}><label for=rating-{n}>{n} star{}</label> ",
                                if n == 1 { "" } else { "s" }
                            )
                        })
                        .collect();
                    page(
                        &format!("Reviews of {}", p.name),
                        &format!(
                            "<h1>Reviews of <a href=\"/product/{}\">{}</a></h1><ol id=reviews>{list}</ol>\
                             <h2>Write your own review</h2><form method=post action=\"/review/product/post/id/{}/\">\
                             <fieldset><legend>Your rating</legend>{stars}</fieldset>\
                             <label>Nickname <input name=nickname id=nickname></label> \
                             <label>Summary <input name=title id=summary></label> \
                             <label>Review <textarea name=detail id=review></textarea></label> \
                             <button type=submit>Submit Review</button></form>",
                            p.slug, p.name, p.slug
                        ),
                        day,
                    )
                }
                ("POST", "post") => {
                    let f = form(body);
                    let field = |k: &str| f.get(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
                    let stars =
                        field("rating").and_then(|r| r.parse::<u8>().ok()).filter(|r| (1..=5).contains(r));
                    match (field("nickname"), field("title"), field("detail"), stars) {
                        (Some(nickname), Some(title), Some(detail), Some(stars)) => {
                            let id = reviews.len() as u64 + 1;
                            reviews.push(Review { id, slug: p.slug, nickname, title, detail, stars });
                            redirect(&format!("/review/product/list/id/{}/", p.slug), None)
                        }
                        _ => reply(
                            StatusCode::BAD_REQUEST,
                            "text/html; charset=utf-8",
                            crate::html_page(
                                "Review",
                                "",
                                "<h1>Review</h1><p class=error>A review needs a rating, a nickname, a summary and a text.</p>",
                            ),
                        ),
                    }
                }
                _ => not_found("No such review page."),
            });
        }
        match (method.as_str(), path) {
            ("POST", "/checkout") => {
                let (Ok(mut carts), Ok(mut orders)) = (self.carts.lock(), self.orders.lock()) else {
                    return Some(poisoned());
                };
                let items = carts.remove(session).unwrap_or_default();
                if items.is_empty() {
                    return Some(page(
                        "Checkout",
                        "<h1>Checkout</h1><p class=error>Your cart is empty.</p>",
                        day,
                    ));
                }
                let mut lines: Vec<(&'static str, u32, u64)> = Vec::new();
                for p in items.iter().filter_map(|s| crate::product(s)) {
                    match lines.iter_mut().find(|(s, _, _)| *s == p.slug) {
                        Some(l) => l.1 += 1,
                        None => lines.push((p.slug, 1, crate::price(p, day))),
                    }
                }
                let id = orders.len() as u64 + 1;
                orders.push(Order { id, session: session.to_string(), lines });
                Some(redirect(&format!("/sales/order/view/order_id/{id}/"), None))
            }
            ("GET", "/sales/order/history/") => {
                let Ok(orders) = self.orders.lock() else { return Some(poisoned()) };
                let rows: String = orders
                    .iter()
                    .filter(|o| o.session == session)
                    .map(|o| {
                        format!(
                            "<tr><td class=id><a href=\"/sales/order/view/order_id/{}/\">{}</a></td><td class=total>{}</td></tr>",
                            o.id,
                            o.increment_id(),
                            crate::money(o.total())
                        )
                    })
                    .collect();
                Some(page(
                    "My orders",
                    &format!("<h1>My orders</h1><table id=orders><tr><th>Order #</th><th>Total</th></tr>{rows}</table>"),
                    day,
                ))
            }
            ("GET", p) => {
                let id = p
                    .strip_prefix("/sales/order/view/order_id/")?
                    .trim_end_matches('/')
                    .parse::<u64>()
                    .ok()?;
                let Ok(orders) = self.orders.lock() else { return Some(poisoned()) };
                let o = orders
                    .iter()
                    .find(|o| o.id == id && (o.session == session || session == SHOP_ADMIN_SESSION));
                Some(match o {
                    Some(o) => page(
                        &format!("Order # {}", o.increment_id()),
                        &format!(
                            "<h1>Order # <span id=order-id>{}</span></h1><p class=order-date>Order Date: {}</p>{}",
                            o.increment_id(),
                            o.created_at(),
                            order_table(o)
                        ),
                        day,
                    ),
                    None => not_found("No such order of yours."),
                })
            }
            _ => None,
        }
    }
}
