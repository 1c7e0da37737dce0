//! WebArena-Verified's `NetworkEventEvaluator`, over the requests of a run as webfreeze's proxy saw them
//! (the task's snapshot), not a browser's HAR.
//!
//! The spec's `expected` names a request: `url` (a URL with the task's sites in it, or a `^...$`
//! regular expression), `http_method`, and what must hold of it: `query_params`, `post_data` (form, JSON
//! or multipart fields; keys may be JSONPath `$.a.b[0]` or a `^regex$` over top-level keys),
//! `response_status` (-1: no response), `headers` (`referer` compared as a URL), `response_content`,
//! `response_cookies`. As their evaluator does:
//! 1. static assets (`.css`, `.js`, images, fonts) are left out;
//! 2. a navigate task's GET spec looks at the last page navigation only; otherwise the events whose
//!    method and URL path (and Referer path, when the spec names one) match are the candidates, all of
//!    them or the last (`last_event_only`);
//! 3. `should_not_exist`: passes when there is no candidate; otherwise some candidate must match every
//!    field of the spec, with query parameters compared over the union of keys (a missing one is "";
//!    `ignored_query_params` and `ignored_query_params_patterns` left out; values lower-cased; an
//!    expected `^...$` value is a regular expression) and fields normalized as strings unless
//!    `post_data_schema` types them.
//!
//! `query_params_schema` normalizes the parameters it lists by their type before they are compared;
//! JSONPath keys are read by [`super::jsonpath`]. Not here (the task is reported as not scored, by
//! name): JSONPath wildcards and recursive descent, and the schema formats [`super::value`] does not have.

use std::collections::BTreeMap;

use super::VerifiedError;
use serde_json::{Map, Value};
use trajectory::task_eval::NetworkEventSpec;

use super::py_re;
use super::schema::Schema;
use super::url::{NormUrl, UrlRules};
use super::value::{self, Norm};

/// One request and its response, as the proxy saw them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Event {
    /// GET, POST, ...
    pub method: String,
    /// The absolute URL.
    pub url: String,
    /// Request headers, as sent.
    pub request_headers: Vec<(String, String)>,
    /// The request body and its content type.
    pub post: Option<(String, String)>,
    /// The response status; -1 when there was none.
    pub status: i64,
    /// Response headers.
    pub response_headers: Vec<(String, String)>,
    /// The response body (text) and its content type.
    pub response: Option<(String, String)>,
}

impl Event {
    fn header<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
        h.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    fn path(&self) -> String {
        url::Url::parse(&self.url).map(|u| u.path().to_string()).unwrap_or_default()
    }

    /// Not a static asset.
    fn is_evaluation_event(&self) -> bool {
        const STATIC: [&str; 12] = [
            ".css", ".js", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".woff", ".woff2", ".ttf", ".ico",
            ".webp",
        ];
        let p = self.path();
        !STATIC.iter().any(|s| p.ends_with(s))
    }

    /// A page navigation: a GET for HTML (by the user, when the browser says who started it).
    fn is_navigation_event(&self) -> bool {
        if self.method != "GET" {
            return false;
        }
        let h = |n: &str| Self::header(&self.request_headers, n).map(str::to_lowercase);
        let accept = h("accept").unwrap_or_default();
        if h("sec-fetch-user").is_some() {
            return h("sec-fetch-dest").as_deref() == Some("document")
                && h("sec-fetch-mode").as_deref() == Some("navigate")
                && h("sec-fetch-user").as_deref() == Some("?1")
                && accept.contains("text/html");
        }
        accept.starts_with("text/html")
    }

    /// Response cookies (Set-Cookie), values percent-decoded.
    fn cookies(&self) -> BTreeMap<String, String> {
        self.response_headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("set-cookie"))
            .filter_map(|(_, v)| {
                let (k, val) = v.split(';').next()?.split_once('=')?;
                Some((k.trim().to_string(), percent_decode(val.trim())))
            })
            .collect()
    }
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
}

