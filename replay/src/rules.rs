//! Volatile query parameters: what the normalised matching layer strips before comparing URLs.
//!
//! Built in: tracking parameters (`utm_*`, `fbclid`, `gclid`, `msclkid`, `_ga`, ...); cache busters
//! (`_`, `cb`, `t`, `v`, `ts`, `rnd`, `nocache`, ...) whose value looks like a timestamp or random token;
//! any parameter whose value is a 10-16 digit number (a timestamp in s, ms or us); JSONP callback names
//! (`callback`, `jsonp`, `jsoncallback` whose value is an identifier). A user rules file adds more:
//!
//! ```json
//! { "strip_params": ["sessionid"], "strip_param_prefixes": ["trk_"], "strip_value_patterns": ["^[0-9a-f]{32}$"] }
//! ```

use regex::Regex;
use serde::Deserialize;
use snapshots::key::{join_pairs, query_pairs};

const TRACKING: &[&str] =
    &["fbclid", "gclid", "msclkid", "dclid", "_ga", "_gl", "mc_cid", "mc_eid", "yclid", "igshid"];
const CACHE_BUSTERS: &[&str] = &[
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
];
const JSONP: &[&str] = &["callback", "jsonp", "jsoncallback", "cb"];

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
    timestamp: Regex,
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
            timestamp: Regex::new(r"^\d{10,16}$").unwrap_or_else(|_| unreachable_regex()),
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

    /// Whether a query parameter is volatile.
    pub fn is_volatile(&self, name: &str, value: Option<&str>) -> bool {
        let n = name.to_ascii_lowercase();
        let v = value.unwrap_or("");
        TRACKING.contains(&n.as_str())
            || self.strip_params.contains(&n)
            || self.strip_prefixes.iter().any(|p| n.starts_with(p.as_str()))
            || self.timestamp.is_match(v)
            || (CACHE_BUSTERS.contains(&n.as_str()) && self.token.is_match(v))
            || self.jsonp_callback(&n, v)
            || self.strip_values.iter().any(|r| r.is_match(v))
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
            ("https://a.test/plain", "https://a.test/plain"),
        ] {
            assert_eq!(r.strip(input), expected, "{input}");
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
