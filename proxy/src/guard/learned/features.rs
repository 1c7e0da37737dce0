//! What the learned judge reads of a request: a set of named features (strings), each present or not.
//!
//! Words only, never hosts: the tables the model is trained on and the requests it judges are on different
//! sites, so a host would teach it nothing that carries over. A word is a run of letters and digits, with
//! camelCase split (`placeOrder` -> `place`, `order`), lower-cased; numbers, hex ids and words of 30 or more
//! characters are left out. Each feature is a word with where it was found:
//!
//! - `m:POST`: the method;
//! - `p:WORD` every path segment's words, `last:WORD` and `POST:last:WORD` the last segment's;
//! - `qk:WORD` / `qv:WORD` the query's names and short values (under 40 characters), and `qtoken` when a
//!   value is 16 characters or more (a link's token);
//! - `ct:TYPE` the content type without its parameters;
//! - a JSON or form body's names at every depth (`bk:WORD`), its short values' first eight words
//!   (`bv:WORD`), the name of a long value (`long:NAME`) and a boolean with its name (`bb:NAME=true`); any
//!   other body's words (`bw:WORD`, first 2,000 bytes);
//! - `gql:mutation` / `gql:query`, and a named operation's words (`op:WORD`);
//! - the clicked control's words (`l:WORD`), or `nolabel`.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use regex::Regex;

/// A value this long or longer is a text, named by its field only.
const LONG_VALUE: usize = 80;
/// A query value this long or longer is a token.
const TOKEN_VALUE: usize = 16;

struct Patterns {
    camel: Regex,
    acronym: Regex,
    split: Regex,
    id_like: Regex,
    mutation: Regex,
    query: Regex,
    op_body: Regex,
    op_url: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        // Constant patterns: the module's tests compile and run every one.
        let re = |p: &str| Regex::new(p).unwrap_or_else(|e| unreachable!("a constant pattern: {e}"));
        Patterns {
            camel: re(r"([a-z])([A-Z])"),
            acronym: re(r"([A-Z]+)([A-Z][a-z])"),
            split: re(r"[^0-9A-Za-z\x{00c0}-\x{ffff}]+"),
            id_like: re(r"^(?:[0-9a-f]{6,}|[0-9]+)$"),
            mutation: re(r"\bmutation\b"),
            query: re(r#""query"\s*:\s*"\s*(?:query|\{)"#),
            op_body: re(r#""operationName"\s*:\s*"([^"]+)""#),
            op_url: re(r"operationName=([A-Za-z0-9_]+)"),
        }
    })
}

/// A text's words (see the module docs).
pub fn words(text: &str) -> Vec<String> {
    let p = patterns();
    let t = p.camel.replace_all(text, "$1 $2");
    let t = p.acronym.replace_all(&t, "$1 $2");
    p.split
        .split(&t)
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty() && w.chars().count() < 30 && !p.id_like.is_match(w))
        .collect()
}

/// The features of a request, as the proxy sees it (its method, URL, content type, body and the label of the
/// control the agent used).
pub fn features(
    method: &str,
    uri: &http::Uri,
    content_type: Option<&str>,
    body: Option<&[u8]>,
    label: Option<&str>,
) -> BTreeSet<String> {
    let mut f = BTreeSet::new();
    let mut add = |prefix: &str, w: &str| {
        f.insert(format!("{prefix}{w}"));
    };
    add("m:", method);
    let segs: Vec<&str> = uri.path().split('/').filter(|s| !s.is_empty()).collect();
    for s in &segs {
        for w in words(s) {
            add("p:", &w);
        }
    }
    if let Some(last) = segs.last() {
        for w in words(last) {
            add("last:", &w);
            add(&format!("{method}:last:"), &w);
        }
    }
    let query = uri.query().unwrap_or("");
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        for w in words(&k) {
            add("qk:", &w);
        }
        if v.chars().count() < 40 {
            for w in words(&v) {
                add("qv:", &w);
            }
        }
        if v.chars().count() >= TOKEN_VALUE {
            add("qtoken", "");
        }
    }
    let ct = content_type.unwrap_or("").to_lowercase();
    add("ct:", ct.split(';').next().unwrap_or(""));
    let body = String::from_utf8_lossy(body.unwrap_or(&[])).into_owned();
    if ct.contains("json") {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&body) {
            walk(&v, "", &mut add);
        }
    } else if ct.contains("form-urlencoded") {
        for (k, v) in form_urlencoded::parse(body.as_bytes()) {
            name_and_value(&k, &serde_json::Value::String(v.into_owned()), &mut add);
        }
    } else if !body.is_empty() {
        let head: String = body.chars().take(2000).collect();
        for w in words(&head) {
            add("bw:", &w);
        }
    }
    let p = patterns();
    if p.mutation.is_match(&body) {
        add("gql:mutation", "");
    }
    if p.query.is_match(&body) {
        add("gql:query", "");
    }
    let url = uri.to_string();
    let op = p.op_body.captures(&body).or_else(|| p.op_url.captures(&url));
    if let Some(name) = op.and_then(|c| c.get(1)) {
        for w in words(name.as_str()) {
            add("op:", &w);
        }
    }
    match label.filter(|l| !l.trim().is_empty()) {
        Some(l) => {
            for w in words(l) {
                add("l:", &w);
            }
        }
        None => add("nolabel", ""),
    }
    f
}