/// A body parsed by its content type: form fields (first value each), a JSON object, multipart fields.
fn parse_content(mime: &str, text: &str) -> Option<Map<String, Value>> {
    if text.is_empty() {
        return None;
    }
    if mime.contains("application/x-www-form-urlencoded") {
        let mut m = Map::new();
        for (k, v) in url::form_urlencoded::parse(text.as_bytes()) {
            m.entry(k.into_owned()).or_insert(Value::String(v.into_owned()));
        }
        return Some(m);
    }
    if mime.contains("application/json") {
        return serde_json::from_str::<Value>(text).ok().and_then(|v| v.as_object().cloned());
    }
    if mime.contains("multipart/form-data") {
        let boundary = mime.split("boundary=").nth(1)?.split([';', ' ']).next()?;
        let mut m = Map::new();
        for part in text.split(&format!("--{boundary}")) {
            let part = part.trim();
            if part.is_empty() || part == "--" {
                continue;
            }
            let Some((head, body)) = part.split_once("\r\n\r\n").or_else(|| part.split_once("\n\n")) else {
                continue;
            };
            let name = head
                .split("\r\n")
                .find(|l| l.to_lowercase().starts_with("content-disposition:"))
                .and_then(|l| {
                    let i = l.find("name=\"")? + 6;
                    Some(l[i..].split('"').next()?.to_string())
                });
            if let Some(n) = name {
                m.insert(n, Value::String(body.trim_end_matches(['\r', '\n']).to_string()));
            }
        }
        return Some(m);
    }
    None
}

/// A JSONPath key (`$.a.b[0]`, `$['a']`) or a regular expression over top-level keys (`$.^re$`, `^re$`).
fn is_jsonpath_key(k: &str) -> bool {
    k.starts_with('$') || value::is_regexp(k)
}

/// A dict of fields normalized as their `ValueNormalizer.normalize(dict, schema)` does: each field by its
/// property schema, a string when it has none; None stays None.
fn fields(dict: &Map<String, Value>, schema: &Schema, strict: bool) -> Result<Norm, VerifiedError> {
    Ok(value::object(&Value::Object(dict.clone()), schema, strict)?.unwrap_or(Norm::Null))
}

/// One evaluator's URL rules and its typed query parameters (`query_params_schema`, whose properties'
/// types normalize the parameters they name: [`value::param_text`]).
struct Urls {
    rules: UrlRules,
    params: Schema,
}

impl Urls {
    fn normalize(&self, raw: &str, query_params: Option<&Value>) -> Result<NormUrl, VerifiedError> {
        Ok(self.rules.normalize(raw, query_params)?.type_query(|k, v| match self.params.property(k) {
            Some(prop) => value::param_text(prop, v),
            None => v,
        }))
    }
}

/// A task's network events and which wire they are: what its network checks are scored on.
#[derive(Debug, Clone)]
pub struct RunEvents {
    /// The requests, in order.
    pub events: Vec<Event>,
    /// Where they were read from.
    pub wire: WireSource,
}

/// Which requests a task is scored on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireSource {
    /// The task's own wire log (a replayed or live task: what this run's browser sent).
    Own {
        /// Requests in it.
        requests: usize,
        /// Set when the log was cut (a crash while writing): scored on what it holds.
        truncated: Option<String>,
    },
    /// The snapshot the task recorded (a record run: its recording is its own wire).
    Recording {
        /// The snapshot.
        snapshot: String,
    },
}

impl std::fmt::Display for WireSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireSource::Own { requests, truncated: None } => {
                write!(f, "its own wire log ({requests} requests)")
            }
            WireSource::Own { requests, truncated: Some(why) } => {
                write!(f, "its own wire log, cut by a crash ({requests} requests; {why})")
            }
            WireSource::Recording { snapshot } => write!(f, "its recording {snapshot}"),
        }
    }
}

/// Why a task's network events could not be read (the binary reads them from the task's wire log, or a
/// record run's snapshot).
#[derive(Debug, Clone, thiserror::Error)]
pub enum EventsError {
    /// A replayed or live task without a wire log (a run made before wire logs were kept): the
    /// recording's requests are not this run's, so its network checks are not scored.
    #[error("the task has no wire log (made by an older webfreeze); re-run it to score its network checks")]
    NoWire,
    /// The task's wire log could not be read (another task's or run's, or not a wire log).
    #[error("{0}")]
    Wire(std::sync::Arc<dyn std::error::Error + Send + Sync>),
    /// A recorded task whose trajectory names no snapshot.
    #[error("the recorded task names no snapshot")]
    NoSnapshot,
    /// The store would not open.
    #[error("cannot open the store: {0}")]
    Store(std::sync::Arc<dyn std::error::Error + Send + Sync>),
    /// The task's snapshot could not be read.
    #[error("snapshot {name}: {source}")]
    Snapshot {
        /// The snapshot.
        name: String,
        /// What the store said.
        source: std::sync::Arc<dyn std::error::Error + Send + Sync>,
    },
}

