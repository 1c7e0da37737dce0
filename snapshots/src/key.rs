//! Request keys: the one function that decides whether two requests are "the same request".
//!
//! A key is the upper-cased method, the normalised URL and a digest of the normalised body. Keys are
//! derived only by [`KeyBuilder`], which takes the body in chunks as it streams (the recorder feeds it while
//! forwarding; replay and importers call [`request_key`], the same builder over a whole body), so the
//! same request gets the same key whoever derives it and however large its body.
//!
//! URL normalisation: lower-case scheme and host, default port dropped, fragment dropped, dot segments
//! resolved, percent-encoding canonicalised (unreserved characters decoded, hex upper-cased, `+` in the
//! query read as a space), empty query pairs dropped, query pairs stably sorted by name (so repeated
//! parameters keep their relative order, which servers may rely on).
//!
//! Body normalisation by content type: `application/x-www-form-urlencoded` as sorted pairs, JSON with
//! object keys sorted and insignificant whitespace removed, `multipart/form-data` as its parts without the
//! random boundary; anything else as raw bytes. An empty body has no digest. Structured bodies (form, JSON,
//! multipart) up to [`KEY_BODY_LIMIT`] are canonicalised; a larger one is keyed by its raw bytes, the
//! same way by every caller (replay refuses request bodies that large anyway).

use std::fmt::Write as _;

/// Structured request bodies up to this size are canonicalised before hashing (and buffered to do so);
/// larger ones are hashed as raw bytes.
pub const KEY_BODY_LIMIT: usize = 64 << 20;

/// A request's identity for matching. Made only by [`KeyBuilder`] (or [`request_key`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestKey {
    /// Upper-case method.
    method: String,
    /// Normalised absolute URL.
    url: String,
    /// BLAKE3 of the normalised body, if the body is not empty.
    body_digest: Option<[u8; 32]>,
}

/// Derives one [`RequestKey`] from a request head and its body in chunks.
#[derive(Debug, Clone)]
pub struct KeyBuilder {
    method: String,
    url: String,
    content_type: Option<String>,
    /// Whether the body is canonicalised (form / JSON / multipart), so it is buffered up to the limit.
    structured: bool,
    /// The body so far, while structured and within [`KEY_BODY_LIMIT`]; None past it.
    buffer: Option<Vec<u8>>,
    /// BLAKE3 of the raw bytes, always kept (the key of raw and oversized bodies).
    raw: blake3::Hasher,
    len: u64,
}

fn is_structured(content_type: Option<&str>) -> bool {
    let ct = content_type.unwrap_or("").to_ascii_lowercase();
    let mime = ct.split(';').next().unwrap_or("").trim();
    mime == "application/x-www-form-urlencoded"
        || mime == "application/json"
        || mime.ends_with("+json")
        || mime == "text/json"
        || mime == "multipart/form-data"
}

impl KeyBuilder {
    /// Start a key. `content_type` is the request's Content-Type header, if any.
    pub fn new(method: &str, url: &str, content_type: Option<&str>) -> Result<Self, KeyError> {
        let structured = is_structured(content_type);
        Ok(Self {
            method: method.trim().to_ascii_uppercase(),
            url: normalize_url(url)?,
            content_type: content_type.map(str::to_string),
            structured,
            buffer: structured.then(Vec::new),
            raw: blake3::Hasher::new(),
            len: 0,
        })
    }

    /// The next chunk of the body.
    pub fn update(&mut self, chunk: &[u8]) {
        self.raw.update(chunk);
        self.len += chunk.len() as u64;
        if let Some(b) = &mut self.buffer {
            if b.len() + chunk.len() > KEY_BODY_LIMIT {
                self.buffer = None;
            } else {
                b.extend_from_slice(chunk);
            }
        }
    }

    /// The key.
    pub fn finish(self) -> RequestKey {
        let body_digest = if self.len == 0 {
            None
        } else {
            match (&self.buffer, self.structured) {
                (Some(b), true) => {
                    Some(*blake3::hash(&normalize_body(self.content_type.as_deref(), b)).as_bytes())
                }
                _ => Some(*self.raw.finalize().as_bytes()),
            }
        };
        RequestKey { method: self.method, url: self.url, body_digest }
    }
}

impl RequestKey {
    /// Upper-case method.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// Normalised absolute URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// BLAKE3 of the normalised body, if the body is not empty.
    pub fn body_digest(&self) -> Option<&[u8; 32]> {
        self.body_digest.as_ref()
    }

