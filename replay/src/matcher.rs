//! Layered matching of a request against a snapshot: exact key, normalised key (volatile parameters
//! stripped), scored fuzzy match within the same host and path (a request with a body only against one
//! whose body has the same fields: a form's preview is not its save), miss. Every answer says which layer
//! matched.

use std::collections::BTreeSet;

use snapshots::key::{normalize_url, query_pairs};
use snapshots::{request_key, Exchange, Manifest, Store, StoreError};

use crate::rules::Rules;

pub use proxy_report::replay::Layer;

/// The request as matching sees it.
#[derive(Debug, Clone)]
pub struct Incoming<'a> {
    /// Method.
    pub method: &'a str,
    /// Absolute URL.
    pub url: &'a str,
    /// Content-Type of the request body.
    pub content_type: Option<&'a str>,
    /// The request body.
    pub body: &'a [u8],
    /// Request headers.
    pub headers: &'a http::HeaderMap,
}

/// A match: the layer, the cursor group and the exchanges of that group in recorded order.
#[derive(Debug, Clone)]
pub struct Match {
    /// The layer that matched.
    pub layer: Layer,
    /// Identity of the sequence cursor: repeated identical requests step through `exchanges`.
    pub group: [u8; 32],
    /// Candidates in recorded order; shared, so the exact-match cache hands a match out without copying
    /// them (a request recorded 10,000 times was copied whole on every hit). Empty for an exact match of a
    /// key recorded more than [`EAGER_MAX`] times: then only `seqs` is held and the chosen exchange is read
    /// from the store when served.
    pub exchanges: std::sync::Arc<Vec<Exchange>>,
    /// The candidates' sequence numbers, in recorded order (always set).
    pub seqs: std::sync::Arc<Vec<u64>>,
    /// Fuzzy score (1.0 for exact and normalised).
    pub score: f64,
}

fn tagged(tag: &str, d: &[u8; 32]) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(tag.as_bytes());
    h.update(d);
    *h.finalize().as_bytes()
}

/// Digest of a request with volatile parameters stripped.
fn normalised_digest(
    rules: &Rules,
    method: &str,
    url: &str,
    ct: Option<&str>,
    body: &[u8],
) -> Option<[u8; 32]> {
    request_key(method, &rules.strip(url), ct, body).ok().map(|k| k.digest())
}

fn pairs_of(rules: &Rules, url: &str) -> BTreeSet<(String, Option<String>)> {
    let stripped = rules.strip(url);
    let n = normalize_url(&stripped).unwrap_or(stripped);
    match n.split_once('?') {
        Some((_, q)) => query_pairs(q).into_iter().collect(),
        None => BTreeSet::new(),
    }
}

/// Whether a query value looks like a volatile token (a timestamp or date, a numeric id, a hash, a random
/// cache-buster) rather than a name. Two such values may differ between a request and a fuzzy candidate;
/// any other difference changes which resource is meant.
pub fn volatile_value(v: &str) -> bool {
    let v = v.trim();
    if v.is_empty() {
        return true;
    }
    let digits = v.bytes().filter(u8::is_ascii_digit).count();
    // Numbers, timestamps, dates and times: digits with separators only.
    if digits > 0 && v.bytes().all(|b| b.is_ascii_digit() || b"-.:_+TZ%".contains(&b)) {
        return true;
    }
    // Hashes and UUIDs.
    let hex = v.bytes().filter(u8::is_ascii_hexdigit).count();
    if v.len() >= 8 && v.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') && hex >= 8 {
        return true;
    }
    // Random tokens: long, letters and digits interleaved (not words with a number), no other separators.
    let class_changes =
        v.as_bytes().windows(2).filter(|w| w[0].is_ascii_digit() != w[1].is_ascii_digit()).count();
    v.len() >= 16
        && digits > 0
        && class_changes >= 4
        && v.bytes().any(|b| b.is_ascii_alphabetic())
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_=".contains(&b))
}

/// The first query parameter present on both sides whose values differ in a way that names another
/// resource (see [`volatile_value`]); such a candidate is never served as a fuzzy answer.
pub fn identity_conflict(
    mine: &BTreeSet<(String, Option<String>)>,
    theirs: &BTreeSet<(String, Option<String>)>,
) -> Option<String> {
    let values = |set: &BTreeSet<(String, Option<String>)>, k: &str| -> Vec<String> {
        set.iter().filter(|(n, _)| n == k).map(|(_, v)| v.clone().unwrap_or_default()).collect()
    };
    let keys: BTreeSet<&String> = mine.iter().map(|(k, _)| k).collect();
    for k in keys {
        if !theirs.iter().any(|(n, _)| n == k) {
            continue;
        }
        let (a, b) = (values(mine, k), values(theirs, k));
        if a == b {
            continue;
        }
        let differing = a.iter().filter(|v| !b.contains(v)).chain(b.iter().filter(|v| !a.contains(v)));
        if differing.clone().any(|v| !volatile_value(v)) {
            return Some(k.clone());
        }
    }
    None
}

