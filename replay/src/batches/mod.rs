//! Scripts that batch their modules (issue 61): a MediaWiki ResourceLoader batch the recording never
//! asked for, assembled from the recorded batches that hold its modules.
//!
//! MediaWiki keeps modules in `localStorage` and writes them there a few seconds after a page loads, then
//! in idle time. Whether the next page asks for a module again depends on whether that write happened
//! before the navigation: under load, a replayed page asks for another combination of modules than the
//! recording did (`load.php?modules=...`), a miss that breaks the page's scripts. Flushing idle callbacks
//! before a navigation would not cover it (the write waits for a timer first), so replay does not try to
//! reproduce the race: it answers the batch from what was recorded.
//!
//! When a GET misses every layer under the 404 policy and its URL is a ResourceLoader script batch (a path
//! ending `load.php` with `modules=`, and no `only=`, `raw=` or `image=`), [`Replay::answer_batch`] reads the
//! recorded responses of every layer the replay reads (the replayed snapshot's, unless it is held out, then
//! the overlays' in their order, the earlier preferred) at the same scheme, host and path whose other
//! parameters (`lang`, `skin`, `debug`, `user` ... everything but `modules` and `version`) are the
//! request's, cuts each into its modules ([`chunks`], by the scanner in `scan`), and answers the requested
//! modules' implementations concatenated in the requested order ([`assemble`]). Only when every requested module is found; otherwise
//! the miss stays a miss. The answer is marked (`x-webfreeze-layer: assembled-batch`, the wire log's
//! `assembled-batch` answer, the report's `assembled_batches` with the recorded exchanges it came from:
//! `from` in the replayed snapshot, `from_layers` in the others).
//!
//! **Module names** are packed as ResourceLoader packs them (`makePackedModulesString` in PHP,
//! `buildModulesString` in `mediawiki.loader.js`): groups separated by `|`; in a group with commas, the
//! prefix up to the last `.` is written once (`jquery,site|mediawiki.String,Title` is jquery, site,
//! mediawiki.String, mediawiki.Title). [`expand_modules`] is `ResourceLoader::expandModuleNames`.
//!
//! **Versions.** Each implementation carries `name@version`; the request's `version` parameter is the
//! client's `getCombinedVersion`: FNV-1 (32 bit) of the versions its registry (the startup module, replayed
//! from the same snapshot) holds for the modules in the packed order, in base 36, five digits
//! ([`fnv132`]). A batch is assembled only when the chosen implementations' versions give that hash: the
//! page then gets exactly the module versions its registry expects, as the origin would have served them.
//! When several recorded batches hold a module in different versions (the site changed while it was
//! recorded), the combinations are tried, the latest recording first, up to [`MAX_COMBINATIONS`]; a
//! request without `version` (hand-written URLs, debug mode) takes the latest recording of each module.
//! Implementations of another version are never served: `mw.loader` would accept them, but the page's
//! other modules were built against the versions its registry names.
//!
//! **Not assembled:** `only=styles` (concatenated CSS, no per-module boundaries) and `only=scripts` (raw
//! scripts, one after another, no boundaries either); modules a recording answered only with a state
//! (`missing`, `error`).
//! The recorded batches are read again on each such miss (they are rare: a few per run), not cached.

mod scan;

use http::{header, HeaderValue, StatusCode};
use proxy::Decision;
use proxy_report::replay::AssembledEntry;
use proxy_report::wire::{Answer, RecordedRef};

use crate::classify::Classified;
use crate::wire::Answered;
use crate::{OnMiss, Replay, ReplayCtx};

/// The most combinations of recorded versions tried for one batch.
pub const MAX_COMBINATIONS: usize = 256;

/// The replay layer's name in the `x-webfreeze-layer` header.
pub const LAYER: &str = "assembled-batch";

/// A ResourceLoader script batch as asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchRequest {
    /// The modules, expanded, in the packed order.
    pub modules: Vec<String>,
    /// The combined version the client computed, when it sent one.
    pub version: Option<String>,
    /// Every other query parameter, sorted: a recorded batch is read only when its own are the same.
    pub context: Vec<(String, String)>,
}

/// The ResourceLoader script batch `url` asks for; None for any other URL, and for styles-only,
/// scripts-only, raw and image requests (see the module docs).
pub fn batch_request(url: &str) -> Option<BatchRequest> {
    let u = url::Url::parse(url).ok()?;
    if !u.path().ends_with("load.php") {
        return None;
    }
    let (mut modules, mut version, mut context) = (None, None, Vec::new());
    for (k, v) in u.query_pairs() {
        match k.as_ref() {
            "modules" => modules = Some(v.into_owned()),
            "version" => version = Some(v.into_owned()),
            "only" | "raw" | "image" => return None,
            _ => context.push((k.into_owned(), v.into_owned())),
        }
    }
    context.sort();
    let modules = expand_modules(&modules?);
    if modules.iter().any(String::is_empty) {
        return None;
    }
    Some(BatchRequest { modules, version, context })
}

