//! Volatile query parameters: what the normalised matching layer strips before comparing URLs, and the
//! content parameters it never strips.
//!
//! The rule, in this order:
//! 1. A user rules file's parameters, prefixes and value patterns are stripped, whatever they name:
//!    ```json
//!    { "strip_params": ["sessionid"], "strip_param_prefixes": ["trk_"], "strip_value_patterns": ["^[0-9a-f]{32}$"] }
//!    ```
//! 2. Tracking parameters (`utm_*`, `fbclid`, `gclid`, `msclkid`, `_ga`, ...) are stripped.
//! 3. A *content* parameter ([`is_content_param`]: a search term, an id, a page of results, a catalogue
//!    number: `id`, `p`, `q`, `page`, `isbn`, `node`, `sku`, any `*_id` or `*Id`) keeps its value in every
//!    layer, whatever it looks like: `?id=1234567890` is another page than `?id=9876543210`.
//! 4. A known cache buster or time parameter (`_`, `t`, `ts`, `cb`, `v`, `rand`, `nonce`, `cachebuster`,
//!    `_dc`, `since`, ..., [`CACHE_BUSTERS`]) is stripped when its value is a token (6+ digits, 8+ hex,
//!    a decimal, 16+ token characters); JSONP callback names (`callback`, `jsonp`, `jsoncallback`, `cb`
//!    whose value is an identifier) too.
//! 5. Any other parameter is stripped by its value alone only when the value reads as a Unix time now:
//!    10 digits in seconds, 13 in milliseconds or 16 in microseconds, between 2000 and 2040. Other long
//!    numbers (an ISBN-13, an 11- or 12-digit catalogue node) are kept.

use regex::Regex;
use serde::Deserialize;
use snapshots::key::{join_pairs, query_pairs};

const TRACKING: &[&str] =
    &["fbclid", "gclid", "msclkid", "dclid", "_ga", "_gl", "mc_cid", "mc_eid", "yclid", "igshid"];
/// Cache busters and time parameters: stripped when their value is a token (rule 4 of the module docs).
pub const CACHE_BUSTERS: &[&str] = &[
    "_",
    "cb",
    "t",
    "v",
    "ts",
    "rnd",
    "rand",
    "random",
    "nocache",
    "cachebust",
    "cache_buster",
    "bust",
    "timestamp",
    "_t",
    "r",
    "nonce",
    "cachebuster",
    "_dc",
    "_ts",
    "_cb",
    "since",
    "time",
    "now",
];
const JSONP: &[&str] = &["callback", "jsonp", "jsoncallback", "cb"];

/// Query parameters that name the content (a search term, an id, a page of results): part of the resource
/// whatever their value looks like. A fuzzy candidate never drops, adds or replaces one, and the
/// normalised layer never strips one by its value.
pub const CONTENT_PARAMS: &[&str] = &[
    // search terms (single letters only where a platform names its search or page so: a `v=` or `t=` is as
    // often a cache-buster)
    "q",
    "s",
    "query",
    "search",
    "search_query",
    "term",
    "keyword",
    "keywords",
    "wd",
    "text",
    "searchterm",
    "search_term",
    "find",
    // ids and names of a page or item
    "id",
    "p",
    "page_id",
    "pageid",
    "curid",
    "oldid",
    "diff",
    "rev",
    "revid",
    "post",
    "post_id",
    "product",
    "product_id",
    "pid",
    "item",
    "item_id",
    "article",
    "title",
    "slug",
    "name",
    "cat",
    "category",
    "category_id",
    "tag",
    "topic",
    "user",
    // catalogue numbers: books, goods, a shop's browse node
    "isbn",
    "ean",
    "upc",
    "gtin",
    "asin",
    "sku",
    "node",
    // pages of results
    "page",
    "paged",
    "pg",
    "start",
    "offset",
    "first",
    "skip",
];

/// Words in a parameter's name that make an `*_id` one volatile (a session, a request, a visitor), not
/// content.
const VOLATILE_ID_WORDS: &[&str] =
    &["session", "request", "trace", "span", "correlation", "visitor", "client", "nonce", "csrf", "token"];

/// Whether a query parameter names the content ([`CONTENT_PARAMS`], or an id: `*_id`, `*-id`, `*Id`, `*ID`
/// unless it is a session's, a request's or a visitor's): its value is never stripped by the built-in
/// rules, and a fuzzy candidate that differs on it is another resource.
pub fn is_content_param(name: &str) -> bool {
    let n = name.trim_end_matches("[]").to_ascii_lowercase();
    if CONTENT_PARAMS.contains(&n.as_str()) {
        return true;
    }
    let raw = name.trim_end_matches("[]");
    let camel = raw.len() > 2
        && (raw.ends_with("Id") || raw.ends_with("ID"))
        && raw[..raw.len() - 2].chars().last().is_some_and(|c| c.is_ascii_lowercase());
    let id = n.len() > 3 && (n.ends_with("_id") || n.ends_with("-id")) || camel;
    id && !VOLATILE_ID_WORDS.iter().any(|w| n.contains(w))
}