pub use crate::rules::{is_content_param, CONTENT_PARAMS};

/// The first content-naming parameter ([`is_content_param`]) on which the two sides differ (present on one
/// only, or with other values): such a candidate is another resource, never a fuzzy answer.
pub fn content_conflict(
    mine: &BTreeSet<(String, Option<String>)>,
    theirs: &BTreeSet<(String, Option<String>)>,
) -> Option<String> {
    let of = |set: &BTreeSet<(String, Option<String>)>, k: &str| -> BTreeSet<Option<String>> {
        set.iter().filter(|(n, _)| n.eq_ignore_ascii_case(k)).map(|(_, v)| v.clone()).collect()
    };
    // The name as written decides (`productId` is an id, `productid` is not).
    let names: BTreeSet<&String> = mine.iter().chain(theirs).map(|(k, _)| k).collect();
    // A long number that is no time now names a thing (an ISBN, a catalogue node) whatever its
    // parameter is called: another one is another resource.
    let id_like = |vs: &BTreeSet<Option<String>>| {
        vs.iter()
            .flatten()
            .any(|v| v.len() >= 8 && v.bytes().all(|b| b.is_ascii_digit()) && !crate::rules::unix_time_now(v))
    };
    names
        .into_iter()
        .find(|k| {
            let (a, b) = (of(mine, k), of(theirs, k));
            a != b
                && (is_content_param(k) || (!a.is_empty() && !b.is_empty() && (id_like(&a) || id_like(&b))))
        })
        .map(|k| k.to_ascii_lowercase())
}

/// The field names of a request body (a form's, a multipart form's, a JSON object's top-level keys):
/// what the fuzzy layer requires to be the same on both sides (see [`find`]).
fn body_fields(content_type: Option<&str>, body: &[u8]) -> BTreeSet<String> {
    if body.is_empty() {
        return BTreeSet::new();
    }
    proxy::guard::field_names(content_type, body).into_iter().collect()
}

fn jaccard<T: Ord>(a: &BTreeSet<T>, b: &BTreeSet<T>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let inter = a.intersection(b).count() as f64;
    let union = a.union(b).count() as f64;
    inter / union
}

pub(crate) fn swap_scheme(url: &str) -> Option<String> {
    if let Some(rest) = url.strip_prefix("https://") {
        Some(format!("http://{}", rest.replacen(":443/", "/", 1)))
    } else {
        url.strip_prefix("http://").map(|rest| format!("https://{}", rest.replacen(":80/", "/", 1)))
    }
}

/// Past this many exchanges recorded under one key, an exact match holds their sequence numbers only.
pub const EAGER_MAX: usize = 64;

impl Match {
    /// How many candidates.
    pub fn len(&self) -> usize {
        self.seqs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.seqs.is_empty()
    }

    /// When candidate `i` was recorded without its body and a later candidate has its body: that one's
    /// index (held candidates only; a key recorded past [`EAGER_MAX`] times is served in order).
    pub fn complete_after(&self, i: usize) -> Option<usize> {
        let x = self.exchanges.get(i)?;
        if !x.flags.body_not_captured {
            return None;
        }
        self.exchanges
            .iter()
            .enumerate()
            .skip(i + 1)
            .find(|(_, x)| !x.flags.body_not_captured)
            .map(|(j, _)| j)
    }

    /// Whether candidate `i` is held in memory ([`Match::get`] then reads nothing from the store).
    pub fn is_held(&self, i: usize) -> bool {
        i < self.exchanges.len()
    }

    /// Candidate `i` (recorded order): held, or read from the store.
    pub fn get(
        &self,
        store: &Store,
        m: &Manifest,
        i: usize,
    ) -> Result<Option<std::borrow::Cow<'_, Exchange>>, StoreError> {
        match self.exchanges.get(i) {
            // Held: lent, not copied (a hit's exchange, headers and all, was cloned on every request).
            Some(x) => Ok(Some(std::borrow::Cow::Borrowed(x))),
            None => match self.seqs.get(i) {
                Some(&seq) => Ok(store.exchange(m, seq)?.map(std::borrow::Cow::Owned)),
                None => Ok(None),
            },
        }
    }
}

