//! Answer or miss, the last of [`Replay::decide`]'s three steps, for what the layers found in the replayed
//! snapshot (an overlay's answer is [`crate::overlay`]'s):
//! - nothing, or only a weak answer, for a search: the frozen search engine's page ([`crate::search`]);
//! - nothing: the miss policy ([`Replay::answer_miss`]): a synthetic icon or sink, 404, or forwarded;
//! - a match: one of its recorded exchanges chosen (sequence cursor, or write epoch: `epochs`), counted
//!   in the report, and served ([`Replay::answer_match`]).

use http::{header, Request, StatusCode};
use proxy::{text_response, Decision};
use proxy_report::wire::Answer;
use snapshots::Exchange;

use crate::classify::Classified;
use crate::matcher::{Layer, Match};
use crate::search::SearchMode;
use crate::serving::{
    is_icon_request, miss_response, not_captured_response, state_unknown_response, synthetic_icon,
};
use crate::wire::Answered;
use crate::{poisoned, FuzzyEntry, NotCaptured, OnMiss, Replay, ReplayCtx};

/// Which of a match's recorded exchanges answers, and whether the run's writes leave its state unknown.
struct Pick {
    /// The candidate's index in the match (recorded order).
    i: usize,
    /// Every recording of the page is from after writes the run has not made: the run's write epoch.
    later: Option<usize>,
}

impl Replay {
    /// The frozen search's answer to a request the snapshot does not answer well: an engine's search it
    /// has no recording of, or (`--search site`) a site's own search it has only a fuzzy answer to.
    pub(crate) fn answer_search(
        &self,
        ctx: &ReplayCtx,
        req: &Classified,
        found: Option<&Match>,
    ) -> Option<Decision> {
        let answers_misses = matches!(self.cfg.on_miss, OnMiss::NotFound);
        // An unrecorded search: the frozen search engine answers it, unless misses were asked to go live.
        if let (None, Some(sr), true) = (found, &req.search, answers_misses) {
            self.wire_answer(ctx, Answered::bare(Answer::FrozenSearch));
            return Some(self.answer_from_search(&req.url, sr));
        }
        // A site's own search for a value no recording has (`--search site`): its results page, not the
        // fuzzy match's (which is the page of another query).
        let weak = found.is_none_or(|m| m.layer == Layer::Fuzzy);
        if weak && req.search.is_none() && answers_misses {
            if let Some(ss) = self.as_site_search(&req.method, &req.url) {
                self.wire_answer(ctx, Answered::bare(Answer::SiteSearch));
                return Some(self.answer_from_site_search(&req.url, &ss));
            }
        }
        None
    }