/// Whether a value reads as a Unix time now (2000 to 2040): 10 digits in seconds, 13 in milliseconds, 16
/// in microseconds.
pub(crate) fn unix_time_now(v: &str) -> bool {
    const FROM_S: u64 = 946_684_800; // 2000-01-01
    const TO_S: u64 = 2_208_988_800; // 2040-01-01
    if !v.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let Ok(n) = v.parse::<u64>() else { return false };
    let scale = match v.len() {
        10 => 1,
        13 => 1_000,
        16 => 1_000_000,
        _ => return false,
    };
    (FROM_S * scale..TO_S * scale).contains(&n)
}

/// A rules file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// Reading the file failed.
    #[error("cannot read rules file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid.
    #[error("rules file {path}: {detail} (expected JSON with strip_params, strip_param_prefixes, strip_value_patterns)")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        detail: String,
    },
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    strip_params: Vec<String>,
    #[serde(default)]
    strip_param_prefixes: Vec<String>,
    #[serde(default)]
    strip_value_patterns: Vec<String>,
}

/// The volatile-parameter rules in force.
#[derive(Debug, Clone)]
pub struct Rules {
    strip_params: Vec<String>,
    strip_prefixes: Vec<String>,
    strip_values: Vec<Regex>,
    token: Regex,
    identifier: Regex,
}

impl Default for Rules {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Rules {
    /// The built-in rules only.
    pub fn builtin() -> Self {
        Self {
            strip_params: Vec::new(),
            strip_prefixes: vec!["utm_".into()],
            strip_values: Vec::new(),
            token: Regex::new(r"^(\d{6,}|[0-9a-fA-F]{8,}|[0-9]+\.[0-9]+|[A-Za-z0-9_-]{16,})$")
                .unwrap_or_else(|_| unreachable_regex()),
            identifier: Regex::new(r"^[A-Za-z_$][A-Za-z0-9_$.]*$").unwrap_or_else(|_| unreachable_regex()),
        }
    }

    /// Built-in rules plus a user rules file.
    pub fn with_file(path: &std::path::Path) -> Result<Self, RulesError> {
        let p = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|e| RulesError::Io { path: p.clone(), source: e })?;
        let f: RulesFile = serde_json::from_str(&text)
            .map_err(|e| RulesError::Invalid { path: p.clone(), detail: e.to_string() })?;
        let mut r = Self::builtin();
        r.strip_params = f.strip_params.iter().map(|s| s.to_ascii_lowercase()).collect();
        r.strip_prefixes.extend(f.strip_param_prefixes.iter().map(|s| s.to_ascii_lowercase()));
        for pat in &f.strip_value_patterns {
            r.strip_values.push(Regex::new(pat).map_err(|e| RulesError::Invalid {
                path: p.clone(),
                detail: format!("pattern {pat:?}: {e}"),
            })?);
        }
        Ok(r)
    }

    /// Whether a query parameter is volatile (the rule in the module docs).
    pub fn is_volatile(&self, name: &str, value: Option<&str>) -> bool {
        let n = name.to_ascii_lowercase();
        let v = value.unwrap_or("");
        if self.strip_params.contains(&n)
            || self.strip_values.iter().any(|r| r.is_match(v))
            || self.strip_prefixes.iter().any(|p| n.starts_with(p.as_str()))
            || TRACKING.contains(&n.as_str())
        {
            return true;
        }
        if is_content_param(name) {
            return false;
        }
        (CACHE_BUSTERS.contains(&n.as_str()) && self.token.is_match(v))
            || self.jsonp_callback(&n, v)
            || unix_time_now(v)
    }

    fn jsonp_callback(&self, name: &str, value: &str) -> bool {
        JSONP.contains(&name) && self.identifier.is_match(value) && value.len() >= 2
    }

    /// The JSONP callback value of a URL's query, if any (replay rewrites it into the served body).
    pub fn callback_of(&self, url: &str) -> Option<String> {
        let q = url.split_once('?')?.1;
        query_pairs(q).into_iter().find_map(|(k, v)| {
            let v = v?;
            (JSONP.contains(&k.to_ascii_lowercase().as_str()) && self.identifier.is_match(&v)).then_some(v)
        })
    }

