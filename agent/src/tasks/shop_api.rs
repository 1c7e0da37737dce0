//! WebArena's and VisualWebArena's shop REST helpers, run as HTTP calls through the task's proxy.
//!
//! Their harnesses score some shopping tasks by asking the shop (Magento) over its REST API with the
//! admin account: `shopping_get_auth_token` (`POST /rest/default/V1/integration/admin/token`),
//! `shopping_get_latest_order_url` (`GET /rest/V1/orders`, newest first, one item),
//! `shopping_get_sku_latest_review_author` / `_rating` / `_text` / `_title`
//! (`GET /rest/V1/products/{sku}/reviews`, the last one), `shopping_get_sku_product_page_url`
//! (`GET /rest/V1/products/{sku}`, its `url_key`). Here the same requests go through the task's proxy at
//! the end of the task: a recording holds their answers, so a replay and `eval --rescore` get the same
//! values offline. The values are what the Python helpers return for the same responses.
//!
//! The admin account is [`ShopAdmin`]: WebArena's public default unless the caller gives another. Its
//! password is in the token request's body, so it is in the task's snapshot like any sign-in form the
//! agent submits; it is never printed ([`ShopAdmin`]'s `Debug` hides it).

use std::net::SocketAddr;

use serde_json::Value;
use trajectory::task_eval::python_str as py_str;

/// One REST helper call, parsed from a `func:` string (see [`crate::tasks::helpers`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShopApiCall {
    /// `shopping_get_auth_token()`: the admin token.
    AuthToken,
    /// `shopping_get_latest_order_url()`: `{SHOPPING}/sales/order/view/order_id/{increment_id}/`.
    LatestOrderUrl,
    /// `shopping_get_sku_latest_review_{field}(sku)`: a field of the product's last review.
    LatestReview {
        /// The product's SKU.
        sku: String,
        /// Which field.
        field: ReviewField,
    },
    /// `shopping_get_sku_product_page_url(sku)`: `{SHOPPING}/{url_key}.html`.
    ProductPageUrl {
        /// The product's SKU.
        sku: String,
    },
}

/// A review's field, as the helpers name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewField {
    /// `nickname`.
    Author,
    /// The first rating's `percent`.
    Rating,
    /// `detail`.
    Text,
    /// `title`.
    Title,
}

/// The helpers' names, for counting and messages.
pub const NAMES: &[&str] = &[
    "shopping_get_auth_token",
    "shopping_get_latest_order_url",
    "shopping_get_sku_latest_review_author",
    "shopping_get_sku_latest_review_rating",
    "shopping_get_sku_latest_review_text",
    "shopping_get_sku_latest_review_title",
    "shopping_get_sku_product_page_url",
];

impl ShopApiCall {
    /// The call `name(args...)` names (string arguments only), or None: not a REST helper, or the
    /// wrong number of arguments.
    pub fn parse(name: &str, args: &[String]) -> Option<ShopApiCall> {
        let review = |field| match args {
            [sku] => Some(ShopApiCall::LatestReview { sku: sku.clone(), field }),
            _ => None,
        };
        match (name, args) {
            ("shopping_get_auth_token", []) => Some(ShopApiCall::AuthToken),
            ("shopping_get_latest_order_url", []) => Some(ShopApiCall::LatestOrderUrl),
            ("shopping_get_sku_latest_review_author", _) => review(ReviewField::Author),
            ("shopping_get_sku_latest_review_rating", _) => review(ReviewField::Rating),
            ("shopping_get_sku_latest_review_text", _) => review(ReviewField::Text),
            ("shopping_get_sku_latest_review_title", _) => review(ReviewField::Title),
            ("shopping_get_sku_product_page_url", [sku]) => {
                Some(ShopApiCall::ProductPageUrl { sku: sku.clone() })
            }
            _ => None,
        }
    }

    /// Whether the value is a URL (usable as a check's `url`).
    pub fn gives_url(&self) -> bool {
        matches!(self, ShopApiCall::LatestOrderUrl | ShopApiCall::ProductPageUrl { .. })
    }
}

/// Whether a spec text (a check's URL or locator) calls one of the shop's REST helpers (so the task needs
/// its shop's URL).
pub fn calls_one(text: &str) -> bool {
    let s = text.trim().strip_prefix("func:").unwrap_or("").trim_start();
    NAMES.iter().any(|n| s.strip_prefix(n).is_some_and(|r| r.trim_start().starts_with('(')))
}

/// The shop's admin account, for the token request.
#[derive(Clone, PartialEq, Eq)]
pub struct ShopAdmin {
    /// User name.
    pub username: String,
    /// Password (never printed).
    pub password: String,
}

impl Default for ShopAdmin {
    /// WebArena's published admin account (`ACCOUNTS["shopping_site_admin"]` in its `env_config.py`).
    fn default() -> Self {
        Self { username: "admin".into(), password: "admin1234".into() }
    }
}

impl std::fmt::Debug for ShopAdmin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShopAdmin").field("username", &self.username).field("password", &"***").finish()
    }
}

