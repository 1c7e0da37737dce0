//! The proxy phases for replay: match the request (layer by layer), serve or miss (404, live, record),
//! and the proxy-direct endpoints (`/__webfreeze/reset`, `/__webfreeze/report`).

use super::*;
use crate::serving::{is_icon_request, miss_response, not_captured_response, read_body, synthetic_icon};
use crate::wire::Answered;
use proxy_report::wire::Answer;

impl Handler for Replay {
    type Ctx = ReplayCtx;

    fn new_ctx(&self, _info: &RequestInfo) -> ReplayCtx {
        ReplayCtx { rec: Recorder::ctx(), wire: crate::wire::WireNote::default() }
    }

    // The explicit `impl Future + Send` form keeps the trait's Send bound visible at the impl.
    #[allow(clippy::manual_async_fn)]
    fn request(
        &self,
        ctx: &ReplayCtx,
        req: Request<Body>,
    ) -> impl std::future::Future<Output = Decision> + Send {
        async move {
            let d = self.decide(ctx, req).await;
            if let Decision::Respond(r) = &d {
                self.wire_finish(ctx, r.status().as_u16(), r.headers());
            }
            d
        }
    }

    fn request_chunk(&self, ctx: &ReplayCtx, chunk: &Bytes) {
        if matches!(self.cfg.on_miss, OnMiss::Record(_)) {
            recorder::on_request_chunk(&ctx.rec, chunk);
        }
    }

    fn response_head(&self, ctx: &ReplayCtx, up: &UpstreamInfo, res: &mut http::response::Parts) {
        // A forwarded miss: the origin's status is the one the browser gets.
        self.wire_finish(ctx, res.status.as_u16(), &res.headers);
        if let OnMiss::Record(rec) = &self.cfg.on_miss {
            recorder::on_response_head(rec, &ctx.rec, up, res);
        }
    }

    fn response_chunk(&self, ctx: &ReplayCtx, chunk: &Bytes) {
        if matches!(self.cfg.on_miss, OnMiss::Record(_)) {
            recorder::on_response_chunk(&ctx.rec, chunk);
        }
    }

    fn complete(&self, ctx: &ReplayCtx, outcome: Result<(), ProxyError>) {
        // A forwarded miss that failed before its response head.
        self.wire_finish(ctx, 0, &http::HeaderMap::new());
        if let OnMiss::Record(rec) = &self.cfg.on_miss {
            recorder::on_complete(rec, &ctx.rec, outcome);
        }
    }

    fn observes_websocket(&self) -> bool {
        matches!(self.cfg.on_miss, OnMiss::Record(_))
    }

    fn finishes_abandoned(&self) -> bool {
        // A recorded miss is recorded whole, as in `record`.
        matches!(self.cfg.on_miss, OnMiss::Record(_))
    }

    fn websocket_message(&self, ctx: &ReplayCtx, msg: &proxy::websocket::WsMessage) {
        if let OnMiss::Record(rec) = &self.cfg.on_miss {
            recorder::on_websocket_message(rec, &ctx.rec, msg);
        }
    }

    #[allow(clippy::manual_async_fn)]
    fn direct(&self, req: Request<Body>) -> impl std::future::Future<Output = Response<Body>> + Send {
        let path = req.uri().path().to_string();
        let method = req.method().clone();
        async move {
            match (method.as_str(), path.as_str()) {
                ("POST", RESET_PATH) => {
                    let e = self.reset();
                    text_response(StatusCode::OK, &format!("episode {e}\n"))
                }
                ("GET", REPORT_PATH) => {
                    let json = serde_json::to_string_pretty(&self.report()).unwrap_or_else(|_| "{}".into());
                    let mut r = text_response(StatusCode::OK, &json);
                    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
                    r
                }
                _ => text_response(
                    StatusCode::NOT_FOUND,
                    &format!("webfreeze replay proxy: use it as an HTTP proxy; endpoints here are POST {RESET_PATH} and GET {REPORT_PATH} (not {method} {path})\n"),
                ),
            }
        }
    }
}

impl Replay {
    /// A document served from the snapshot that was recorded as a bot wall, denial or rate limit: the
    /// snapshot froze the wall, not the site; the report says so.
    pub(crate) fn note_wall(&self, x: &Exchange) {
        let headers: Vec<(String, String)> =
            x.response.headers.iter().map(|h| (h.name.to_ascii_lowercase(), h.value.clone())).collect();
        let html = x
            .response
            .body
            .as_ref()
            .and_then(|b| self.store.read_blob(&b.hash).ok()?.next_chunk().ok().flatten())
            .map(|c| String::from_utf8_lossy(&c[..c.len().min(64 * 1024)]).into_owned())
            .unwrap_or_default();
        let doc = wall::DocumentResponse {
            url: &x.request.url,
            status: x.response.status,
            headers: &headers,
            title: wall::html_title(&html),
            html: &html,
            text_len: wall::visible_text_len(&html),
        };
        if let Some(b) = wall::classify(&doc) {
            if let Ok(mut s) = self.state.lock() {
                if !s.walls.iter().any(|w| w.url == b.url) {
                    tracing::warn!(
                        "{}: the snapshot recorded a {:?} here ({}), not the site",
                        b.url,
                        b.kind,
                        b.marker
                    );
                    s.walls.push(b);
                }
            }
        }
    }
}

