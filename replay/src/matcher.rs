//! Layered matching of a request against a snapshot: exact key, normalised key (volatile parameters
//! stripped), scored fuzzy match within the same host and path, miss. Every answer says which layer matched.

use std::collections::BTreeSet;

use serde::Serialize;
use snapshots::key::{normalize_url, query_pairs};
use snapshots::{request_key, Exchange, Manifest, Store, StoreError};

use crate::rules::Rules;

/// Which layer found the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layer {
    /// Same request key.
    Exact,
    /// Same key once volatile parameters are stripped.
    Normalised,
    /// Best-scoring exchange of the same method, host and path.
    Fuzzy,
}

impl std::fmt::Display for Layer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Layer::Exact => "exact",
            Layer::Normalised => "normalised",
            Layer::Fuzzy => "fuzzy",
        })
    }
}

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
    /// Request headers (lower-case names).
    pub headers: &'a [(String, String)],
}

/// A match: the layer, the cursor group and the exchanges of that group in recorded order.
#[derive(Debug, Clone)]
pub struct Match {
    /// The layer that matched.
    pub layer: Layer,
    /// Identity of the sequence cursor: repeated identical requests step through `exchanges`.
    pub group: [u8; 32],
    /// Candidates in recorded order.
    pub exchanges: Vec<Exchange>,
    /// Fuzzy score (1.0 for exact and normalised).
    pub score: f64,
}

fn tagged(tag: &str, d: &[u8; 32]) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(tag.as_bytes());
    h.update(d);
    *h.finalize().as_bytes()
}

fn header_of<'a>(x: &'a Exchange, name: &str) -> Option<&'a str> {
    x.request.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value.as_str())
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

fn jaccard<T: Ord>(a: &BTreeSet<T>, b: &BTreeSet<T>) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let inter = a.intersection(b).count() as f64;
    let union = a.union(b).count() as f64;
    inter / union
}

fn swap_scheme(url: &str) -> Option<String> {
    if let Some(rest) = url.strip_prefix("https://") {
        Some(format!("http://{}", rest.replacen(":443/", "/", 1)))
    } else {
        url.strip_prefix("http://").map(|rest| format!("https://{}", rest.replacen(":80/", "/", 1)))
    }
}

/// Find the answer for a request whose key (from [`request_key`]) is `key`. `Ok(None)` is a miss.
pub fn find(
    store: &Store,
    m: &Manifest,
    rules: &Rules,
    req: &Incoming<'_>,
    key: &snapshots::RequestKey,
) -> Result<Option<Match>, StoreError> {
    let exact = store.lookup(m, key)?;
    if !exact.is_empty() {
        return Ok(Some(Match {
            layer: Layer::Exact,
            group: tagged("exact", &key.digest()),
            exchanges: exact,
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
                    exchanges: xs,
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
                header_of(x, "content-type"),
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
                exchanges: hits,
                score: 1.0,
            }));
        }
    }
    // Fuzzy layer: query-parameter overlap, ties broken by header overlap, then recorded order.
    let my_pairs = pairs_of(rules, req.url);
    let my_keys: BTreeSet<String> = my_pairs.iter().map(|(k, _)| k.clone()).collect();
    let my_headers: BTreeSet<(String, String)> =
        req.headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), v.clone())).collect();
    let mut best: Option<(f64, usize, &Exchange)> = None;
    for x in &same_method {
        let theirs = pairs_of(rules, &x.request.url);
        let their_keys: BTreeSet<String> = theirs.iter().map(|(k, _)| k.clone()).collect();
        let score = 0.7 * jaccard(&my_pairs, &theirs) + 0.3 * jaccard(&my_keys, &their_keys);
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
        exchanges: group_exchanges,
        score,
    }))
}