/// The result of one `NetworkEventEvaluator` over the run's events: what failed (empty: passed).
pub fn evaluate(
    spec: &NetworkEventSpec,
    events: &[Event],
    navigate: bool,
) -> Result<Vec<String>, VerifiedError> {
    let exp = &spec.expected;
    // The spec's schemas, read once.
    let params = spec.query_params_schema.as_ref().map(Schema::read).unwrap_or_default();
    let post_schema = spec.post_data_schema.as_ref().map(Schema::read).unwrap_or_else(Schema::object);
    if let Some(u) = params
        .properties
        .iter()
        .flat_map(|p| p.values())
        .find_map(|prop| value::kind_of(prop.element()).err())
    {
        return Err(u.into());
    }
    let rules = Urls {
        rules: UrlRules {
            ignored: spec.ignored_query_params.clone(),
            ignored_patterns: spec.ignored_query_params_patterns.clone(),
            decode_base64: spec.decode_base64_query,
        },
        params,
    };
    let ignored_post = &spec.ignored_post_data_params_patterns;
    let should_not_exist = spec.should_not_exist;
    // Their defaults: the last matching event, a GET, status 200.
    let last_only = spec.last_event_only();
    let method = exp.method();
    // One URL, or alternatives.
    let exp_urls_raw: Vec<&str> = exp.urls().iter().map(String::as_str).collect();
    if exp_urls_raw.is_empty() {
        return Err(VerifiedError::Spec("expected.url missing".into()));
    }
    let exp_url_raw = exp_urls_raw.join(" | ");
    let exp_headers = exp.headers.as_ref();

    // 1-2: the candidates.
    let evaluation: Vec<&Event> = events.iter().filter(|e| e.is_evaluation_event()).collect();
    let candidates: Vec<&Event> = if navigate && method == "GET" {
        evaluation.iter().rev().find(|e| e.is_navigation_event()).copied().into_iter().collect()
    } else {
        let exp_url: Vec<NormUrl> =
            exp_urls_raw.iter().map(|u| rules.normalize(u, None)).collect::<Result<_, _>>()?;
        let exp_ref = match exp_headers.and_then(|h| h.get("referer")).and_then(Value::as_str) {
            Some(r) => Some(rules.normalize(r, None)?),
            None => None,
        };
        let mut out = Vec::new();
        for e in &evaluation {
            if !e.method.eq_ignore_ascii_case(method) {
                continue;
            }
            let Ok(u) = rules.normalize(&e.url, None) else { continue };
            if !exp_url.iter().any(|x| x.same_base(&u)) {
                continue;
            }
            if let (Some(er), Some(r)) = (&exp_ref, Event::header(&e.request_headers, "referer")) {
                match rules.normalize(r, None) {
                    Ok(ru) if er.same_base(&ru) => {}
                    _ => continue,
                }
            }
            out.push(*e);
        }
        out
    };
    let selected: Vec<&Event> =
        if last_only { candidates.last().copied().into_iter().collect() } else { candidates };
    if should_not_exist {
        return Ok(if selected.is_empty() {
            Vec::new()
        } else {
            vec![format!("{} request(s) to {exp_url_raw} exist, and none should", selected.len())]
        });
    }
    if selected.is_empty() {
        return Ok(vec![format!("no {} request to {exp_url_raw}", method)]);
    }

    // 3: some candidate matches every field of the spec.
    let exp_url: Vec<NormUrl> = exp_urls_raw
        .iter()
        .map(|u| rules.normalize(u, exp.query_params.as_ref()))
        .collect::<Result<_, _>>()?;
    let exp_post = match &exp.post_data {
        Some(p) => Some(fields(p, &post_schema, true)?),
        None => None,
    };
    let exp_status = exp.status();
    let mut reasons = Vec::new();
    for e in &selected {
        let mut why = Vec::new();
        let au = rules.normalize(&e.url, None)?;
        if !exp_url.iter().any(|x| x.same_base(&au) && x.same_query(&au)) {
            why.push(format!("url {} differs", e.url));
        }
        if e.method != method {
            why.push(format!("method {}", e.method));
        }
        if e.status != exp_status {
            why.push(format!("status {}", e.status));
        }
        if let Some(h) = exp_headers {
            for (name, want) in h {
                let got = Event::header(&e.request_headers, name);
                let ok = match (name.to_lowercase().as_str(), got, want.as_str()) {
                    (_, None, _) => false,
                    ("referer" | "redirect_url", Some(g), Some(w)) => {
                        let (wu, gu) = (rules.normalize(w, None)?, rules.normalize(g, None));
                        gu.is_ok_and(|gu| wu.same_base(&gu) && wu.same_query(&gu))
                    }
                    (_, Some(g), _) => {
                        let en = value::scalar(value::Kind::Str, want, true)?;
                        let an = value::scalar(value::Kind::Str, &Value::String(g.to_string()), false)?;
                        value::equal(&en, &an, false, true)
                    }
                };
                if !ok {
                    why.push(format!("header {name}: {}", got.unwrap_or("(none)")));
                }
            }
        }
        if let (Some(ep), Some(raw)) = (&exp_post, &exp.post_data) {
            let actual = e.post.as_ref().and_then(|(mime, text)| parse_content(mime, text));
            match actual {
                None => why.push("no form or JSON body".into()),
                Some(mut a) => {
                    a.retain(|k, _| !ignored_post.iter().any(|p| py_re::search(p, k, false)));
                    let mut flat = Map::new();
                    for k in raw.keys() {
                        let k = k.trim();
                        let v = if is_jsonpath_key(k) {
                            super::jsonpath::value_at(&a, k)?
                        } else {
                            a.get(k).cloned()
                        };
                        flat.insert(k.to_string(), v.unwrap_or(Value::Null));
                    }
                    let an = fields(&flat, &post_schema, false)?;
                    if !value::equal(ep, &an, false, true) {
                        why.push(format!("body {}", Value::Object(flat)));
                    }
                }
            }
        }
        if let Some(rc) = &exp.response_content {
            let actual = e.response.as_ref().and_then(|(mime, text)| parse_content(mime, text));
            let ok = actual.is_some_and(|a| {
                rc.iter().all(|(k, want)| {
                    let got = if is_jsonpath_key(k) {
                        super::jsonpath::value_at(&a, k).ok().flatten()
                    } else {
                        a.get(k).cloned()
                    };
                    got.as_ref() == Some(want)
                })
            });
            if !ok {
                why.push("response content differs".into());
            }
        }
        if let Some(rc) = &exp.response_cookies {
            let got = e.cookies();
            let ok = rc.iter().all(|(k, want)| {
                got.get(k).is_some_and(|g| {
                    let en = value::scalar(value::Kind::Str, want, true);
                    let an = value::scalar(value::Kind::Str, &Value::String(g.clone()), false);
                    matches!((en, an), (Ok(en), Ok(an)) if value::equal(&en, &an, false, true))
                })
            });
            if !ok {
                why.push("response cookies differ".into());
            }
        }
        if why.is_empty() {
            return Ok(Vec::new());
        }
        reasons.push(format!("{} {}: {}", e.method, e.url, why.join(", ")));
    }
    Ok(vec![format!(
        "no request matches {} {exp_url_raw} ({} checked; {})",
        method,
        selected.len(),
        reasons.last().cloned().unwrap_or_default()
    )])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables write specs as their dataset does; read them typed, as the task reader does.
    fn evaluate(spec: &Value, events: &[Event], navigate: bool) -> Result<Vec<String>, VerifiedError> {
        super::evaluate(&serde_json::from_value(spec.clone()).unwrap(), events, navigate)
    }
    use serde_json::json;

    fn ev(method: &str, url: &str, post: Option<(&str, &str)>, status: i64) -> Event {
        Event {
            method: method.into(),
            url: url.into(),
            request_headers: vec![
                ("Accept".into(), "text/html,*/*".into()),
                ("Referer".into(), "http://shop/cart".into()),
            ],
            post: post.map(|(m, t)| (m.into(), t.into())),
            status,
            ..Default::default()
        }
    }

    #[test]
    fn network_table() {
        let events = vec![
            ev("GET", "http://shop/cart", None, 200),
            ev("GET", "http://shop/static/app.js", None, 200),
            ev(
                "POST",
                "http://shop/checkout?x=1",
                Some(("application/x-www-form-urlencoded", "name=Emma+Lopez&qty=2")),
                303,
            ),
            ev(
                "POST",
                "http://shop/dummy_bin",
                Some(("application/json", "{\"note\": {\"text\": \"Hi\"}}")),
                -1,
            ),
        ];
        // (spec, navigate task, passes)
        let cases = [
            (
                json!({"expected": {"url": "http://shop/checkout", "http_method": "POST", "query_params": {"x": "1"},
                                 "post_data": {"name": "emma lopez", "qty": "2"}, "response_status": 303}}),
                false,
                true,
            ),
            // An extra query parameter fails unless ignored.
            (json!({"expected": {"url": "http://shop/checkout", "http_method": "POST"}}), false, false),
            (
                json!({"ignored_query_params": ["x"], "expected": {"url": "http://shop/checkout/", "http_method": "POST", "response_status": 303}}),
                false,
                true,
            ),
            (
                json!({"expected": {"url": "http://shop/checkout", "http_method": "POST", "query_params": {"x": "^\\d+$"},
                                 "post_data": {"qty": "3"}}}),
                false,
                false,
            ),
            (
                json!({"expected": {"url": "^http://.*/dummy_bin$", "http_method": "POST",
                                 "post_data": {"$.note.text": "hi"}, "response_status": -1}}),
                false,
                true,
            ),
            (
                json!({"should_not_exist": true, "expected": {"url": "http://shop/checkout", "http_method": "POST"}}),
                false,
                false,
            ),
            (
                json!({"should_not_exist": true, "expected": {"url": "http://shop/admin", "http_method": "POST"}}),
                false,
                true,
            ),
            // A navigate task: the last page navigation, the app.js request left out.
            (json!({"expected": {"url": "http://shop/cart", "http_method": "GET"}}), true, true),
            (json!({"expected": {"url": "http://shop/", "http_method": "GET"}}), true, false),
            (
                json!({"expected": {"url": "http://shop/checkout", "http_method": "POST", "query_params": {"x": "1"},
                                 "headers": {"referer": "http://shop/cart"}, "response_status": 303}}),
                false,
                true,
            ),
            // Their defaults: a GET with status 200 (the POST does not match), and URL alternatives.
            (json!({"expected": {"url": ["http://shop/nope", "http://shop/checkout"]}}), false, false),
            (json!({"expected": {"url": ["http://shop/nope", "http://shop/cart"]}}), false, true),
        ];
        for (i, (spec, nav, pass)) in cases.iter().enumerate() {
            let f = evaluate(spec, &events, *nav).unwrap();
            assert_eq!(f.is_empty(), *pass, "case {i}: {f:?}");
        }
        // query_params_schema: dates compared as dates (Magento's report filter, base64 in the path).
        let filter = base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            "report_type=created_at_order&from=2%2F1%2F2023&to=02%2F28%2F2023",
        );
        let report = [ev("GET", &format!("http://shop/reports/sales/filter/{filter}/"), None, 200)];
        let spec = |from: &str| {
            json!({"decode_base64_query": true, "query_params_schema": {"type": "object", "properties": {
                       "from": {"type": "array", "items": {"type": "string", "format": "date"}},
                       "to": {"type": "array", "items": {"type": "string", "format": "date"}}}},
                   "expected": {"url": "http://shop/reports/sales/filter", "query_params":
                       {"report_type": ["created_at_order"], "from": [from], "to": ["02/28/2023"]}}})
        };
        assert_eq!(evaluate(&spec("02/1/2023"), &report, false).unwrap(), Vec::<String>::new());
        assert_eq!(evaluate(&spec("2023-02-01"), &report, false).unwrap(), Vec::<String>::new());
        assert_eq!(evaluate(&spec("02/2/2023"), &report, false).unwrap().len(), 1);
        assert!(matches!(
            evaluate(
                &json!({"query_params_schema": {"type": "object", "properties": {"x": {"type": "string", "format": "markdown"}}},
                    "expected": {"url": "http://x"}}),
                &events,
                false
            ),
            Err(VerifiedError::Unsupported(_))
        ));
    }
}