/// The module names of a packed `modules=` value, in order (`ResourceLoader::expandModuleNames`).
pub fn expand_modules(packed: &str) -> Vec<String> {
    let mut out = Vec::new();
    for group in packed.split('|') {
        if !group.contains(',') {
            out.push(group.to_string());
            continue;
        }
        match group.rfind('.') {
            None => out.extend(group.split(',').map(str::to_string)),
            Some(dot) => {
                let prefix = &group[..dot];
                out.extend(group[dot + 1..].split(',').map(|s| format!("{prefix}.{s}")));
            }
        }
    }
    out
}

/// ResourceLoader's short hash (`fnv132` in `mediawiki.loader.js`, `ResourceLoader::makeHash` in PHP):
/// FNV-1, 32 bit, over the UTF-16 code units, in base 36, cut or left-padded with `0` to five digits.
pub fn fnv132(s: &str) -> String {
    let mut h: u32 = 0x811C_9DC5;
    for unit in s.encode_utf16() {
        h = h.wrapping_mul(16_777_619) ^ u32::from(unit);
    }
    let mut digits = Vec::new();
    loop {
        digits.push(char::from_digit(h % 36, 36).unwrap_or('0'));
        h /= 36;
        if h == 0 {
            break;
        }
    }
    let s: String = digits.iter().rev().take(5).collect();
    format!("{s:0>5}")
}

/// One module's implementation cut from a recorded batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The module.
    pub name: String,
    /// Its version (empty when the key carried none).
    pub version: String,
    /// The statement that implements it, `;` included.
    pub text: String,
}

/// The module implementations of a batch response, in order; None when it is not a batch the scanner
/// understands whole (see `scan`).
pub fn chunks(js: &str) -> Option<Vec<Chunk>> {
    let calls = scan::top_level_calls(js)?;
    let mut out = Vec::new();
    for c in calls.into_iter().filter(|c| c.callee != scan::Callee::State) {
        let key = c.key?;
        // `splitModuleKey`: the last `@` splits, unless there is none or it comes first.
        let (name, version) = match key.rfind('@') {
            Some(at) if at > 0 => (key[..at].to_string(), key[at + 1..].to_string()),
            _ => (key, String::new()),
        };
        out.push(Chunk { name, version, text: format!("{};", &js[c.span]) });
    }
    Some(out)
}

/// A recorded batch response: its exchange's sequence number and body.
#[derive(Debug, Clone, Copy)]
pub struct Recorded<'a> {
    /// The exchange's sequence number in its snapshot.
    pub seq: u64,
    /// The response body.
    pub body: &'a str,
}

/// A batch assembled from recorded ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assembled {
    /// The response body: the modules' implementations in the requested order.
    pub body: String,
    /// The recorded exchanges it was cut from, each once, in the order first used.
    pub from: Vec<u64>,
}

/// Why a batch was not assembled (the miss then stays a miss).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotAssembled {
    /// No recorded batch with the same parameters holds this module.
    #[error("no recorded batch holds module {0:?}")]
    Missing(String),
    /// The recorded versions of the modules never give the client's combined version.
    #[error("no recorded versions of the modules combine to version {0:?}")]
    Version(String),
    /// The snapshot could not be read.
    #[error("reading the recorded batches: {0}")]
    Store(String),
}