    /// Whether `req` is a search every answer of which is the frozen search's (`SearchMode::Always`).
    pub(crate) fn always_searched<'r>(
        &self,
        req: &'r Classified,
    ) -> Option<&'r crate::search::SearchRequest> {
        req.search.as_ref().filter(|_| self.cfg.search.mode == SearchMode::Always)
    }

    /// A browser's background request: counted apart, answered 404, never forwarded.
    pub(crate) fn answer_background(&self, req: &Classified) -> Decision {
        if let Ok(mut s) = self.state.lock() {
            s.background += 1;
        }
        Decision::Respond(miss_response(&self.manifest.name, &req.method, &req.url))
    }

    /// Nothing answers `req`: the miss policy's answer.
    pub(crate) fn answer_miss(&self, ctx: &ReplayCtx, req: Classified) -> Decision {
        let synthetic = |s: &Self| {
            if let Ok(mut st) = s.state.lock() {
                st.synthetic += 1;
                st.synthetic_urls.push(req.url.clone());
            }
            s.wire_answer(ctx, Answered::bare(Answer::Synthetic));
        };
        match &self.cfg.on_miss {
            OnMiss::NotFound if is_icon_request(&req.method, &req.url) => {
                // Every page asks for a favicon; a capture rarely has it. Answer with a marked empty icon,
                // counted apart from hits and misses.
                synthetic(self);
                Decision::Respond(synthetic_icon())
            }
            // A sink (`dummy_bin`) is answered in every mode, recorded or not.
            OnMiss::NotFound if proxy::sink::is_sink(&req.parts.uri) => {
                synthetic(self);
                Decision::Respond(proxy::sink::answer())
            }
            OnMiss::NotFound => {
                self.record_miss(&req.method, &req.url, req.dest.as_deref());
                self.wire_answer(ctx, Answered::bare(Answer::Miss));
                Decision::Respond(miss_response(&self.manifest.name, &req.method, &req.url))
            }
            OnMiss::Live | OnMiss::Record(_) => {
                self.record_miss(&req.method, &req.url, req.dest.as_deref());
                self.wire_answer(ctx, Answered::bare(Answer::Miss));
                let forwarded = Request::from_parts(req.parts, proxy::body::full(req.body));
                if let OnMiss::Record(rec) = &self.cfg.on_miss {
                    rec.begin(&ctx.rec, &forwarded);
                }
                Decision::Forward(forwarded)
            }
        }
    }

    /// Answer `req` with one of `m`'s recorded exchanges: chosen, read, counted, served.
    pub(crate) async fn answer_match(&self, ctx: &ReplayCtx, req: Classified, m: Match) -> Decision {
        let (safe, url) = (req.is_safe(), req.url.as_str());
        // A page recorded several times, or a write: the recording's writes decide (`epochs`).
        let writes: &[u64] = if safe || req.is_write {
            match self.writes.get() {
                Some(w) => w,
                None => self.offload.run(|| self.recorded_writes()).await,
            }
        } else {
            &[]
        };
        let Some(Pick { i, later }) = self.pick(&req, &m, writes) else { return state_lost() };
        // A held candidate is lent; a lazy one is read from the store, off the async workers.
        let got = if m.is_held(i) {
            m.get(&self.store, &self.manifest, i)
        } else {
            self.offload.run(|| m.get(&self.store, &self.manifest, i)).await
        };
        let Ok(Some(x)) = got else {
            return Decision::Respond(text_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("webfreeze replay: exchange {i} of {url} could not be read from the store\n"),
            ));
        };
        // Every recording of this page is from after writes the run has not made: its state now is unknown
        // if it carries state.
        if let Some(epoch) = later.filter(|_| crate::epochs::shows_state(&x, req.dest.as_deref())) {
            self.record_state_unknown(&req.method, url, req.dest.as_deref());
            self.wire_answer(ctx, Answered::bare(Answer::StateUnknown));
            tracing::debug!("replay {} {url}: state unknown at write epoch {epoch}", req.method);
            return Decision::Respond(state_unknown_response(&self.manifest.name, &req.method, url, epoch));
        }
        if !self.count_served(&req, &m, &x, writes) {
            return state_lost();
        }
        self.serve_chosen(ctx, &req, &m, x.as_ref()).await
    }

    /// Which candidate of `m` answers (the cursor moves under the state lock); None when the state is lost.
    fn pick(&self, req: &Classified, m: &Match, writes: &[u64]) -> Option<Pick> {
        let safe = req.is_safe();
        let mut s = self.state.lock().map_err(poisoned).ok()?;
        if safe && crate::epochs::all_later(writes, &m.seqs, s.epoch) {
            return Some(Pick { i: 0, later: Some(s.epoch) });
        }
        if safe && m.len() > 1 && !writes.is_empty() {
            let epoch = s.epoch;
            let nth = s.epoch_cursors.entry((m.group, epoch)).or_insert(0);
            let i = crate::epochs::pick(writes, &m.seqs, epoch, *nth);
            *nth += 1;
            return Some(Pick { i, later: None });
        }
        let cursor = s.cursors.entry(m.group).or_insert(0);
        let mut i = (*cursor).min(m.len().saturating_sub(1));
        // The body that was captured wins: a copy recorded without its body is skipped while a complete
        // one remains (a capture tool that wrote no content for the first of two GETs).
        let complete = m.complete_after(i);
        if let Some(j) = complete {
            i = j;
            *cursor = j;
        }
        *cursor += 1;
        if complete.is_some() {
            s.preferred_with_body.push(req.url.clone());
        }
        Some(Pick { i, later: None })
    }

    /// Count `x`, served for `req` from `m`, in the report, and move the write epoch when it is the
    /// recording's next write; false when the state is lost.
    fn count_served(&self, req: &Classified, m: &Match, x: &Exchange, writes: &[u64]) -> bool {
        let Ok(mut s) = self.state.lock().map_err(poisoned) else { return false };
        if x.flags.body_not_captured {
            // Not a fidelity hit, whichever layer found it.
            s.without_body += 1;
            s.without_body_urls.push(req.url.clone());
        } else {
            match m.layer {
                Layer::Exact => s.exact += 1,
                Layer::Normalised => s.normalised += 1,
                Layer::Fuzzy => {
                    s.fuzzy += 1;
                    let episode = s.episode;
                    s.fuzzy_matches.push(FuzzyEntry {
                        episode,
                        url: req.url.clone(),
                        recorded_url: x.request.url.clone(),
                        score: m.score,
                    });
                }
            }
        }
        s.served.insert(x.seq);
        // The run made the recording's next write: its state is now the recording's after it. A later one
        // out of order (a write the recording made after others this run skipped, such as an evaluator's
        // token at the end) leaves the state where it is.
        if req.is_write && m.layer <= Layer::Normalised && writes.get(s.epoch) == Some(&x.seq) {
            s.epoch += 1;
        }
        true
    }

    /// Serve the chosen exchange `x`: noted on the wire, walls reported, a JSONP callback renamed, a
    /// WebSocket played back, else its recorded response.
    async fn serve_chosen(&self, ctx: &ReplayCtx, req: &Classified, m: &Match, x: &Exchange) -> Decision {
        let url = req.url.as_str();
        let answer = match m.layer {
            _ if x.flags.body_not_captured => Answer::WithoutBody,
            Layer::Exact => Answer::Exact,
            Layer::Normalised => Answer::Normalised,
            Layer::Fuzzy => Answer::Fuzzy,
        };
        self.wire_answer_with(ctx, || Answered::from_exchange(answer, &self.manifest.name, x));
        tracing::debug!("replay {} {} {url} -> #{}", m.layer, req.method, x.seq);
        if req.dest.as_deref() == Some("document") {
            self.note_wall(x);
        }
        if x.flags.body_not_captured && self.cfg.not_captured == NotCaptured::NotFound {
            return Decision::Respond(not_captured_response(&self.manifest.name, &req.method, url));
        }
        let callback = match (self.cfg.rules.callback_of(&x.request.url), self.cfg.rules.callback_of(url)) {
            (Some(a), Some(b)) if a != b => Some((a, b)),
            _ => None,
        };
        let client_key = req.parts.headers.get(header::SEC_WEBSOCKET_KEY);
        if let (Some(log), Some(key), 101) = (&x.websocket, client_key, x.response.status) {
            return self.serve_websocket(x, log, key.as_bytes(), url).await;
        }
        match self.serve_exchange(&req.parts.headers, x, &self.manifest, callback) {
            Ok(r) => Decision::Respond(r),
            Err(e) => Decision::Respond(text_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!("webfreeze replay: cannot serve {url}: {}\n", e.message),
            )),
        }
    }
}

/// The answer when the replay's state lock was poisoned.
fn state_lost() -> Decision {
    Decision::Respond(text_response(StatusCode::INTERNAL_SERVER_ERROR, "replay state lost\n"))
}
