//! The part of Magento's REST API that WebArena's and VisualWebArena's shop helpers call, with
//! Magento's JSON shapes (fields the helpers read, and the common ones around them):
//!
//! - `POST /rest/default/V1/integration/admin/token` (`{"username", "password"}`; WebArena's admin
//!   account `admin` / `admin1234`): the token, a JSON string;
//! - `GET /rest/V1/orders` with `searchCriteria[sortOrders][0][field|direction]`,
//!   `searchCriteria[pageSize]`, `searchCriteria[currentPage]`: `{"items", "search_criteria", "total_count"}`;
//! - `GET /rest/V1/products/SKU/reviews`: the product's reviews, oldest first;
//! - `GET /rest/V1/products/SKU`: the product, its `url_key` among `custom_attributes`.
//!
//! The GETs need `Authorization: Bearer TOKEN`; errors are Magento's `{"message": ...}` bodies with its
//! statuses (400, 401, 404). The token is derived from the account (no random tokens, no clock).

use http::{header, HeaderMap, Method, StatusCode};
use serde_json::{json, Value};

use super::{reply, Reply, State};

/// WebArena's published shop admin account.
const ADMIN: (&str, &str) = ("admin", "admin1234");

/// The admin's token: 32 lowercase letters and digits, like Magento's.
fn admin_token() -> String {
    format!("{:016x}{:016x}", crate::fnv(&["admin-token", ADMIN.0]), crate::fnv(&["admin-token-2", ADMIN.0]))
}

fn json_reply(status: StatusCode, v: &Value) -> Reply {
    reply(status, "application/json; charset=utf-8", v.to_string())
}

fn message(status: StatusCode, m: &str) -> Reply {
    json_reply(status, &json!({ "message": m }))
}

/// `searchCriteria` from a query string: sort field and direction, page size, page.
struct Criteria {
    sort: Option<(String, bool)>,
    page_size: Option<usize>,
    current_page: usize,
}

fn criteria(query: &str) -> Criteria {
    let mut c = Criteria { sort: None, page_size: None, current_page: 1 };
    let (mut field, mut desc) = (None, false);
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        match k.as_ref() {
            "searchCriteria[sortOrders][0][field]" => field = Some(v.into_owned()),
            "searchCriteria[sortOrders][0][direction]" => desc = v.eq_ignore_ascii_case("desc"),
            "searchCriteria[pageSize]" => c.page_size = v.parse().ok(),
            "searchCriteria[currentPage]" => c.current_page = v.parse().unwrap_or(1).max(1),
            _ => {}
        }
    }
    c.sort = field.map(|f| (f, desc));
    c
}

fn money_value(cents: u64) -> Value {
    json!(cents as f64 / 100.0)
}

fn order_json(o: &super::Order) -> Value {
    let items: Vec<Value> = o
        .lines
        .iter()
        .enumerate()
        .filter_map(|(i, (slug, qty, cents))| {
            let p = crate::product(slug)?;
            Some(json!({
                "item_id": o.id * 100 + i as u64, "order_id": o.id, "sku": p.sku, "name": p.name,
                "product_type": "simple", "qty_ordered": qty, "price": money_value(*cents),
                "row_total": money_value(u64::from(*qty) * cents), "created_at": o.created_at(),
            }))
        })
        .collect();
    json!({
        "entity_id": o.id, "increment_id": o.increment_id(), "state": "new", "status": "pending",
        "created_at": o.created_at(), "updated_at": o.created_at(), "order_currency_code": "USD",
        "base_currency_code": "USD", "customer_is_guest": 1, "store_id": 1,
        "total_qty_ordered": o.lines.iter().map(|l| l.1).sum::<u32>(),
        "subtotal": money_value(o.total()), "grand_total": money_value(o.total()), "items": items,
    })
}

fn review_json(r: &super::Review, product_id: usize) -> Value {
    json!({
        "id": r.id, "title": r.title, "detail": r.detail, "nickname": r.nickname,
        "ratings": [{"vote_id": r.id, "rating_id": 4, "percent": u32::from(r.stars) * 20,
                     "value": r.stars, "rating_name": "Rating"}],
        "review_entity": "product", "review_type": 2, "review_status": 1,
        "created_at": r.created_at(), "entity_pk_value": product_id, "store_id": 1, "stores": [1],
    })
}