impl Replay {
    /// The request's key and its digest: derived (the URL parsed and normalised, then hashed), or for a
    /// GET without a body found again by its URL.
    fn key_of(&self, method: &str, url: &str, ct: Option<&str>, body: &[u8]) -> Option<crate::Keyed> {
        let plain_get = method == "GET" && ct.is_none() && body.is_empty();
        if plain_get {
            if let Some(k) = self.keys.lock().ok().and_then(|mut c| c.get(url).cloned()) {
                return Some(k);
            }
        }
        let key = snapshots::request_key(method, url, ct, body).ok()?;
        let digest = key.digest();
        let keyed = std::sync::Arc::new((key, digest));
        if plain_get {
            if let Ok(mut c) = self.keys.lock() {
                c.put(url.to_string(), keyed.clone());
            }
        }
        Some(keyed)
    }

    /// The request phase proper: match layer by layer, serve or miss; each answer noted for the wire log.
    async fn decide(&self, ctx: &ReplayCtx, req: Request<Body>) -> Decision {
        {
            let (parts, body) = req.into_parts();
            let url = parts.uri.to_string();
            let method = parts.method.as_str().to_string();
            let host = parts.uri.host().unwrap_or_default().to_string();
            let body = match read_body(body).await {
                Ok(b) => b,
                Err(e) => {
                    return Decision::Respond(text_response(
                        e.status(),
                        &format!("webfreeze replay: cannot read the request body for {url}: {e}\n"),
                    ))
                }
            };
            if HostFilter::is_background(&host) {
                if let Ok(mut s) = self.state.lock() {
                    s.background += 1;
                }
                return Decision::Respond(miss_response(&self.manifest.name, &method, &url));
            }
            self.wire_request(ctx, &parts, &body);
            let search = self.as_search(&method, &url);
            if let Some(sr) = search.as_ref().filter(|_| self.cfg.search.mode == search::SearchMode::Always) {
                self.wire_answer(ctx, Answered::bare(Answer::FrozenSearch));
                return self.answer_from_search(&url, sr);
            }
            let ct =
                parts.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_string);
            let incoming = Incoming {
                method: &method,
                url: &url,
                content_type: ct.as_deref(),
                body: &body,
                headers: &parts.headers,
            };
            // The key is derived once: it indexes the exact-match cache and the store.
            let keyed = self.key_of(&method, &url, ct.as_deref(), &body);
            let key = keyed.as_ref().map(|k| &k.0);
            let digest = keyed.as_ref().map(|k| k.1);
            let cached = digest.and_then(|d| self.exact.lock().ok().and_then(|mut c| c.get(&d).cloned()));
            let looked_up = match (cached, key) {
                (Some(m), _) => Ok(Some(m)),
                (None, None) => Ok(None), // a URL that cannot be keyed cannot match
                _ if self.cfg.hide_own => Ok(None),
                // The union's sieve covers this snapshot and says it recorded nothing at this address: none
                // of its layers (exact, scheme, normalised, fuzzy: all within host and path) could answer.
                _ if self.cfg.overlays.sieve.as_ref().is_some_and(|s| s.lacks(self.manifest.id, &url)) => {
                    Ok(None)
                }
                // Index lookups and candidate reads: store work, off the async workers.
                (None, Some(key)) => self
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
                    .await
                    .inspect(|found| {
                        if let (Some(d), Some(m)) = (digest, found) {
                            if m.layer == Layer::Exact {
                                if let Ok(mut c) = self.exact.lock() {
                                    c.put(d, m.clone());
                                }
                            }
                        }
                    }),
            };
            let found = match looked_up {
                Ok(f) => f,
                Err(e) => {
                    tracing::error!("replay lookup for {url}: {e}");
                    return Decision::Respond(text_response(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        &format!("webfreeze replay: store error for {url}: {e}\n"),
                    ));
                }
            };
            // A write the recording never made is the miss policy's: a fuzzy answer would hand it the state
            // of another write (`epochs`).
            // The body is read only for a write method (a GraphQL query or a preview is a read).
            let is_write = crate::epochs::is_state_write(&method, &url)
                && proxy_report::writes::is_write(
                    &method,
                    &url,
                    ct.as_deref().unwrap_or_default(),
                    &String::from_utf8_lossy(&body),
                );
            let found = found.filter(|m| !(is_write && m.layer == Layer::Fuzzy));
            let dest = parts.headers.get("sec-fetch-dest").and_then(|v| v.to_str().ok()).map(str::to_string);
            // What the snapshot lacks (no answer, or only a fuzzy one) the overlays may have: the order is
            // in the `overlay` module's docs.
            let lacks = found.as_ref().is_none_or(|m| m.layer > Layer::Normalised);
            if lacks && !self.cfg.overlays.is_empty() {
                if let Some(key) = key {
                    let floor = if found.is_some() { Layer::Normalised } else { Layer::Fuzzy };
                    let cached = digest.and_then(|d| self.overlay_exact.lock().ok()?.get(&d).cloned());
                    let o = match cached {
                        Some(om) => Ok(Some(om)),
                        None => self
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
                            .await
                            .inspect(|om| {
                                if let (Some(d), Some(om)) = (digest, om) {
                                    if om.found.layer == Layer::Exact {
                                        if let Ok(mut c) = self.overlay_exact.lock() {
                                            c.put(d, om.clone());
                                        }
                                    }
                                }
                            }),
                    };
                    match o {
                        Ok(Some(om)) => {
                            return self.answer_from_overlay(ctx, om, &parts.headers, &method, &url, dest)
                        }
                        Ok(None) => {}
                        Err(e) => tracing::warn!("replay overlays for {url}: {e}"),
                    }
                }
            }
            // An unrecorded search: the frozen search engine answers it, unless misses were asked to go live.
            if let (None, Some(sr), OnMiss::NotFound) = (&found, &search, &self.cfg.on_miss) {
                self.wire_answer(ctx, Answered::bare(Answer::FrozenSearch));
                return self.answer_from_search(&url, sr);
            }
            // A site's own search for a value no recording has (`--search site`): its results page, not the
            // fuzzy match's (which is the page of another query).
            let weak = found.as_ref().is_none_or(|m| m.layer == Layer::Fuzzy);
            if weak && search.is_none() && matches!(self.cfg.on_miss, OnMiss::NotFound) {
                if let Some(ss) = self.as_site_search(&method, &url) {
                    self.wire_answer(ctx, Answered::bare(Answer::SiteSearch));
                    return self.answer_from_site_search(&url, &ss);
                }
            }
            let Some(m) = found else {
                return match &self.cfg.on_miss {
                    OnMiss::NotFound if is_icon_request(&method, &url) => {
                        // Every page asks for a favicon; a capture rarely has it. Answer with a marked
                        // empty icon, counted apart from hits and misses.
                        if let Ok(mut s) = self.state.lock() {
                            s.synthetic += 1;
                            s.synthetic_urls.push(url.clone());
                        }
                        self.wire_answer(ctx, Answered::bare(Answer::Synthetic));
                        Decision::Respond(synthetic_icon())
                    }
                    // A sink (`dummy_bin`) is answered in every mode, recorded or not.
                    OnMiss::NotFound if proxy::sink::is_sink(&parts.uri) => {
                        if let Ok(mut s) = self.state.lock() {
                            s.synthetic += 1;
                            s.synthetic_urls.push(url.clone());
                        }
                        self.wire_answer(ctx, Answered::bare(Answer::Synthetic));
                        Decision::Respond(proxy::sink::answer())
                    }
                    OnMiss::NotFound => {
                        self.record_miss(&method, &url, dest.as_deref());
                        self.wire_answer(ctx, Answered::bare(Answer::Miss));
                        Decision::Respond(miss_response(&self.manifest.name, &method, &url))
                    }
                    OnMiss::Live | OnMiss::Record(_) => {
                        self.record_miss(&method, &url, dest.as_deref());
                        self.wire_answer(ctx, Answered::bare(Answer::Miss));
                        let req = Request::from_parts(parts, proxy::body::full(body));
                        if let OnMiss::Record(rec) = &self.cfg.on_miss {
                            rec.begin(&ctx.rec, &req);
                        }
                        Decision::Forward(req)
                    }
                };
            };
            // The cursor moves under the state lock; a held candidate is cloned, a lazy one read from the
            // store outside it.
            // A page recorded several times, or a write: the recording's writes decide (`epochs`).
            let safe = matches!(method.as_str(), "GET" | "HEAD");
            let writes: &[u64] = if safe || is_write {
                match self.writes.get() {
                    Some(w) => w,
                    None => self.offload.run(|| self.recorded_writes()).await,
                }
            } else {
                &[]
            };
            // Every recording of this page is from after writes the run has not made: its state now is
            // unknown if it carries state (decided once the candidate's content type is read).
            let mut later = None;
            let i = {
                let Ok(mut s) = self.state.lock().map_err(poisoned) else {
                    return Decision::Respond(text_response(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "replay state lost\n",
                    ));
                };
                if safe && crate::epochs::all_later(writes, &m.seqs, s.epoch) {
                    later = Some(s.epoch);
                    0
                } else if safe && m.len() > 1 && !writes.is_empty() {
                    let epoch = s.epoch;
                    let nth = s.epoch_cursors.entry((m.group, epoch)).or_insert(0);
                    let i = crate::epochs::pick(writes, &m.seqs, epoch, *nth);
                    *nth += 1;
                    i
                } else {
                    let cursor = s.cursors.entry(m.group).or_insert(0);
                    let mut i = (*cursor).min(m.len().saturating_sub(1));
                    // The body that was captured wins: a copy recorded without its body is skipped while a
                    // complete one remains (a capture tool that wrote no content for the first of two GETs).
                    let complete = m.complete_after(i);
                    if let Some(j) = complete {
                        i = j;
                        *cursor = j;
                    }
                    *cursor += 1;
                    if complete.is_some() {
                        s.preferred_with_body.push(url.clone());
                    }
                    i
                }
            };
            let got = if m.is_held(i) {
                m.get(&self.store, &self.manifest, i)
            } else {
                self.offload.run(|| m.get(&self.store, &self.manifest, i)).await
            };
            let x = match got {
                Ok(Some(x)) => x,
                Ok(None) | Err(_) => {
                    return Decision::Respond(text_response(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        &format!(
                            "webfreeze replay: exchange {i} of {url} could not be read from the store\n"
                        ),
                    ));
                }
            };
            if let Some(epoch) = later {
                if crate::epochs::shows_state(&x, dest.as_deref()) {
                    self.record_state_unknown(&method, &url, dest.as_deref());
                    self.wire_answer(ctx, Answered::bare(Answer::StateUnknown));
                    tracing::debug!("replay {method} {url}: state unknown at write epoch {epoch}");
                    return Decision::Respond(crate::serving::state_unknown_response(
                        &self.manifest.name,
                        &method,
                        &url,
                        epoch,
                    ));
                }
            }
            let chosen = {
                let Ok(mut s) = self.state.lock().map_err(poisoned) else {
                    return Decision::Respond(text_response(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "replay state lost\n",
                    ));
                };
                if x.flags.body_not_captured {
                    // Not a fidelity hit, whichever layer found it.
                    s.without_body += 1;
                    s.without_body_urls.push(url.clone());
                } else {
                    match m.layer {
                        Layer::Exact => s.exact += 1,
                        Layer::Normalised => s.normalised += 1,
                        Layer::Fuzzy => {
                            s.fuzzy += 1;
                            let episode = s.episode;
                            s.fuzzy_matches.push(FuzzyEntry {
                                episode,
                                url: url.clone(),
                                recorded_url: x.request.url.clone(),
                                score: m.score,
                            });
                        }
                    }
                }
                s.served.insert(x.seq);
                // The run made the recording's next write: its state is now the recording's after it. A
                // later one out of order (a write the recording made after others this run skipped, such as an
                // evaluator's token at the end) leaves the state where it is.
                if is_write && m.layer <= Layer::Normalised && writes.get(s.epoch) == Some(&x.seq) {
                    s.epoch += 1;
                }
                x
            };
            let answer = if chosen.flags.body_not_captured {
                Answer::WithoutBody
            } else {
                match m.layer {
                    Layer::Exact => Answer::Exact,
                    Layer::Normalised => Answer::Normalised,
                    Layer::Fuzzy => Answer::Fuzzy,
                }
            };
            self.wire_answer(ctx, Answered::from_exchange(answer, &self.manifest.name, &chosen));
            tracing::debug!("replay {} {method} {url} -> #{}", m.layer, chosen.seq);
            if dest.as_deref() == Some("document") {
                self.note_wall(&chosen);
            }
            if chosen.flags.body_not_captured && self.cfg.not_captured == NotCaptured::NotFound {
                return Decision::Respond(not_captured_response(&self.manifest.name, &method, &url));
            }
            let callback =
                match (self.cfg.rules.callback_of(&chosen.request.url), self.cfg.rules.callback_of(&url)) {
                    (Some(a), Some(b)) if a != b => Some((a, b)),
                    _ => None,
                };
            if let (Some(log), Some(key)) = (&chosen.websocket, parts.headers.get(header::SEC_WEBSOCKET_KEY))
            {
                if chosen.response.status == 101 {
                    return self.serve_websocket(&chosen, log, key.as_bytes(), &url).await;
                }
            }
            match self.serve_exchange(&parts.headers, &chosen, &self.manifest, callback) {
                Ok(r) => Decision::Respond(r),
                Err(e) => Decision::Respond(text_response(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    &format!("webfreeze replay: cannot serve {url}: {}\n", e.message),
                )),
            }
        }
    }
}