/// Find the answer for a request whose key (from [`request_key`]) is `key`. `Ok(None)` is a miss.
pub fn find(
    store: &Store,
    m: &Manifest,
    rules: &Rules,
    req: &Incoming<'_>,
    key: &snapshots::RequestKey,
    fuzzy_min_score: f64,
) -> Result<Option<Match>, StoreError> {
    let seqs = store.lookup_seqs(m, &key.digest())?;
    if !seqs.is_empty() {
        // Decoding every copy of a key recorded thousands of times (an endpoint polled under load) cost
        // seconds per cold request and held them all in memory: past EAGER_MAX, exchanges are read when served.
        let exchanges = if seqs.len() <= EAGER_MAX { store.lookup(m, key)? } else { Vec::new() };
        return Ok(Some(Match {
            layer: Layer::Exact,
            group: tagged("exact", &key.digest()),
            exchanges: exchanges.into(),
            seqs: seqs.into(),
            score: 1.0,
        }));
    }
    // Browsers upgrade http:// navigations to https:// (Chromium's HTTPS-Upgrades) and sites redirect the
    // other way: the same request under the other scheme is the same resource.
    if let Some(other) = swap_scheme(req.url) {
        if let Ok(k2) = request_key(req.method, &other, req.content_type, req.body) {
            let xs = store.lookup(m, &k2)?;
            if !xs.is_empty() {
                return Ok(Some(Match {
                    layer: Layer::Normalised,
                    group: tagged("scheme", &k2.digest()),
                    seqs: xs.iter().map(|x| x.seq).collect::<Vec<_>>().into(),
                    exchanges: xs.into(),
                    score: 1.0,
                }));
            }
        }
    }
    let candidates = store.scan_host_path(m, req.url)?;
    if candidates.is_empty() {
        return Ok(None);
    }
    let method = req.method.to_ascii_uppercase();
    let same_method: Vec<Exchange> = candidates.into_iter().filter(|x| x.request.method == method).collect();
    // Normalised layer.
    if let Some(mine) = normalised_digest(rules, req.method, req.url, req.content_type, req.body) {
        let mut hits = Vec::new();
        for x in &same_method {
            let body = match &x.request.body {
                Some(b) => store.blob_bytes(&b.hash)?,
                None => Vec::new(),
            };
            if normalised_digest(
                rules,
                &x.request.method,
                &x.request.url,
                x.request.header("content-type"),
                &body,
            ) == Some(mine)
            {
                hits.push(x.clone());
            }
        }
        if !hits.is_empty() {
            return Ok(Some(Match {
                layer: Layer::Normalised,
                group: tagged("normalised", &mine),
                seqs: hits.iter().map(|x| x.seq).collect::<Vec<_>>().into(),
                exchanges: hits.into(),
                score: 1.0,
            }));
        }
    }
    // Fuzzy layer: query-parameter overlap, ties broken by header overlap, then recorded order. A candidate
    // whose parameters name another resource is ruled out, and so is one scoring under the threshold.
    let my_pairs = pairs_of(rules, req.url);
    let my_keys: BTreeSet<String> = my_pairs.iter().map(|(k, _)| k.clone()).collect();
    let my_headers: BTreeSet<(String, String)> = req
        .headers
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    // A request with a body is another form's or another call's when its fields are not the recorded
    // one's: MediaWiki's preview (`wpPreview`) is not its save (`wpSave`), though both post to one URL.
    let my_fields = body_fields(req.content_type, req.body);
    let mut best: Option<(f64, usize, &Exchange)> = None;
    for x in &same_method {
        let theirs = pairs_of(rules, &x.request.url);
        if identity_conflict(&my_pairs, &theirs).is_some() || content_conflict(&my_pairs, &theirs).is_some() {
            continue;
        }
        let their_body = match &x.request.body {
            Some(b) => store.blob_bytes(&b.hash)?,
            None => Vec::new(),
        };
        if body_fields(x.request.header("content-type"), &their_body) != my_fields {
            continue;
        }
        let their_keys: BTreeSet<String> = theirs.iter().map(|(k, _)| k.clone()).collect();
        let score = 0.7 * jaccard(&my_pairs, &theirs) + 0.3 * jaccard(&my_keys, &their_keys);
        // A candidate with nothing in common (parameters on both sides, none shared) is no match, whatever
        // the threshold; a recorded URL without parameters may still answer a request that adds some
        // (a content-naming one is ruled out above).
        let disjoint = !my_keys.is_empty() && !their_keys.is_empty() && my_keys.is_disjoint(&their_keys);
        if disjoint || score + 1e-9 < fuzzy_min_score {
            continue;
        }
        let hdr = x
            .request
            .headers
            .iter()
            .filter(|h| my_headers.contains(&(h.name.to_ascii_lowercase(), h.value.clone())))
            .count();
        let better = match best {
            None => true,
            Some((s, h, _)) => score > s + 1e-9 || ((score - s).abs() <= 1e-9 && hdr > h),
        };
        if better {
            best = Some((score, hdr, x));
        }
    }
    let Some((score, _, chosen)) = best else { return Ok(None) };
    let group_exchanges: Vec<Exchange> =
        same_method.iter().filter(|x| x.key == chosen.key).cloned().collect();
    let digest = snapshots::key::parse_hex32(&chosen.key).unwrap_or([0; 32]);
    Ok(Some(Match {
        layer: Layer::Fuzzy,
        group: tagged("fuzzy", &digest),
        seqs: group_exchanges.iter().map(|x| x.seq).collect::<Vec<_>>().into(),
        exchanges: group_exchanges.into(),
        score,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the fuzzy layer requires of a body: the same fields, whatever their values.
    #[test]
    fn a_body_matches_fuzzily_only_with_the_same_fields() {
        let form = Some("application/x-www-form-urlencoded");
        let mp = Some("multipart/form-data; boundary=b");
        let part =
            |n: &str, v: &str| format!("--b\r\nContent-Disposition: form-data; name=\"{n}\"\r\n\r\n{v}\r\n");
        let save = format!(
            "{}{}{}--b--\r\n",
            part("wpTextbox1", "* Thyme"),
            part("wpSave", "Save"),
            part("wpEditToken", "+\\")
        );
        let save2 = format!(
            "{}{}{}--b--\r\n",
            part("wpTextbox1", "* Mint"),
            part("wpSave", "Save"),
            part("wpEditToken", "x")
        );
        let preview = format!(
            "{}{}{}--b--\r\n",
            part("wpTextbox1", "* Thyme"),
            part("wpPreview", "Show"),
            part("wpEditToken", "+\\")
        );
        type Row<'a> = (&'a str, Option<&'a str>, &'a str, Option<&'a str>, &'a str, bool);
        let rows: Vec<Row> = vec![
            ("another text, the same save", mp, &save, mp, &save2, true),
            ("a preview is not the save", mp, &preview, mp, &save, false),
            ("a form with other values", form, "q=tea&page=2", form, "page=1&q=mugs", true),
            ("a form with another field", form, "q=tea", form, "q=tea&delete=1", false),
            (
                "JSON keys",
                Some("application/json"),
                r#"{"a":1,"b":2}"#,
                Some("application/json"),
                r#"{"b":3,"a":4}"#,
                true,
            ),
            ("no body on either side", None, "", None, "", true),
        ];
        for (name, ct_a, a, ct_b, b, same) in rows {
            assert_eq!(body_fields(ct_a, a.as_bytes()) == body_fields(ct_b, b.as_bytes()), same, "{name}");
        }
    }

    #[test]
    fn volatile_values() {
        for (v, volatile) in [
            ("1712345678999", true),
            ("2", true),
            ("2026-11-22T10:00:00Z", true),
            ("3.14", true),
            ("d41d8cd98f00b204e9800998ecf8427e", true),
            ("123e4567-e89b-12d3-a456-426614174000", true),
            ("aZ3kP9qL2mN8xV4t", true),
            ("", true),
            ("startup", false),
            ("ext.visualEditor.core|jquery", false),
            ("price", false),
            ("deadbeef-cafe", true),
            ("Kettle", false),
            ("blue-kettle-2024", false),
        ] {
            assert_eq!(volatile_value(v), volatile, "{v:?}");
        }
    }

    fn pairs(q: &str) -> BTreeSet<(String, Option<String>)> {
        query_pairs(q).into_iter().collect()
    }

    #[test]
    fn identity_conflicts() {
        for (mine, theirs, conflict) in [
            ("modules=startup&lang=en", "modules=jquery&lang=en", Some("modules")),
            ("modules=startup&lang=en", "modules=startup&lang=de", Some("lang")),
            ("page=2&q=socks", "page=1&q=socks", None),
            ("q=socks&t=1712345678999", "q=socks&t=1700000000000", None),
            ("q=socks&extra=1", "q=socks", None),
            ("q=socks", "q=socks&sort=price", None),
            ("id=a1b2c3d4e5", "id=f6a7b8c9d0", None),
            ("tag=a&tag=b", "tag=a&tag=c", Some("tag")),
            ("tag=a&tag=b", "tag=b&tag=a", None),
            ("sort=name", "sort=price", Some("sort")),
        ] {
            assert_eq!(
                identity_conflict(&pairs(mine), &pairs(theirs)).as_deref(),
                conflict,
                "{mine} vs {theirs}"
            );
        }
    }
}
