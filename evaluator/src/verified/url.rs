//! WebArena-Verified's `URL` type (`core/evaluation/data_types/url.py`): what a URL is normalized to
//! for the network evaluator's requests and for the `url` schema format of an agent's answer. HTTP(S):
//! scheme and host lower-cased, default port dropped, no trailing `/`, base64 query text in path
//! segments decoded (`decode_base64_query`), query parameters sorted and lower-cased, ignored ones
//! dropped (typed ones are then normalized by `query_params_schema`, [`NormUrl::type_query`], by the
//! network rules: a value's type is `super::value`'s); a `^...$` value is a regular expression.
//! SSH (`ssh://git@host:port/path`, `git@host:path`): `USER@__SSH_HOST__:path`, lower case, host and port
//! gone.

use std::collections::BTreeMap;

use super::VerifiedError;
use serde_json::Value;
use trajectory::task_eval::python_str as py_str;

use super::py_re;
use super::read::is_regexp;

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
}

/// A URL as their `URL` type holds it: the base (scheme and host lower-cased, default port dropped,
/// no query, no trailing `/`) or a regular expression, and the query parameters (sorted values,
/// lower-cased, ignored ones dropped).
#[derive(Debug, Clone, PartialEq)]
pub struct NormUrl {
    base: String,
    regex: bool,
    query: BTreeMap<String, Vec<String>>,
}

/// How URLs are normalized for one evaluator (its ignored parameters, base64 in paths, typed parameters).
#[derive(Debug, Clone, Default)]
pub struct UrlRules {
    /// `ignored_query_params`.
    pub ignored: Vec<String>,
    /// `ignored_query_params_patterns`.
    pub ignored_patterns: Vec<String>,
    /// `decode_base64_query`.
    pub decode_base64: bool,
}

impl UrlRules {
    fn ignore(&self, k: &str) -> bool {
        self.ignored.iter().any(|i| i == k) || self.ignored_patterns.iter().any(|p| py_re::search(p, k, true))
    }

    /// Their `URL` normalization of `raw`; `query_params` (an expected value's) replace the URL's own.
    pub fn normalize(&self, raw: &str, query_params: Option<&Value>) -> Result<NormUrl, VerifiedError> {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(VerifiedError::Value("empty URL".into()));
        }
        let given_query = |q: Option<&Value>| -> BTreeMap<String, Vec<String>> {
            let mut m = BTreeMap::new();
            if let Some(Value::Object(o)) = q {
                for (k, v) in o {
                    let vals: Vec<String> = match v {
                        Value::Array(a) => a.iter().map(py_str).collect(),
                        other => vec![py_str(other)],
                    };
                    m.insert(k.clone(), vals);
                }
            }
            m
        };
        if let Some(base) = ssh(raw) {
            return Ok(NormUrl { base, regex: false, query: BTreeMap::new() });
        }
        if is_regexp(raw) {
            let q = self.clean(given_query(query_params));
            return Ok(NormUrl { base: raw.trim_end_matches('/').to_string(), regex: true, query: q });
        }
        let raw = raw.trim_end_matches('/');
        let mut u =
            url::Url::parse(raw).map_err(|e| VerifiedError::Value(format!("invalid URL {raw:?}: {e}")))?;
        let mut path = u.path().to_string();
        let mut query_parts = Vec::new();
        if self.decode_base64 {
            let (p, q) = extract_base64_query(&path);
            path = p;
            query_parts.extend(q);
        }
        if let Some(q) = u.query().filter(|q| !q.is_empty()) {
            query_parts.push(q.trim().to_string());
        }
        let query = match query_params {
            Some(q) => given_query(Some(q)),
            None => {
                let mut m: BTreeMap<String, Vec<String>> = BTreeMap::new();
                for (k, v) in url::form_urlencoded::parse(query_parts.join("&").as_bytes()) {
                    m.entry(k.into_owned()).or_default().push(v.into_owned());
                }
                m
            }
        };
        u.set_query(None);
        let frag = u.fragment().map(str::to_string);
        u.set_fragment(None);
        let host = u.host_str().unwrap_or("").to_lowercase();
        let port = u.port().map(|p| format!(":{p}")).unwrap_or_default();
        let mut base = format!("{}://{host}{port}{path}", u.scheme().to_lowercase());
        if let Some(f) = frag.filter(|f| !f.is_empty()) {
            base.push('#');
            base.push_str(&f);
        }
        Ok(NormUrl { base, regex: false, query: self.clean(query) })
    }

    fn clean(&self, q: BTreeMap<String, Vec<String>>) -> BTreeMap<String, Vec<String>> {
        q.into_iter()
            .filter(|(k, _)| !self.ignore(k))
            .map(|(k, v)| {
                let mut v: Vec<String> = v.iter().map(|s| s.trim().to_lowercase()).collect();
                v.sort();
                (k, v)
            })
            .collect()
    }
}

