//! Consult the layers, the second of [`Replay::decide`]'s three steps: the request's key derived (once),
//! then the replayed snapshot's layers (exact, normalised, fuzzy: [`matcher`]), then, for what it lacks,
//! the overlays in their order ([`crate::overlay`]). Exact answers are kept in the hot caches
//! ([`crate::caches`]): the snapshot and its overlays are immutable while replayed. Nothing here moves a
//! sequence cursor or counts an answer: that is the answer's step.

use proxy::{text_response, Decision};
use snapshots::StoreError;

use crate::classify::Classified;
use crate::matcher::{self, Layer, Match};
use crate::overlay::OverlayMatch;
use crate::{Keyed, Replay};

/// What the layers found for a request.
pub(crate) enum Found {
    /// The replayed snapshot's answer (None: nothing, and no overlay either).
    Own(Option<Match>),
    /// An overlay's answer, for what the replayed snapshot lacks.
    Overlay(OverlayMatch),
}

impl Replay {
    /// The layers' answer to `req`; a store error is answered here (500).
    pub(crate) async fn consult_layers(&self, req: &Classified) -> Result<Found, Decision> {
        // The key is derived once: it indexes the exact-match caches and the store.
        let keyed = self.key_of(req);
        let found = self.find_own(req, keyed.as_ref()).await.map_err(|e| {
            tracing::error!("replay lookup for {}: {e}", req.url);
            Decision::Respond(text_response(
                http::StatusCode::INTERNAL_SERVER_ERROR,
                &format!("webfreeze replay: store error for {}: {e}\n", req.url),
            ))
        })?;
        // A write the recording never made is the miss policy's: a fuzzy answer would hand it the state
        // of another write (`epochs`).
        let found = found.filter(|m| !(req.is_write && m.layer == Layer::Fuzzy));
        // What the snapshot lacks (no answer, or only a fuzzy one) the overlays may have: the order is in
        // the `overlay` module's docs.
        let lacks = found.as_ref().is_none_or(|m| m.layer > Layer::Normalised);
        if lacks && !self.cfg.overlays.is_empty() {
            if let Some(keyed) = &keyed {
                let floor = if found.is_some() { Layer::Normalised } else { Layer::Fuzzy };
                match self.find_in_overlays(req, keyed, floor).await {
                    Ok(Some(om)) => return Ok(Found::Overlay(om)),
                    Ok(None) => {}
                    Err(e) => tracing::warn!("replay overlays for {}: {e}", req.url),
                }
            }
        }
        Ok(Found::Own(found))
    }

    /// The request's key and its digest: derived (the URL parsed and normalised, then hashed), or for a
    /// GET without a body found again by its URL. None for a URL that cannot be keyed.
    fn key_of(&self, req: &Classified) -> Option<Keyed> {
        let plain_get = req.method == "GET" && req.content_type.is_none() && req.body.is_empty();
        if plain_get {
            if let Some(k) = self.caches.keys.get(req.url.as_str()) {
                return Some(k);
            }
        }
        let key =
            snapshots::request_key(&req.method, &req.url, req.content_type.as_deref(), &req.body).ok()?;
        let digest = key.digest();
        let keyed = std::sync::Arc::new((key, digest));
        if plain_get {
            self.caches.keys.insert(req.url.clone(), keyed.clone());
        }
        Some(keyed)
    }

    /// The replayed snapshot's own answer: the exact-match cache, else the matcher's layers (unless the
    /// snapshot is hidden, or the union's sieve says it recorded nothing at this address).
    async fn find_own(&self, req: &Classified, keyed: Option<&Keyed>) -> Result<Option<Match>, StoreError> {
        // A URL that cannot be keyed cannot match.
        let Some(keyed) = keyed else { return Ok(None) };
        let (key, digest) = (&keyed.0, keyed.1);
        if let Some(m) = self.caches.exact.get(&digest) {
            return Ok(Some(m));
        }
        if self.cfg.hide_own {
            return Ok(None);
        }
        // The union's sieve covers this snapshot and says it recorded nothing at this address: none of its
        // layers (exact, scheme, normalised, fuzzy: all within host and path) could answer.
        if self.cfg.overlays.sieve.as_ref().is_some_and(|s| s.lacks(self.manifest.id, &req.url)) {
            return Ok(None);
        }
        let incoming = req.incoming();
        // Index lookups and candidate reads: store work, off the async workers.
        let found = self
            .offload
            .run(|| {
                matcher::find(
                    &self.store,
                    &self.manifest,
                    &self.cfg.rules,
                    &incoming,
                    key,
                    self.cfg.fuzzy_min_score,
                )
            })
            .await?;
        if let Some(m) = found.as_ref().filter(|m| m.layer == Layer::Exact) {
            self.caches.exact.insert(digest, m.clone());
        }
        Ok(found)
    }

    /// The first overlay answer at or above `floor` ([`crate::overlay::Overlays::find`]), exact answers
    /// kept (overlays keep no sequence state: the same key gets the same overlay's answer).
    async fn find_in_overlays(
        &self,
        req: &Classified,
        keyed: &Keyed,
        floor: Layer,
    ) -> Result<Option<OverlayMatch>, StoreError> {
        let (key, digest) = (&keyed.0, keyed.1);
        if let Some(om) = self.caches.overlay_exact.get(&digest) {
            return Ok(Some(om));
        }
        let incoming = req.incoming();
        let found = self
            .offload
            .run(|| {
                self.cfg.overlays.find(
                    &self.store,
                    &self.cfg.rules,
                    &incoming,
                    key,
                    self.cfg.fuzzy_min_score,
                    floor,
                )
            })
            .await?;
        if let Some(om) = found.as_ref().filter(|om| om.found.layer == Layer::Exact) {
            self.caches.overlay_exact.insert(digest, om.clone());
        }
        Ok(found)
    }
}