/// Assemble `asked` from `recorded` (in recorded order): see the module docs for the rules.
pub fn assemble(asked: &BatchRequest, recorded: &[Recorded<'_>]) -> Result<Assembled, NotAssembled> {
    // Each recorded batch cut once; the latest recording first.
    let cut: Vec<(u64, Vec<Chunk>)> =
        recorded.iter().rev().filter_map(|r| Some((r.seq, chunks(r.body)?))).collect();
    // Per requested module, its recorded implementations, one per version, the latest first.
    let mut options: Vec<Vec<(u64, &Chunk)>> = Vec::with_capacity(asked.modules.len());
    for m in &asked.modules {
        let mut found: Vec<(u64, &Chunk)> = Vec::new();
        for (seq, cs) in &cut {
            for c in cs.iter().filter(|c| &c.name == m) {
                if !found.iter().any(|(_, f)| f.version == c.version) {
                    found.push((*seq, c));
                }
            }
        }
        if found.is_empty() {
            return Err(NotAssembled::Missing(m.clone()));
        }
        options.push(found);
    }
    // The combinations, as an odometer over the options (the first: every module's latest recording).
    let mut pick = vec![0usize; options.len()];
    for _ in 0..MAX_COMBINATIONS {
        let chosen: Vec<(u64, &Chunk)> = pick.iter().zip(&options).map(|(&i, o)| o[i]).collect();
        let fits = asked
            .version
            .as_deref()
            .is_none_or(|v| v == fnv132(&chosen.iter().map(|(_, c)| c.version.as_str()).collect::<String>()));
        if fits {
            let mut from: Vec<u64> = Vec::new();
            for (seq, _) in &chosen {
                if !from.contains(seq) {
                    from.push(*seq);
                }
            }
            let body = chosen.iter().map(|(_, c)| c.text.as_str()).collect::<Vec<_>>().join("\n");
            return Ok(Assembled { body, from });
        }
        // The next combination; done when every wheel has turned over.
        let mut wheel = 0;
        loop {
            let Some(p) = pick.get_mut(wheel) else {
                return Err(NotAssembled::Version(asked.version.clone().unwrap_or_default()));
            };
            *p += 1;
            if *p < options[wheel].len() {
                break;
            }
            *p = 0;
            wheel += 1;
        }
    }
    Err(NotAssembled::Version(asked.version.clone().unwrap_or_default()))
}

impl Replay {
    /// A ResourceLoader batch nothing recorded answers, assembled from the recorded batches that hold its
    /// modules (404 policy only; see the module docs); None leaves the miss a miss.
    pub(crate) async fn answer_batch(&self, ctx: &ReplayCtx, req: &Classified) -> Option<Decision> {
        if !matches!(self.cfg.on_miss, OnMiss::NotFound) || req.method != "GET" {
            return None;
        }
        let asked = batch_request(&req.url)?;
        let got = self.offload.run(|| self.assemble_recorded(&req.url, &asked)).await;
        let (a, got_refs) = match got {
            Ok(a) => a,
            Err(e) => {
                tracing::info!("replay: batch {} not assembled: {e}", req.url);
                return None;
            }
        };
        // Which recorded exchange each cut batch was: the replayed snapshot's by sequence number, another
        // layer's by name and sequence number.
        let refs: Vec<&RecordedRef> = a.from.iter().filter_map(|&i| recorded_at(&got_refs, i)).collect();
        let own = self.manifest.name.as_str();
        if let Ok(mut s) = self.state.lock() {
            let episode = s.episode;
            s.assembled.push(AssembledEntry {
                episode,
                url: req.url.clone(),
                modules: asked.modules.len() as u64,
                from: refs.iter().filter(|r| r.snapshot == own).map(|r| r.seq).collect(),
                from_layers: refs.iter().filter(|r| r.snapshot != own).map(|r| (*r).clone()).collect(),
            });
        }
        self.wire_answer(
            ctx,
            Answered {
                answer: Answer::AssembledBatch,
                overlay: None,
                recorded: refs.first().map(|r| (*r).clone()),
                body_hash: None,
            },
        );
        tracing::debug!(
            "replay assembled-batch {}: {} module(s) from {:?}",
            req.url,
            asked.modules.len(),
            a.from
        );
        let mut r = http::Response::new(proxy::body::full(bytes::Bytes::from(a.body)));
        *r.status_mut() = StatusCode::OK;
        let h = r.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/javascript; charset=utf-8"));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        h.insert(
            http::HeaderName::from_static(crate::overlay::LAYER_HEADER),
            HeaderValue::from_static(LAYER),
        );
        Some(Decision::Respond(r))
    }

    /// The batch `asked` (at `url`) assembled from the recorded batches at the same address and parameters
    /// in every layer the replay reads: the replayed snapshot's (unless it is held out), then the overlays'
    /// in their order, the earlier layer's preferred (store work: call it off the async workers). The
    /// assembled batch's `from` indexes the returned list of recorded exchanges.
    fn assemble_recorded(
        &self,
        url: &str,
        asked: &BatchRequest,
    ) -> Result<(Assembled, Vec<RecordedRef>), NotAssembled> {
        let store_err = |e: snapshots::StoreError| NotAssembled::Store(e.to_string());
        let own = (!self.cfg.hide_own).then_some(&self.manifest);
        let layers: Vec<&snapshots::Manifest> =
            own.into_iter().chain(self.cfg.overlays.layers.iter().map(|o| &o.manifest)).collect();
        // `assemble` prefers the last of its list: the least preferred layer first, each in recorded order.
        let mut bodies: Vec<(RecordedRef, String)> = Vec::new();
        for m in layers.into_iter().rev() {
            for x in self.store.scan_host_path(m, url).map_err(store_err)? {
                let usable = x.request.method == "GET"
                    && x.response.status == 200
                    && !x.flags.body_not_captured
                    && !x.flags.truncated
                    && !x.flags.decode_failed
                    && batch_request(&x.request.url).is_some_and(|b| b.context == asked.context);
                let Some(body) = x.response.body.as_ref().filter(|_| usable) else { continue };
                let bytes = self.store.blob_bytes(&body.hash).map_err(store_err)?;
                if let Ok(text) = String::from_utf8(bytes) {
                    bodies.push((RecordedRef { snapshot: m.name.clone(), seq: x.seq }, text));
                }
            }
        }
        let recorded: Vec<Recorded<'_>> =
            bodies.iter().enumerate().map(|(i, (_, body))| Recorded { seq: i as u64, body }).collect();
        let a = assemble(asked, &recorded)?;
        Ok((a, bodies.into_iter().map(|(r, _)| r).collect()))
    }
}

/// The recorded exchange at index `i` of an assembly's list.
fn recorded_at(refs: &[RecordedRef], i: u64) -> Option<&RecordedRef> {
    refs.get(usize::try_from(i).ok()?)
}

#[cfg(test)]
mod tests;