/// Their `extract_base64_query`: path segments that decode (URL-safe base64) to `k=v` text become query
/// text and leave the path.
fn extract_base64_query(path: &str) -> (String, Vec<String>) {
    use base64::Engine as _;
    let seg_re = |s: &str| {
        let core = s.trim_end_matches('=');
        s.len() >= 4
            && s.len() - core.len() <= 2
            && core.len() >= 4
            && core.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    };
    let mut segs: Vec<String> = path.split('/').map(str::to_string).collect();
    let mut found = Vec::new();
    for s in segs.iter_mut() {
        if s.is_empty() || !seg_re(s) {
            continue;
        }
        let core = s.trim_end_matches('=');
        let Ok(bytes) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(core) else { continue };
        let Ok(text) = String::from_utf8(bytes) else { continue };
        if !text.contains('=') {
            continue;
        }
        let q = percent_decode(&text).trim().to_string();
        if !q.is_empty() {
            found.push(q.trim_start_matches(['?', '&']).to_string());
            s.clear();
        }
    }
    let kept: Vec<&String> = segs.iter().filter(|s| !s.is_empty()).collect();
    let out = if kept.is_empty() {
        if path.starts_with('/') {
            "/".to_string()
        } else {
            String::new()
        }
    } else {
        let j = kept.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("/");
        let mut p = if path.starts_with('/') { format!("/{j}") } else { j };
        if path.ends_with('/') && !p.ends_with('/') {
            p.push('/');
        }
        p
    };
    (out, found)
}

impl NormUrl {
    /// Each query parameter's values through `typed(name, value)`: their typed parameters
    /// (`normalize_query_params_fct`), which the caller reads by `query_params_schema`.
    pub fn type_query(mut self, typed: impl Fn(&str, String) -> String) -> NormUrl {
        for (k, values) in &mut self.query {
            for v in values.iter_mut() {
                *v = typed(k, std::mem::take(v));
            }
        }
        self
    }

    /// Their `matches_base_path`: a regular expression (anchored at the start) on either side, or the
    /// bases equal ignoring case and a trailing `/`.
    pub fn same_base(&self, other: &NormUrl) -> bool {
        let re_match = |pattern: &str, text: &str| py_re::match_start(pattern, text, false);
        if self.regex && re_match(&self.base, &other.base) {
            return true;
        }
        if other.regex && re_match(&other.base, &self.base) {
            return true;
        }
        !self.regex
            && !other.regex
            && self.base.to_lowercase().trim_end_matches('/')
                == other.base.to_lowercase().trim_end_matches('/')
    }

    /// Their `_compare_query_params`, expected on the left.
    pub fn same_query(&self, actual: &NormUrl) -> bool {
        let first = |q: &BTreeMap<String, Vec<String>>, k: &str| {
            q.get(k).and_then(|v| v.first()).cloned().unwrap_or_default()
        };
        let keys: std::collections::BTreeSet<&String> =
            self.query.keys().chain(actual.query.keys()).collect();
        keys.into_iter().all(|k| {
            let (e, a) = (first(&self.query, k), first(&actual.query, k));
            if is_regexp(&e) {
                py_re::match_start(&e, &a, false)
            } else {
                e == a
            }
        })
    }
}

/// Their `_normalize_ssh_url`: `ssh://USER@host:port/path` or `USER@host:path` (an SCP-like `git@` URL) as
/// `USER@__SSH_HOST__:path`, lower case; None for anything else.
fn ssh(raw: &str) -> Option<String> {
    let raw = raw.trim_end_matches('/');
    let lower = raw.to_lowercase();
    if lower.starts_with("ssh://") {
        let u = url::Url::parse(raw).ok()?;
        let user = if u.username().is_empty() { "git".to_string() } else { u.username().to_lowercase() };
        return Some(format!("{user}@__SSH_HOST__:{}", u.path().trim_start_matches('/').to_lowercase()));
    }
    if !(lower.starts_with("git@") && raw.contains(':') && !raw.contains("://")) {
        return None;
    }
    let (user, host_path) = raw.split_once('@')?;
    let (_host, path) = host_path.split_once(':')?;
    Some(format!("{}@__SSH_HOST__:{}", user.to_lowercase(), path.trim_start_matches('/').to_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_as_their_url_type_holds_them() {
        let r = UrlRules::default();
        let base = |u: &str| r.normalize(u, None).unwrap().base;
        for (raw, want) in [
            ("HTTP://Shop.Test:80/Cart/", "http://shop.test/Cart"),
            ("git@__SSH_HOST__:convexegg/Chatgpt.git", "git@__SSH_HOST__:convexegg/chatgpt.git"),
            ("git@localhost:convexegg/chatgpt.git", "git@__SSH_HOST__:convexegg/chatgpt.git"),
            ("ssh://git@gitlab.test:2222/root/metaseq.git", "git@__SSH_HOST__:root/metaseq.git"),
            // Their code keeps an SCP-like URL's port in the path (their docstring says otherwise).
            ("git@somehost:3333/path", "git@__SSH_HOST__:3333/path"),
        ] {
            assert_eq!(base(raw), want, "{raw}");
        }
        assert_eq!(
            extract_base64_query("/api/dXNlcj1hZG1pbiZwYXNzPTEyMw/data"),
            ("/api/data".to_string(), vec!["user=admin&pass=123".to_string()])
        );
    }
}