    /// The 32-byte digest the store indexes on.
    pub fn digest(&self) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        h.update(self.method.as_bytes());
        h.update(&[0]);
        h.update(self.url.as_bytes());
        h.update(&[0]);
        if let Some(d) = &self.body_digest {
            h.update(d);
        }
        *h.finalize().as_bytes()
    }

    /// Lower-case hex of [`RequestKey::digest`].
    pub fn hex(&self) -> String {
        hex(&self.digest())
    }
}

/// Why a URL cannot be keyed.
#[derive(Debug, thiserror::Error)]
#[error("cannot normalise URL {url:?}: {reason}")]
pub struct KeyError {
    url: String,
    reason: String,
}

/// The key of a request whose whole body is at hand: [`KeyBuilder`] over one chunk.
pub fn request_key(
    method: &str,
    url: &str,
    content_type: Option<&str>,
    body: &[u8],
) -> Result<RequestKey, KeyError> {
    let mut b = KeyBuilder::new(method, url, content_type)?;
    b.update(body);
    Ok(b.finish())
}

/// Normalise an absolute URL (see the module docs).
pub fn normalize_url(raw: &str) -> Result<String, KeyError> {
    let mut u =
        url::Url::parse(raw.trim()).map_err(|e| KeyError { url: raw.to_string(), reason: e.to_string() })?;
    u.set_fragment(None);
    let path = canon_pct(u.path(), false);
    let query = u.query().map(normalize_query).filter(|q| !q.is_empty());
    let mut out = format!("{}://", u.scheme());
    if let Some(host) = u.host_str() {
        out.push_str(&host.to_ascii_lowercase());
    }
    if let Some(port) = u.port() {
        let _ = write!(out, ":{port}");
    }
    out.push_str(if path.is_empty() { "/" } else { &path });
    if let Some(q) = query {
        out.push('?');
        out.push_str(&q);
    }
    Ok(out)
}

/// `scheme://host[:port]/path` of a URL, normalised: the unit replay's fuzzy matching scans.
pub fn host_path(raw: &str) -> Result<String, KeyError> {
    let n = normalize_url(raw)?;
    Ok(match n.find('?') {
        Some(i) => n[..i].to_string(),
        None => n,
    })
}

/// Normalise a query string: canonical percent-encoding, empty pairs dropped, stable sort by name.
pub fn normalize_query(q: &str) -> String {
    let mut pairs = query_pairs(q);
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    join_pairs(&pairs)
}

/// Split a query into canonicalised `(name, Option<value>)` pairs, in order, empty pairs dropped.
pub fn query_pairs(q: &str) -> Vec<(String, Option<String>)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (canon_pct(k, true), Some(canon_pct(v, true))),
            None => (canon_pct(p, true), None),
        })
        .collect()
}

/// Join pairs made by [`query_pairs`] back into a query string.
pub fn join_pairs(pairs: &[(String, Option<String>)]) -> String {
    let mut out = String::new();
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        out.push_str(k);
        if let Some(v) = v {
            out.push('=');
            out.push_str(v);
        }
    }
    out
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn hexval(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Canonical percent-encoding: `%XX` of an unreserved byte is decoded, other escapes get upper-case hex;
/// in a query `+` is a space (`%20`). Everything else passes through unchanged.
fn canon_pct(s: &str, query: bool) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => match (hexval(b[i + 1]), hexval(b[i + 2])) {
                (Some(h), Some(l)) => {
                    let v = h * 16 + l;
                    if is_unreserved(v) {
                        out.push(v as char);
                    } else {
                        let _ = write!(out, "%{v:02X}");
                    }
                    i += 3;
                    continue;
                }
                _ => out.push('%'),
            },
            b'+' if query => out.push_str("%20"),
            _ => {
                // Copy one UTF-8 character whole.
                let ch_len = utf8_len(b[i]);
                let end = (i + ch_len).min(b.len());
                out.push_str(&String::from_utf8_lossy(&b[i..end]));
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

/// Canonical bytes of a request body for hashing (see the module docs).
pub fn normalize_body(content_type: Option<&str>, body: &[u8]) -> Vec<u8> {
    let ct = content_type.unwrap_or("").to_ascii_lowercase();
    let mime = ct.split(';').next().unwrap_or("").trim();
    if mime == "application/x-www-form-urlencoded" {
        if let Ok(s) = std::str::from_utf8(body) {
            return [b"form\0".as_slice(), normalize_query(s.trim()).as_bytes()].concat();
        }
    } else if mime == "application/json" || mime.ends_with("+json") || mime == "text/json" {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) {
            let mut out = b"json\0".to_vec();
            canonical_json(&v, &mut out);
            return out;
        }
    } else if mime == "multipart/form-data" {
        if let Some(boundary) = boundary_of(content_type.unwrap_or("")) {
            if let Some(parts) = multipart_canonical(body, &boundary) {
                return parts;
            }
        }
    }
    body.to_vec()
}

/// JSON with object keys sorted, no whitespace; numbers and strings as serde_json prints them.
fn canonical_json(v: &serde_json::Value, out: &mut Vec<u8>) {
    use serde_json::Value;
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(serde_json::Value::String((*k).clone()).to_string().as_bytes());
                out.push(b':');
                if let Some(child) = m.get(*k) {
                    canonical_json(child, out);
                }
            }
            out.push(b'}');
        }
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical_json(x, out);
            }
            out.push(b']');
        }
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

