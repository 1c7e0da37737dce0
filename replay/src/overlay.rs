//! The frozen web beyond one snapshot: other snapshots consulted, in a fixed order, for what the replayed
//! snapshot lacks. A benchmark records many tasks on one site, and their recordings together cover far more
//! of the site than any one of them; a run that did not record the snapshot (another model, the same model
//! at temperature > 0) walks off the recorded path within a few steps and lands on pages another task saw.
//!
//! Order, for a request the replayed snapshot does not answer exactly:
//! 1. the replayed snapshot's exact and normalised layers (as always);
//! 2. each overlay in order, its exact and normalised layers;
//! 3. the replayed snapshot's fuzzy layer;
//! 4. each overlay in order, its fuzzy layer.
//!
//! Overlays answer safe methods only (GET, HEAD, OPTIONS) unless [`Overlays::writes`] is set: a POST's
//! answer carries the state of the task that made it. They have no sequence semantics: an overlay serves the
//! first response it recorded for the request, whatever was asked before (state from another task would be
//! wrong). What an overlay answered is counted as its own layer in the report, never as exact. Two kinds:
//! the task's exploration (`explore`: pages its recording agent could have reached, recorded apart) and
//! the other tasks' recordings of the site (`site-union`); a task's exploration comes before the union.

use snapshots::{Manifest, Store, StoreError};

use crate::matcher::{self, Incoming, Layer, Match};
use crate::rules::Rules;

pub use proxy_report::replay::OverlayKind;

/// One snapshot consulted after the replayed one.
#[derive(Debug, Clone)]
pub struct Overlay {
    /// Its layer.
    pub kind: OverlayKind,
    /// The snapshot (read from the replay's store).
    pub manifest: Manifest,
}

/// The snapshots consulted after the replayed one, in order.
#[derive(Debug, Clone, Default)]
pub struct Overlays {
    /// In the order they are consulted.
    pub layers: Vec<Overlay>,
    /// Overlays also answer requests with side effects (POST, PUT, PATCH, DELETE). Off by default.
    pub writes: bool,
    /// Which layers hold a request's address ([`crate::sieve`]): only those are probed. None: each layer
    /// is probed in turn. A layer the sieve does not cover is always probed.
    pub sieve: Option<std::sync::Arc<crate::sieve::LayerSieve>>,
    /// Pages the crawl layers do not answer: those a crawl reached only through a held-out task's own recorded
    /// documents (`webfreeze coverage`, `session::crawl::reach`). Matched on the recorded page's URL, so no
    /// normalised or fuzzy match brings one back.
    pub hidden: Option<std::sync::Arc<std::collections::BTreeSet<String>>>,
}

/// An overlay's answer.
#[derive(Debug, Clone)]
pub(crate) struct OverlayMatch {
    /// Index into [`Overlays::layers`].
    pub(crate) overlay: usize,
    pub(crate) found: Match,
}

/// The order of the site union: the other snapshots of the run, by name (byte order), so the order depends
/// neither on the task file's order nor on when the tasks ran. `own` is left out.
pub fn site_union_order(mut others: Vec<Manifest>, own: &str) -> Vec<Manifest> {
    others.retain(|m| m.name != own);
    others.sort_by(|a, b| a.name.cmp(&b.name));
    others.dedup_by(|a, b| a.name == b.name);
    others
}

impl Overlays {
    /// Whether there is nothing beyond the replayed snapshot.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }

    /// Whether overlays may answer a request with this method.
    pub(crate) fn answers(&self, method: &str) -> bool {
        self.writes || matches!(method.to_ascii_uppercase().as_str(), "GET" | "HEAD" | "OPTIONS")
    }

    /// Whether `found` (in crawl part `m`) is a hidden page ([`Overlays::hidden`]).
    fn hides(&self, store: &Store, m: &Manifest, found: &Match) -> bool {
        let Some(hidden) = self.hidden.as_ref().filter(|h| !h.is_empty()) else { return false };
        match found.get(store, m, 0) {
            Ok(Some(x)) => hidden.contains(&x.request.url),
            // An answer that cannot be read is not served either.
            Ok(None) | Err(_) => true,
        }
    }