/// Why a helper gave no value.
#[derive(Debug, thiserror::Error)]
pub enum ShopApiError {
    /// The HTTP client could not be built (the proxy's CA certificate).
    #[error("cannot set up the shop API client: {0}")]
    Client(String),
    /// The request did not complete (the proxy or the shop did not answer).
    #[error("{method} {url}: {detail}")]
    Request {
        /// GET or POST.
        method: &'static str,
        /// The URL.
        url: String,
        /// What happened.
        detail: String,
    },
    /// The shop answered with another status than 200 (the Python helpers assert 200).
    #[error("{method} {url}: HTTP {status}: {body}")]
    Status {
        /// GET or POST.
        method: &'static str,
        /// The URL.
        url: String,
        /// The status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The answer is not the JSON Magento gives.
    #[error("{url}: unexpected answer: {detail}")]
    Shape {
        /// The URL.
        url: String,
        /// What is missing.
        detail: String,
    },
}

/// A client for one task's shop, through its proxy.
pub struct ShopApi {
    http: reqwest::Client,
    base: String,
    admin: ShopAdmin,
    token: tokio::sync::OnceCell<String>,
}

impl ShopApi {
    /// `base` is the SHOPPING site's URL; requests go through the HTTP proxy at `proxy`, trusting the
    /// proxy's CA (`ca_pem`) for HTTPS shops.
    pub fn new(base: &str, admin: ShopAdmin, proxy: SocketAddr, ca_pem: &str) -> Result<Self, ShopApiError> {
        let client = |e: reqwest::Error| ShopApiError::Client(e.to_string());
        let mut b = reqwest::Client::builder()
            .no_proxy()
            .proxy(reqwest::Proxy::all(format!("http://{proxy}")).map_err(client)?)
            .redirect(reqwest::redirect::Policy::limited(10))
            .timeout(std::time::Duration::from_secs(60));
        if !ca_pem.trim().is_empty() {
            b = b.add_root_certificate(reqwest::Certificate::from_pem(ca_pem.as_bytes()).map_err(client)?);
        }
        Ok(Self {
            http: b.build().map_err(client)?,
            base: base.trim_end_matches('/').to_string(),
            admin,
            token: tokio::sync::OnceCell::new(),
        })
    }

    /// Runs a helper: its value as the Python helper returns it, as text.
    pub async fn call(&self, c: &ShopApiCall) -> Result<String, ShopApiError> {
        match c {
            ShopApiCall::AuthToken => self.token().await,
            ShopApiCall::LatestOrderUrl => {
                let url = format!(
                    "{}/rest/V1/orders?{}",
                    self.base,
                    form_query(&[
                        ("searchCriteria[sortOrders][0][field]", "created_at"),
                        ("searchCriteria[sortOrders][0][direction]", "DESC"),
                        ("searchCriteria[pageSize]", "1"),
                    ])
                );
                let v = self.get(&url).await?;
                let id = v
                    .get("items")
                    .and_then(|i| i.get(0))
                    .and_then(|o| o.get("increment_id"))
                    .ok_or_else(|| shape(&url, "no items[0].increment_id (no order yet?)"))?;
                // Python's int(): "000000012" -> 12.
                let n = match id {
                    Value::String(s) => s.trim().parse::<u64>().ok(),
                    Value::Number(n) => n.as_u64(),
                    _ => None,
                }
                .ok_or_else(|| shape(&url, &format!("increment_id {id} is not a number")))?;
                Ok(format!("{}/sales/order/view/order_id/{n}/", self.base))
            }
            ShopApiCall::LatestReview { sku, field } => {
                let url = format!("{}/rest/V1/products/{}/reviews", self.base, path_segment(sku));
                let v = self.get(&url).await?;
                let reviews = v.as_array().ok_or_else(|| shape(&url, "not a JSON array of reviews"))?;
                let Some(last) = reviews.last() else { return Ok(String::new()) };
                let text = |k: &str| {
                    last.get(k)
                        .map(py_str)
                        .ok_or_else(|| shape(&url, &format!("the last review has no {k:?}")))
                };
                match field {
                    ReviewField::Author => text("nickname"),
                    ReviewField::Text => text("detail"),
                    ReviewField::Title => text("title"),
                    ReviewField::Rating => {
                        let first = reviews[0].pointer("/ratings/0/rating_name").and_then(Value::as_str);
                        if first != Some("Rating") {
                            return Err(shape(
                                &url,
                                "the first review's first rating is not named \"Rating\"",
                            ));
                        }
                        last.pointer("/ratings/0/percent")
                            .map(py_str)
                            .ok_or_else(|| shape(&url, "the last review has no ratings[0].percent"))
                    }
                }
            }
            ShopApiCall::ProductPageUrl { sku } => {
                let url = format!("{}/rest/V1/products/{}", self.base, path_segment(sku));
                let v = self.get(&url).await?;
                let key = v
                    .get("custom_attributes")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .find(|a| a.get("attribute_code").and_then(Value::as_str) == Some("url_key"))
                    .and_then(|a| a.get("value"));
                // The Python helper returns "" when the product has no url_key.
                Ok(key.map(|k| format!("{}/{}.html", self.base, py_str(k))).unwrap_or_default())
            }
        }
    }