fn boundary_of(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|p| {
        let (k, v) = p.trim().split_once('=')?;
        k.trim().eq_ignore_ascii_case("boundary").then(|| v.trim().trim_matches('"').to_string())
    })
}

/// Parts of a multipart body, each as sorted lower-cased headers and data, without the boundary.
///
/// Hand-written on purpose: the multipart crates (multer) are async stream parsers, and key derivation must
/// be a plain synchronous function over bytes already in hand.
fn multipart_canonical(body: &[u8], boundary: &str) -> Option<Vec<u8>> {
    let delim = format!("--{boundary}");
    let d = delim.as_bytes();
    let mut out = b"multipart\0".to_vec();
    let mut rest = body;
    // Skip the preamble up to the first delimiter.
    let start = find(rest, d)?;
    rest = &rest[start + d.len()..];
    loop {
        if rest.starts_with(b"--") {
            return Some(out); // closing delimiter
        }
        let rest_after_crlf = rest.strip_prefix(b"\r\n").unwrap_or(rest);
        let end = find(rest_after_crlf, d)?;
        let part = &rest_after_crlf[..end];
        let part = part.strip_suffix(b"\r\n").unwrap_or(part);
        let (head, data) = match find(part, b"\r\n\r\n") {
            Some(i) => (&part[..i], &part[i + 4..]),
            None => (part, &[][..]),
        };
        let mut headers: Vec<String> = String::from_utf8_lossy(head)
            .split("\r\n")
            .filter(|l| !l.is_empty())
            .map(|l| l.trim().to_ascii_lowercase())
            .collect();
        headers.sort();
        out.extend_from_slice(headers.join("\n").as_bytes());
        out.push(0);
        out.extend_from_slice(blake3::hash(data).as_bytes());
        rest = &rest_after_crlf[end + d.len()..];
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || hay.len() < needle.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// Parse 64 hex characters into a 32-byte digest.
pub fn parse_hex32(s: &str) -> Option<[u8; 32]> {
    let b = s.as_bytes();
    if b.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = hexval(b[2 * i])? * 16 + hexval(b[2 * i + 1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn check_url(input: &str, expected: &str) {
        assert_eq!(normalize_url(input).unwrap(), expected, "input {input:?}");
    }

    #[test]
    fn url_normalisation_table() {
        for (input, expected) in [
            ("HTTP://Example.COM/", "http://example.com/"),
            ("https://example.com:443/a", "https://example.com/a"),
            ("http://example.com:80/a", "http://example.com/a"),
            ("https://example.com:8443/a", "https://example.com:8443/a"),
            ("https://example.com/a#frag", "https://example.com/a"),
            ("https://example.com", "https://example.com/"),
            ("https://example.com/a?b=2&a=1", "https://example.com/a?a=1&b=2"),
            ("https://example.com/a?x=2&y=0&x=1", "https://example.com/a?x=2&x=1&y=0"),
            ("https://example.com/a?", "https://example.com/a"),
            ("https://example.com/a?&&b=1&", "https://example.com/a?b=1"),
            ("https://example.com/%7Euser/%2f", "https://example.com/~user/%2F"),
            ("https://example.com/a?q=hello+world", "https://example.com/a?q=hello%20world"),
            ("https://example.com/a?q=hello%20world", "https://example.com/a?q=hello%20world"),
            ("https://example.com/a?q=%e2%82%ac", "https://example.com/a?q=%E2%82%AC"),
            ("https://example.com/a/./b/../c", "https://example.com/a/c"),
            ("https://example.com/a?flag&b=", "https://example.com/a?b=&flag"),
            ("http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x"),
        ] {
            check_url(input, expected);
        }
    }

    #[test]
    fn url_errors_are_reported() {
        assert!(normalize_url("not a url").is_err());
        assert!(normalize_url("/relative/only").is_err());
    }

    #[track_caller]
    fn same(a: (&str, Option<&str>, &[u8]), b: (&str, Option<&str>, &[u8]), expect_same: bool) {
        let ka = request_key("POST", a.0, a.1, a.2).unwrap();
        let kb = request_key("POST", b.0, b.1, b.2).unwrap();
        assert_eq!(ka.digest() == kb.digest(), expect_same, "{a:?} vs {b:?}");
    }

    #[test]
    fn body_normalisation_table() {
        let u = "https://example.com/api";
        let form = Some("application/x-www-form-urlencoded");
        let json = Some("application/json; charset=utf-8");
        let mp1 = Some("multipart/form-data; boundary=AAA");
        let mp2 = Some("multipart/form-data; boundary=\"BBB\"");
        let mp_body = |b: &str, v: &str| {
            format!("--{b}\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\n{v}\r\n--{b}--\r\n")
        };
        let m1 = mp_body("AAA", "one");
        let m2 = mp_body("BBB", "one");
        let m3 = mp_body("BBB", "two");
        for (a, b, expect) in [
            ((u, form, b"b=2&a=1".as_slice()), (u, form, b"a=1&b=2".as_slice()), true),
            ((u, form, b"a=1+2"), (u, form, b"a=1%202"), true),
            ((u, form, b"a=1"), (u, form, b"a=2"), false),
            ((u, json, br#"{"b":1, "a":[1,2]}"#), (u, json, br#"{"a":[1,2],"b":1}"#), true),
            ((u, json, br#"{"a":[1,2]}"#), (u, json, br#"{"a":[2,1]}"#), false),
            ((u, json, b"not json"), (u, json, b"not json"), true),
            ((u, None, b"raw"), (u, None, b"raw "), false),
            ((u, mp1, m1.as_bytes()), (u, mp2, m2.as_bytes()), true),
            ((u, mp2, m2.as_bytes()), (u, mp2, m3.as_bytes()), false),
            ((u, None, b""), (u, json, b""), true),
        ] {
            same(a, b, expect);
        }
    }

    #[test]
    fn method_case_and_empty_body() {
        let a = request_key("get", "https://a.test/", None, b"").unwrap();
        let b = request_key("GET", "https://A.test:443/#x", None, b"").unwrap();
        assert_eq!(a, b);
        assert!(a.body_digest().is_none());
        let c = request_key("HEAD", "https://a.test/", None, b"").unwrap();
        assert_ne!(a.digest(), c.digest());
    }

    #[test]
    fn hex_round_trip() {
        let d = *blake3::hash(b"x").as_bytes();
        assert_eq!(parse_hex32(&hex(&d)), Some(d));
        assert_eq!(parse_hex32("zz"), None);
    }

    #[test]
    fn chunked_builder_equals_the_whole_body_key() {
        let json = Some("application/json");
        let big = format!(r#"{{"b":"{}","a":1}}"#, "y".repeat(5 << 20));
        for (ct, body) in [
            (json, br#"{"b":1, "a":[1,2]}"#.to_vec()),
            (Some("application/x-www-form-urlencoded"), b"b=2&a=1".to_vec()),
            (None, b"raw bytes".to_vec()),
            (json, big.into_bytes()),
            (Some("application/octet-stream"), vec![7u8; 3 << 20]),
        ] {
            let whole = request_key("POST", "https://a.test/p", ct, &body).unwrap();
            for chunk in [1usize << 10, 64 << 10, 1 << 20] {
                let mut b = KeyBuilder::new("POST", "https://a.test/p", ct).unwrap();
                for c in body.chunks(chunk) {
                    b.update(c);
                }
                assert_eq!(b.finish(), whole, "{ct:?}, {} bytes in {chunk}-byte chunks", body.len());
            }
        }
    }

    #[test]
    fn structured_bodies_past_the_limit_key_on_raw_bytes() {
        let json = Some("application/json");
        let pad = "z".repeat(KEY_BODY_LIMIT);
        let a = format!(r#"{{"a":1,"p":"{pad}"}}"#);
        let b = format!(r#"{{"p":"{pad}","a":1}}"#);
        let ka = request_key("POST", "https://a.test/", json, a.as_bytes()).unwrap();
        let kb = request_key("POST", "https://a.test/", json, b.as_bytes()).unwrap();
        assert_ne!(ka, kb, "past the limit key order matters (raw bytes)");
        assert_eq!(ka.body_digest(), Some(blake3::hash(a.as_bytes()).as_bytes()));
    }
}