    /// The first overlay answer at or above `floor`: with `Layer::Normalised` only exact and normalised
    /// answers count (step 2 of the module's order); with `Layer::Fuzzy` any (step 4, which falls back to
    /// the first fuzzy answer once no overlay answers better).
    pub(crate) fn find(
        &self,
        store: &Store,
        rules: &Rules,
        req: &Incoming<'_>,
        key: &snapshots::RequestKey,
        fuzzy_min_score: f64,
        floor: Layer,
    ) -> Result<Option<OverlayMatch>, StoreError> {
        if !self.answers(req.method) {
            return Ok(None);
        }
        let mut fuzzy = None;
        let probed: Vec<usize> = match &self.sieve {
            None => (0..self.layers.len()).collect(),
            Some(sieve) => sieve.probed(req.url),
        };
        for i in probed {
            let Some(o) = self.layers.get(i) else { continue };
            // An overlay that cannot be read is a miss for it, not an error for the request.
            let found = match matcher::find(store, &o.manifest, rules, req, key, fuzzy_min_score) {
                Ok(f) => f,
                Err(e) => {
                    tracing::warn!("overlay {} ({}): {e}", o.manifest.name, o.kind);
                    None
                }
            };
            let Some(found) = found else { continue };
            if o.kind == OverlayKind::Crawl && self.hides(store, &o.manifest, &found) {
                continue;
            }
            if found.layer <= Layer::Normalised {
                return Ok(Some(OverlayMatch { overlay: i, found }));
            }
            if floor == Layer::Fuzzy && fuzzy.is_none() {
                fuzzy = Some(OverlayMatch { overlay: i, found });
            }
        }
        Ok(fuzzy)
    }
}

impl crate::Replay {
    /// Serve an overlay's answer (its first recorded response: overlays have no sequence semantics) and
    /// count it under the overlay's layer.
    pub(crate) fn answer_from_overlay(
        &self,
        ctx: &crate::ReplayCtx,
        om: OverlayMatch,
        req_headers: &http::HeaderMap,
        method: &str,
        url: &str,
        dest: Option<String>,
    ) -> proxy::Decision {
        use http::StatusCode;
        use proxy::{text_response, Decision};
        let Some(o) = self.cfg.overlays.layers.get(om.overlay) else {
            return Decision::Respond(text_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                "replay overlay lost\n",
            ));
        };
        let x = match om.found.get(&self.store, &o.manifest, 0) {
            Ok(Some(x)) => x,
            Ok(None) | Err(_) => {
                return Decision::Respond(text_response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!(
                        "webfreeze replay: {url} could not be read from {} ({})\n",
                        o.manifest.name, o.kind
                    ),
                ))
            }
        };
        let answer = if x.flags.body_not_captured {
            proxy_report::wire::Answer::WithoutBody
        } else {
            proxy_report::wire::Answer::Overlay
        };
        let mut noted = crate::wire::Answered::from_exchange(answer, &o.manifest.name, &x);
        noted.overlay = Some(o.kind);
        self.wire_answer(ctx, noted);
        if let Ok(mut s) = self.state.lock() {
            if x.flags.body_not_captured {
                s.without_body += 1;
                s.without_body_urls.push(url.to_string());
            } else {
                *s.overlay_counts.entry(o.kind).or_insert(0) += 1;
                let episode = s.episode;
                s.overlay_answers.push(crate::OverlayEntry {
                    episode,
                    layer: o.kind,
                    method: method.to_string(),
                    url: url.to_string(),
                    snapshot: o.manifest.name.clone(),
                    matched: om.found.layer,
                    dest: dest.clone(),
                });
            }
        }
        tracing::debug!(
            "replay {} ({}) {method} {url} -> {}#{}",
            o.kind,
            om.found.layer,
            o.manifest.name,
            x.seq
        );
        if dest.as_deref() == Some("document") {
            self.note_wall(&x);
        }
        if x.flags.body_not_captured && self.cfg.not_captured == crate::NotCaptured::NotFound {
            return Decision::Respond(crate::serving::not_captured_response(&o.manifest.name, method, url));
        }
        let callback = match (self.cfg.rules.callback_of(&x.request.url), self.cfg.rules.callback_of(url)) {
            (Some(a), Some(b)) if a != b => Some((a, b)),
            _ => None,
        };
        match self.serve_exchange(req_headers, &x, &o.manifest, callback) {
            Ok(mut r) => {
                r.headers_mut().insert(
                    http::HeaderName::from_static(LAYER_HEADER),
                    http::HeaderValue::from_static(o.kind.name()),
                );
                Decision::Respond(r)
            }
            Err(e) => Decision::Respond(text_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("webfreeze replay: cannot serve {url}: {}\n", e.message),
            )),
        }
    }
}

/// Response header naming the layer that answered when it was not the replayed snapshot itself.
pub const LAYER_HEADER: &str = "x-webfreeze-layer";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlays_answer_safe_methods_unless_writes_are_allowed() {
        for (method, writes, answers) in [
            ("GET", false, true),
            ("get", false, true),
            ("HEAD", false, true),
            ("OPTIONS", false, true),
            ("POST", false, false),
            ("PUT", false, false),
            ("DELETE", false, false),
            ("PATCH", false, false),
            ("POST", true, true),
        ] {
            let o = Overlays { layers: Vec::new(), writes, ..Overlays::default() };
            assert_eq!(o.answers(method), answers, "{method} writes={writes}");
        }
    }
}
