//! What changed between two recordings of a site (`webfreeze snapshots diff A B`).
//!
//! Exchanges are matched by method and normalised URL ([`crate::key::normalize_url`]); a URL recorded
//! several times is compared by its first response (what a fresh visit gets). Documents (HTML responses) and
//! other resources are listed apart: added, removed, or changed (status or body hash). The store holds the
//! bodies, so a caller can diff the text of changed documents ([`Change::a`] / [`Change::b`] name them).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::{Exchange, Store, StoreError};

/// One side of a changed URL.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    /// Response status.
    pub status: u16,
    /// BLAKE3 of the decoded body (empty when none was captured).
    pub hash: String,
    /// Body size in bytes.
    pub size: u64,
    /// The response's content type.
    pub content_type: String,
}

/// What happened to one URL between the two recordings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// Only in the second recording.
    Added,
    /// Only in the first.
    Removed,
    /// In both, with another status or body.
    Changed,
}

/// One URL's change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// Added, removed or changed.
    pub kind: ChangeKind,
    /// Request method.
    pub method: String,
    /// The URL as recorded (the first recording's when in both).
    pub url: String,
    /// In the first recording.
    pub a: Option<Side>,
    /// In the second.
    pub b: Option<Side>,
}

/// The comparison of two snapshots.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SnapshotDiff {
    /// HTML documents added, removed or changed, by URL.
    pub documents: Vec<Change>,
    /// Every other resource added, removed or changed, by URL.
    pub resources: Vec<Change>,
    /// URLs in both with the same status and body.
    pub unchanged: usize,
}

impl SnapshotDiff {
    /// Nothing added, removed or changed.
    pub fn is_empty(&self) -> bool {
        self.documents.is_empty() && self.resources.is_empty()
    }
}

fn side(x: &Exchange) -> Side {
    let content_type = x.response.header("content-type").unwrap_or_default().to_string();
    Side {
        status: x.response.status,
        hash: x.response.body.as_ref().map(|b| b.hash.clone()).unwrap_or_default(),
        size: x.response.body.as_ref().map_or(0, |b| b.size),
        content_type,
    }
}

/// Whether a response is an HTML document.
pub fn is_document(s: &Side) -> bool {
    let ct = s.content_type.to_ascii_lowercase();
    ct.contains("text/html") || ct.contains("application/xhtml")
}

/// (method, normalised URL) -> (the URL as recorded, its first response).
type Firsts = BTreeMap<(String, String), (String, Side)>;

/// First response per (method, normalised URL), with the URL as recorded.
fn firsts(store: &Store, name: &str) -> Result<Firsts, StoreError> {
    let m = store.manifest(name)?;
    let mut out = BTreeMap::new();
    for x in store.exchanges(&m) {
        let x = x?;
        let norm = crate::key::normalize_url(&x.request.url).unwrap_or_else(|_| x.request.url.clone());
        out.entry((x.request.method.clone(), norm)).or_insert_with(|| (x.request.url.clone(), side(&x)));
    }
    Ok(out)
}

/// Compare snapshot `a` of `store_a` with snapshot `b` of `store_b` (the same store twice is fine).
pub fn diff(store_a: &Store, a: &str, store_b: &Store, b: &str) -> Result<SnapshotDiff, StoreError> {
    let (fa, mut fb) = (firsts(store_a, a)?, firsts(store_b, b)?);
    let mut d = SnapshotDiff::default();
    let mut push = |c: Change| {
        let doc = c.a.as_ref().or(c.b.as_ref()).is_some_and(is_document);
        if doc {
            d.documents.push(c);
        } else {
            d.resources.push(c);
        }
    };
    let mut unchanged = 0;
    for ((method, norm), (url, sa)) in fa {
        match fb.remove(&(method.clone(), norm)) {
            None => push(Change { kind: ChangeKind::Removed, method, url, a: Some(sa), b: None }),
            Some((_, sb)) if sb.status == sa.status && sb.hash == sa.hash => unchanged += 1,
            Some((_, sb)) => {
                push(Change { kind: ChangeKind::Changed, method, url, a: Some(sa), b: Some(sb) })
            }
        }
    }
    for ((method, _), (url, sb)) in fb {
        push(Change { kind: ChangeKind::Added, method, url, a: None, b: Some(sb) });
    }
    d.unchanged = unchanged;
    Ok(d)
}