impl State {
    /// `/rest/...` on `shop.test`.
    pub(super) fn rest(
        &self,
        method: &Method,
        path: &str,
        query: &str,
        headers: &HeaderMap,
        body: &[u8],
        day: u32,
    ) -> Reply {
        let path = path.trim_end_matches('/');
        if method == Method::POST
            && matches!(path, "/rest/default/V1/integration/admin/token" | "/rest/V1/integration/admin/token")
        {
            let v: Value = match serde_json::from_slice(body) {
                Ok(v) => v,
                Err(e) => return message(StatusCode::BAD_REQUEST, &format!("Decoding error: {e}")),
            };
            let field = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
            if (field("username"), field("password")) != ADMIN {
                return message(
                    StatusCode::UNAUTHORIZED,
                    "The account sign-in was incorrect or your account is disabled temporarily. Please wait and try again later.",
                );
            }
            return json_reply(StatusCode::OK, &json!(admin_token()));
        }
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok())
            .and_then(|h| h.strip_prefix("Bearer "))
            .map(str::trim);
        let denied = |resource: &str| {
            json_reply(
                StatusCode::UNAUTHORIZED,
                &json!({"message": "The consumer isn't authorized to access %resources.",
                        "parameters": {"resources": resource}}),
            )
        };
        let no_product = || {
            message(
                StatusCode::NOT_FOUND,
                "The product that was requested doesn't exist. Verify the product and try again.",
            )
        };
        let authorized = bearer == Some(admin_token().as_str());
        match (method.as_str(), path.strip_prefix("/rest/V1/")) {
            ("GET", Some("orders")) => {
                if !authorized {
                    return denied("Magento_Sales::actions_view");
                }
                let Ok(orders) = self.orders.lock() else {
                    return message(StatusCode::INTERNAL_SERVER_ERROR, "state poisoned");
                };
                let c = criteria(query);
                let mut list: Vec<&super::Order> = orders.iter().collect();
                if let Some((field, desc)) = &c.sort {
                    // Every sortable field here grows with the order's number.
                    if matches!(field.as_str(), "created_at" | "entity_id" | "increment_id" | "updated_at")
                        && *desc
                    {
                        list.reverse();
                    }
                }
                let total = list.len();
                let page: Vec<Value> = match c.page_size {
                    Some(n) if n > 0 => {
                        list.iter().skip((c.current_page - 1) * n).take(n).map(|o| order_json(o)).collect()
                    }
                    _ => list.iter().map(|o| order_json(o)).collect(),
                };
                let mut sc = json!({"filter_groups": []});
                if let Some((field, desc)) = &c.sort {
                    sc["sort_orders"] =
                        json!([{"field": field, "direction": if *desc { "DESC" } else { "ASC" }}]);
                }
                if let Some(n) = c.page_size {
                    sc["page_size"] = json!(n);
                }
                sc["current_page"] = json!(c.current_page);
                json_reply(
                    StatusCode::OK,
                    &json!({"items": page, "search_criteria": sc, "total_count": total}),
                )
            }
            ("GET", Some(rest)) if rest.starts_with("products/") => {
                if !authorized {
                    return denied("Magento_Catalog::products");
                }
                let rest = &rest["products/".len()..];
                let (sku, reviews) = match rest.strip_suffix("/reviews") {
                    Some(s) => (s, true),
                    None => (rest, false),
                };
                let sku = form_urlencoded::parse(format!("s={sku}").as_bytes())
                    .next()
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default();
                let Some(p) = crate::product_by_sku(&sku) else { return no_product() };
                let product_id = crate::PRODUCTS.iter().position(|x| x.sku == p.sku).unwrap_or(0) + 1;
                if reviews {
                    let Ok(all) = self.reviews.lock() else {
                        return message(StatusCode::INTERNAL_SERVER_ERROR, "state poisoned");
                    };
                    let list: Vec<Value> =
                        all.iter().filter(|r| r.slug == p.slug).map(|r| review_json(r, product_id)).collect();
                    return json_reply(StatusCode::OK, &Value::Array(list));
                }
                json_reply(
                    StatusCode::OK,
                    &json!({
                        "id": product_id, "sku": p.sku, "name": p.name, "attribute_set_id": 4,
                        "price": money_value(crate::price(p, day)), "status": 1, "visibility": 4,
                        "type_id": "simple", "created_at": "2026-01-01 00:00:00", "updated_at": "2026-01-01 00:00:00",
                        "custom_attributes": [
                            {"attribute_code": "url_key", "value": p.slug},
                            {"attribute_code": "description", "value": format!("<p>The {}.</p>", p.name)},
                        ],
                    }),
                )
            }
            _ => message(StatusCode::NOT_FOUND, "Request does not match any route."),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(s: &State, method: Method, path_query: &str, auth: Option<&str>, body: &str) -> (u16, Value) {
        let (path, query) = path_query.split_once('?').unwrap_or((path_query, ""));
        let mut h = HeaderMap::new();
        if let Some(t) = auth {
            h.insert(header::AUTHORIZATION, http::HeaderValue::from_str(&format!("Bearer {t}")).unwrap());
        }
        let r = s.rest(&method, path, query, &h, body.as_bytes(), 0);
        let status = r.status().as_u16();
        use http_body_util::BodyExt as _;
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let b = rt.block_on(r.into_body().collect()).unwrap().to_bytes();
        (status, serde_json::from_slice(&b).unwrap())
    }

    #[test]
    fn rest_table() {
        let s = State::default();
        let token_path = "/rest/default/V1/integration/admin/token";
        let (st, token) =
            call(&s, Method::POST, token_path, None, r#"{"username":"admin","password":"admin1234"}"#);
        assert_eq!(st, 200);
        let token = token.as_str().unwrap().to_string();
        assert_eq!(token.len(), 32);
        let t = Some(token.as_str());
        let latest = "/rest/V1/orders?searchCriteria%5BsortOrders%5D%5B0%5D%5Bfield%5D=created_at\
                      &searchCriteria%5BsortOrders%5D%5B0%5D%5Bdirection%5D=DESC&searchCriteria%5BpageSize%5D=1";
        // (method, path and query, token, body, status, JSON pointer, value there)
        type Case<'a> = (Method, &'a str, Option<&'a str>, &'a str, u16, &'a str, Value);
        let cases: Vec<Case<'_>> = vec![
            (Method::POST, token_path, None, r#"{"username":"admin","password":"x"}"#, 401, "/message", json!("The account sign-in was incorrect or your account is disabled temporarily. Please wait and try again later.")),
            (Method::POST, token_path, None, "{", 400, "/message", json!("Decoding error: EOF while parsing an object at line 1 column 1")),
            (Method::GET, latest, None, "", 401, "/parameters/resources", json!("Magento_Sales::actions_view")),
            (Method::GET, latest, Some("wrong"), "", 401, "/message", json!("The consumer isn't authorized to access %resources.")),
            (Method::GET, latest, t, "", 200, "/items/0/increment_id", json!("000000002")),
            (Method::GET, latest, t, "", 200, "/total_count", json!(2)),
            (Method::GET, latest, t, "", 200, "/search_criteria/sort_orders/0/direction", json!("DESC")),
            (Method::GET, "/rest/V1/orders", t, "", 200, "/items/0/items/0/sku", json!("B0DEMO0002")),
            (Method::GET, "/rest/V1/orders", t, "", 200, "/items/0/items/0/qty_ordered", json!(2)),
            (Method::GET, "/rest/V1/products/B0DEMO0001/reviews", t, "", 200, "/0/nickname", json!("Emma Lopez")),
            (Method::GET, "/rest/V1/products/B0DEMO0001/reviews", t, "", 200, "/0/ratings/0/percent", json!(100)),
            (Method::GET, "/rest/V1/products/B0DEMO0001/reviews", t, "", 200, "/0/ratings/0/rating_name", json!("Rating")),
            (Method::GET, "/rest/V1/products/NOPE/reviews", t, "", 404, "/message", json!("The product that was requested doesn't exist. Verify the product and try again.")),
            (Method::GET, "/rest/V1/products/B0DEMO0006", t, "", 200, "/custom_attributes/0", json!({"attribute_code": "url_key", "value": "glass-jar"})),
            (Method::GET, "/rest/V1/products/B0DEMO0006", t, "", 200, "/price", json!(6.75)),
            (Method::GET, "/rest/V1/products/B0DEMO0006", None, "", 401, "/parameters/resources", json!("Magento_Catalog::products")),
            (Method::GET, "/rest/V1/customers/me", t, "", 404, "/message", json!("Request does not match any route.")),
        ];
        for (i, (m, p, auth, body, status, ptr, want)) in cases.iter().enumerate() {
            let (st, v) = call(&s, m.clone(), p, *auth, body);
            assert_eq!((st, v.pointer(ptr)), (*status, Some(want)), "case {i}: {p}: {v}");
        }
    }

    #[test]
    fn checkout_and_review_reach_the_api() {
        let s = State::default();
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, http::HeaderValue::from_static("wf_session=bob"));
        let post = |path: &str, body: &str| s.shop(&Method::POST, path, "", &h, body.as_bytes(), 0).unwrap();
        assert_eq!(post("/checkout", "").status(), 200, "an empty cart places no order");
        assert_eq!(post("/cart/add", "slug=glass-jar").status(), 303);
        assert_eq!(post("/cart/add", "slug=glass-jar").status(), 303);
        let r = post("/checkout", "");
        assert_eq!(r.headers()[header::LOCATION], "/sales/order/view/order_id/3/");
        let bad = post("/review/product/post/id/red-mug/", "nickname=Bo&title=Ok&detail=&rating=4");
        assert_eq!(bad.status(), 400);
        let ok = post("/review/product/post/id/red-mug/", "nickname=Bo&title=Ok&detail=Fine+mug&rating=4");
        assert_eq!(ok.headers()[header::LOCATION], "/review/product/list/id/red-mug/");
        let (_, token) = call(
            &s,
            Method::POST,
            "/rest/default/V1/integration/admin/token",
            None,
            r#"{"username":"admin","password":"admin1234"}"#,
        );
        let t = token.as_str();
        let (_, v) = call(&s, Method::GET, "/rest/V1/orders?searchCriteria[sortOrders][0][field]=created_at&searchCriteria[sortOrders][0][direction]=DESC&searchCriteria[pageSize]=1", t, "");
        assert_eq!(v.pointer("/items/0/increment_id"), Some(&json!("000000003")), "{v}");
        assert_eq!(v.pointer("/items/0/items/0/qty_ordered"), Some(&json!(2)), "{v}");
        let (_, v) = call(&s, Method::GET, "/rest/V1/products/B0DEMO0002/reviews", t, "");
        assert_eq!(v.pointer("/1/nickname"), Some(&json!("Bo")), "{v}");
        assert_eq!(v.pointer("/1/ratings/0/percent"), Some(&json!(80)), "{v}");
        // The order page: Magento's markup, for the owner only.
        let get = |cookie: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(header::COOKIE, http::HeaderValue::from_static(cookie));
            let r = s.shop(&Method::GET, "/sales/order/view/order_id/3/", "", &h, b"", 0).unwrap();
            let status = r.status().as_u16();
            use http_body_util::BodyExt as _;
            let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
            (
                status,
                String::from_utf8(rt.block_on(r.into_body().collect()).unwrap().to_bytes().to_vec()).unwrap(),
            )
        };
        let (st, page) = get("wf_session=bob");
        assert_eq!(st, 200);
        assert!(
            page.contains("<div class=\"order-details-items ordered\">")
                && page.contains("<td class=\"col sku\">B0DEMO0006</td>")
                && page.contains("Ordered 2"),
            "{page}"
        );
        assert_eq!(get("wf_session=eve").0, 404);
    }
}