/// Whether the learned judge reads a request at all: a write (POST, PUT, PATCH, DELETE), or a GET that
/// carries a token in its query (a link that acts: the `qtoken` feature). Page loads, assets and other
/// reads never reach it; decided from the method and URL alone, before any feature is computed.
pub fn eligible(method: &str, uri: &http::Uri) -> bool {
    matches!(method, "POST" | "PUT" | "PATCH" | "DELETE")
        || (method == "GET"
            && form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
                .any(|(_, v)| v.chars().count() >= TOKEN_VALUE))
}

/// A JSON value's names at every depth and its leaves' values.
fn walk(v: &serde_json::Value, key: &str, add: &mut impl FnMut(&str, &str)) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, x) in map {
                for w in words(k) {
                    add("bk:", &w);
                }
                value(x, k, add);
            }
        }
        serde_json::Value::Array(items) => {
            for x in items {
                walk(x, key, add);
            }
        }
        other => value(other, key, add),
    }
}

/// A form field: its name's words, then its value.
fn name_and_value(name: &str, v: &serde_json::Value, add: &mut impl FnMut(&str, &str)) {
    for w in words(name) {
        add("bk:", &w);
    }
    value(v, name, add);
}

/// One value under its name: nested values are walked, short texts give their first eight words, a long one
/// its name, a boolean its name and value; numbers and nulls say nothing.
fn value(v: &serde_json::Value, key: &str, add: &mut impl FnMut(&str, &str)) {
    match v {
        serde_json::Value::Object(_) | serde_json::Value::Array(_) => walk(v, key, add),
        serde_json::Value::String(s) if s.chars().count() < LONG_VALUE => {
            for w in words(s).into_iter().take(8) {
                add("bv:", &w);
            }
        }
        serde_json::Value::String(_) => add("long:", &key.to_lowercase()),
        serde_json::Value::Bool(b) => add("bb:", &format!("{key}={b}").to_lowercase()),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_camel_case_and_leave_ids_out() {
        let long = "x".repeat(30);
        let cases: &[(&str, &[&str])] = &[
            ("placeOrder", &["place", "order"]),
            ("HTMLParser", &["html", "parser"]),
            ("a7c91e3f0b2d / 12345 / orderForm", &["order", "form"]),
            ("Réserver maintenant", &["réserver", "maintenant"]),
            (long.as_str(), &[]),
        ];
        for (text, want) in cases {
            assert_eq!(words(text), want.iter().map(|s| s.to_string()).collect::<Vec<_>>(), "{text}");
        }
    }

    #[test]
    fn a_request_reads_as_its_words_in_their_places() {
        let uri: http::Uri =
            "https://shop.example/api/v2/orders/placeOrder?token=0123456789abcdefXYZ&lang=de"
                .parse()
                .unwrap();
        let body = br#"{"operationName":"SubmitPayment","payment":{"cardNumber":"4111","save":true},"note":"leave at door"}"#;
        let f =
            features("POST", &uri, Some("application/json; charset=utf-8"), Some(body), Some("Jetzt kaufen"));
        for want in [
            "m:POST",
            "p:orders",
            "last:place",
            "POST:last:order",
            "qk:token",
            "qtoken",
            "qv:de",
            "ct:application/json",
            "bk:card",
            "bk:number",
            "bb:save=true",
            "bv:leave",
            "op:submit",
            "op:payment",
            "l:kaufen",
        ] {
            assert!(f.contains(want), "{want} missing from {f:?}");
        }
        assert!(
            !f.iter().any(|x| x.contains("shop") || x.contains("example")),
            "hosts are never features: {f:?}"
        );
        assert!(eligible("POST", &uri) && eligible("GET", &uri), "a write, and a link with its token");
        let page: http::Uri = "https://shop.example/products?page=2".parse().unwrap();
        assert!(!eligible("GET", &page) && !features("GET", &page, None, None, None).contains("qtoken"));
        assert!(!eligible("HEAD", &uri));
    }

    #[test]
    fn long_texts_and_other_bodies() {
        let uri: http::Uri = "https://forum.example/posts".parse().unwrap();
        let long = format!("body={}", "word ".repeat(30).replace(' ', "+"));
        let f =
            features("POST", &uri, Some("application/x-www-form-urlencoded"), Some(long.as_bytes()), None);
        assert!(f.contains("long:body") && f.contains("nolabel"), "{f:?}");
        let xml = b"<methodCall><methodName>wp.newPost</methodName></methodCall>";
        let f = features("POST", &uri, Some("text/xml"), Some(xml), None);
        assert!(f.contains("bw:new") && f.contains("bw:post"), "{f:?}");
        let gql = br#"{"query":"mutation { createTweet(text: \"hi\") { id } }"}"#;
        let f = features("POST", &uri, Some("application/json"), Some(gql), None);
        assert!(f.contains("gql:mutation") && f.contains("bv:tweet"), "{f:?}");
    }
}