    /// The admin token, asked once per client.
    async fn token(&self) -> Result<String, ShopApiError> {
        self.token
            .get_or_try_init(|| async {
                let url = format!("{}/rest/default/V1/integration/admin/token", self.base);
                let body =
                    serde_json::json!({"username": self.admin.username, "password": self.admin.password});
                let req = self
                    .http
                    .post(&url)
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(body.to_string());
                let v = send(req, "POST", &url).await?;
                v.as_str().map(str::to_string).ok_or_else(|| shape(&url, "the token is not a JSON string"))
            })
            .await
            .cloned()
    }

    async fn get(&self, url: &str) -> Result<Value, ShopApiError> {
        let token = self.token().await?;
        let req =
            self.http.get(url).bearer_auth(token).header(reqwest::header::CONTENT_TYPE, "application/json");
        send(req, "GET", url).await
    }
}

async fn send(req: reqwest::RequestBuilder, method: &'static str, url: &str) -> Result<Value, ShopApiError> {
    let failed =
        |e: reqwest::Error| ShopApiError::Request { method, url: url.to_string(), detail: e.to_string() };
    let r = req.send().await.map_err(failed)?;
    let status = r.status().as_u16();
    let bytes = r.bytes().await.map_err(failed)?;
    if status != 200 {
        let body: String = String::from_utf8_lossy(&bytes).chars().take(200).collect();
        return Err(ShopApiError::Status { method, url: url.to_string(), status, body });
    }
    serde_json::from_slice(&bytes).map_err(|e| shape(url, &format!("not JSON: {e}")))
}

fn shape(url: &str, detail: &str) -> ShopApiError {
    ShopApiError::Shape { url: url.to_string(), detail: detail.to_string() }
}

/// A query string as `requests` encodes a params dict.
fn form_query(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish()
}

/// A SKU as one path segment. The Python helpers put it in the URL as is; SKUs are letters and digits,
/// and `requests` leaves those alone, so the URL is the same.
fn path_segment(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>().replace('+', "%20")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_table() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let review = |sku: &str, field| Some(ShopApiCall::LatestReview { sku: sku.into(), field });
        // (name, args, parsed)
        let table: &[(&str, Vec<String>, Option<ShopApiCall>)] = &[
            ("shopping_get_auth_token", s(&[]), Some(ShopApiCall::AuthToken)),
            ("shopping_get_latest_order_url", s(&[]), Some(ShopApiCall::LatestOrderUrl)),
            ("shopping_get_latest_order_url", s(&["x"]), None),
            ("shopping_get_sku_latest_review_author", s(&["B0"]), review("B0", ReviewField::Author)),
            ("shopping_get_sku_latest_review_rating", s(&["B0"]), review("B0", ReviewField::Rating)),
            ("shopping_get_sku_latest_review_text", s(&["B0"]), review("B0", ReviewField::Text)),
            ("shopping_get_sku_latest_review_title", s(&["B0"]), review("B0", ReviewField::Title)),
            ("shopping_get_sku_latest_review_title", s(&[]), None),
            (
                "shopping_get_sku_product_page_url",
                s(&["B0"]),
                Some(ShopApiCall::ProductPageUrl { sku: "B0".into() }),
            ),
            ("shopping_get_product_price", s(&[]), None),
        ];
        for (name, args, want) in table {
            assert_eq!(&ShopApiCall::parse(name, args), want, "{name}{args:?}");
        }
        assert!(ShopApiCall::LatestOrderUrl.gives_url());
        assert!(!ShopApiCall::AuthToken.gives_url());
    }

    #[test]
    fn calls_one_table() {
        // (a spec's URL or locator, calls a REST helper)
        let table = [
            ("func:shopping_get_latest_order_url()", true),
            (" func: shopping_get_sku_latest_review_author ('B0')", true),
            ("func:shopping_get_product_price(__page__)", false),
            ("document.title + 'shopping_get_auth_token()'", false),
            ("func:shopping_get_auth_tokens()", false),
            ("", false),
        ];
        for (text, want) in table {
            assert_eq!(calls_one(text), want, "{text}");
        }
    }

    #[test]
    fn python_values() {
        // (JSON, str() in Python)
        for (v, want) in
            [("\"Emma\"", "Emma"), ("80", "80"), ("80.5", "80.5"), ("null", "None"), ("true", "True")]
        {
            assert_eq!(py_str(&serde_json::from_str(v).unwrap()), want);
        }
        assert_eq!(
            form_query(&[("searchCriteria[pageSize]", "1")]),
            "searchCriteria%5BpageSize%5D=1",
            "as requests encodes params"
        );
        assert_eq!(path_segment("B07 X/1"), "B07%20X%2F1");
        assert_eq!(
            format!("{:?}", ShopAdmin::default()),
            "ShopAdmin { username: \"admin\", password: \"***\" }"
        );
    }
}