    /// The URL with volatile parameters removed (the rest in original order).
    pub fn strip(&self, url: &str) -> String {
        let (base, q) = match url.split_once('?') {
            Some((b, q)) => (b, q),
            None => return url.to_string(),
        };
        let (q, frag) = match q.split_once('#') {
            Some((q, f)) => (q, Some(f)),
            None => (q, None),
        };
        let kept: Vec<_> =
            query_pairs(q).into_iter().filter(|(k, v)| !self.is_volatile(k, v.as_deref())).collect();
        let mut out = base.to_string();
        if !kept.is_empty() {
            out.push('?');
            out.push_str(&join_pairs(&kept));
        }
        if let Some(f) = frag {
            out.push('#');
            out.push_str(f);
        }
        out
    }
}

fn unreachable_regex() -> Regex {
    // The patterns above are literals that compile; this only satisfies the no-panic lint.
    Regex::new("$^").unwrap_or_else(|_| std::process::abort())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_table() {
        let r = Rules::builtin();
        for (input, expected) in [
            ("https://a.test/p?id=7&utm_source=x&utm_medium=y", "https://a.test/p?id=7"),
            ("https://a.test/p?fbclid=abc&gclid=def&q=1", "https://a.test/p?q=1"),
            ("https://a.test/app.js?_=1712345678901", "https://a.test/app.js"),
            ("https://a.test/app.js?v=3", "https://a.test/app.js?v=3"),
            ("https://a.test/app.js?v=9f8e7d6c5b", "https://a.test/app.js"),
            ("https://a.test/app.js?cb=0.12345", "https://a.test/app.js"),
            ("https://a.test/api?since=1712345678&q=x", "https://a.test/api?q=x"),
            ("https://a.test/api?page=12345", "https://a.test/api?page=12345"),
            ("https://a.test/api?callback=jQuery3510_1712345678&q=1", "https://a.test/api?q=1"),
            ("https://a.test/api?t=abc", "https://a.test/api?t=abc"),
            // Issue 61: a content parameter keeps a long number; an unknown one keeps what is no time now.
            ("https://a.test/item?id=1234567890", "https://a.test/item?id=1234567890"),
            (
                "https://a.test/b?isbn=9781234567897&ean=4006381333931",
                "https://a.test/b?isbn=9781234567897&ean=4006381333931",
            ),
            ("https://a.test/s?node=16225007011", "https://a.test/s?node=16225007011"),
            (
                "https://a.test/s?productId=1712345678&item_id=1712345678",
                "https://a.test/s?productId=1712345678&item_id=1712345678",
            ),
            (
                "https://a.test/s?book=9781234567897&n=12345678901",
                "https://a.test/s?book=9781234567897&n=12345678901",
            ),
            ("https://a.test/s?x=1712345678&y=1712345678901&z=1712345678901234", "https://a.test/s"),
            ("https://a.test/s?session_id=1712345678&k=1", "https://a.test/s?k=1"),
            (
                "https://a.test/s?nonce=83712&cachebuster=12345678&ts=99999999999",
                "https://a.test/s?nonce=83712",
            ),
            ("https://a.test/plain", "https://a.test/plain"),
        ] {
            assert_eq!(r.strip(input), expected, "{input}");
        }
    }

    #[test]
    fn content_params_table() {
        for (name, content) in [
            ("id", true),
            ("ID", true),
            ("p", true),
            ("isbn", true),
            ("node", true),
            ("productId", true),
            ("item_id", true),
            ("tag[]", true),
            ("session_id", false),
            ("requestId", false),
            ("productid", false),
            ("_", false),
            ("t", false),
            ("uuid", false),
        ] {
            assert_eq!(is_content_param(name), content, "{name}");
        }
    }

    #[test]
    fn rules_file_adds_rules_and_rejects_garbage() {
        let d = std::env::temp_dir().join(format!("wf-rules-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let good = d.join("good.json");
        std::fs::write(&good, r#"{"strip_params":["SessionId"],"strip_param_prefixes":["trk_"],"strip_value_patterns":["^[0-9a-f]{32}$"]}"#).unwrap();
        let r = Rules::with_file(&good).unwrap();
        assert_eq!(
            r.strip("https://a.test/?sessionid=1&trk_a=2&k=0123456789abcdef0123456789abcdef&keep=1"),
            "https://a.test/?keep=1"
        );
        let bad = d.join("bad.json");
        std::fs::write(&bad, r#"{"strip_parms":["x"]}"#).unwrap();
        assert!(Rules::with_file(&bad).unwrap_err().to_string().contains("bad.json"));
        std::fs::write(&bad, r#"{"strip_value_patterns":["("]}"#).unwrap();
        assert!(Rules::with_file(&bad).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn jsonp_callback_is_found() {
        let r = Rules::builtin();
        assert_eq!(r.callback_of("https://a.test/api?q=1&callback=cb_123").as_deref(), Some("cb_123"));
        assert_eq!(r.callback_of("https://a.test/api?q=1"), None);
    }
}
