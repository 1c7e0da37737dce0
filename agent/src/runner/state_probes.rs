//! State probes: while a task is recorded, the pages and REST reads its end-of-task checks will read are
//! fetched before the agent's first action and again after each of its writes, so the recording knows the
//! checked state for every prefix of its writes (replay serves each page by the run's write epoch,
//! `replay::epochs`; a run that stops after fewer writes, or writes none, is then scored at its own
//! epoch instead of being shown the state after writes it never made).
//!
//! A probe changes nothing the agent sees: pages load in a background tab of the task's browser (the
//! task's own session: its cookies), each request marked [`PROBE_HEADER`] so the recorder flags the
//! exchange as a probe and the origin never sees the mark; the shop's REST reads go through the task's
//! proxy as the checks' own do. Probes are not steps: the trajectory keeps only how many ran and what
//! they cost ([`trajectory::Trajectory::state_probes`]).
//!
//! What is probed: `program_html` check URLs (plain, or a `func:` URL helper), `page_image_query` URLs,
//! and the shop REST helpers named in a check's URL or locator (a URL one's page too). `last` (the page
//! the agent ends on) cannot be known ahead and is not probed. WebArena-Verified's network checks read
//! the run's own requests, not the site's state, but a GET check asks for a status: the page a check
//! names (a literal URL with literal query parameters, [`verified_pages`]) is probed, so a replayed
//! agent that reaches it is answered at its epoch even where the recording agent never went (without
//! it, that run is counted apart: `session::frozen_verdict`).

use std::time::Instant;

use trajectory::task_env::TaskEnv;
use trajectory::task_eval::NetworkEventSpec;
use trajectory::{TaskEvalSpec, VerifiedEvaluator, WebArenaEval};

use crate::browser::Session;
use crate::tasks::helpers::{helper, Helper};
use crate::tasks::shop_api::{ShopApi, ShopApiCall};

/// The request header a probe's requests carry (the recorder's `recorder::PROBE_HEADER`; the two
/// names are checked equal in `session`'s tests: the agent does not depend on the recorder).
pub const PROBE_HEADER: &str = "x-webfreeze-probe";

/// What one task probes, and how far it has.
pub(super) struct StateProbes {
    /// Check URLs (or `func:` URL helpers), in the spec's order, deduplicated.
    urls: Vec<String>,
    /// Shop REST reads the checks make.
    shop_calls: Vec<ShopApiCall>,
    /// The task's shop REST client, when its checks call one.
    shop: Option<ShopApi>,
    /// The recorder's write count when the probes last ran (None: not yet).
    probed_at: Option<u64>,
    /// Rounds run, pages loaded, and their time.
    pub(super) stats: trajectory::ProbeStats,
}

impl StateProbes {
    /// The probes of a recorded task whose checks read the site's state (WebArena's format) or name a
    /// page by its request (WebArena-Verified's GET network checks); None when there is nothing to probe
    /// or the task is not recorded.
    pub(super) fn of(spec: Option<&TaskEvalSpec>, env: &TaskEnv, shop: Option<ShopApi>) -> Option<Self> {
        let spec = spec.filter(|_| env.mode == trajectory::RunMode::Record)?;
        let urls: Vec<String> = match spec {
            TaskEvalSpec::Verified(v) => verified_pages(v.0.iter().filter_map(|e| match e {
                VerifiedEvaluator::NetworkEvent(n) => Some(&**n),
                _ => None,
            })),
            _ => Vec::new(),
        };
        let eval = spec.webarena();
        if eval.is_none() && urls.is_empty() {
            return None;
        }
        Self::of_webarena(eval, urls, shop)
    }

    /// [`Self::of`] for WebArena's checks, after the pages already found (`urls`).
    fn of_webarena(
        eval: Option<&WebArenaEval>,
        mut urls: Vec<String>,
        shop: Option<ShopApi>,
    ) -> Option<Self> {
        let mut shop_calls: Vec<ShopApiCall> = Vec::new();
        // A REST helper named by a URL or a locator (None: not one).
        let shop_call = |s: &str| match helper(s.trim(), "") {
            Helper::ShopApi(c) if s.trim().starts_with("func:") => Some(c),
            _ => None,
        };
        let mut add_url = |u: &str, calls: &mut Vec<ShopApiCall>| {
            let u = u.trim();
            if u.is_empty() || u == "last" {
                return;
            }
            match shop_call(u) {
                Some(c) if !calls.contains(&c) => calls.push(c),
                Some(_) => {}
                None if !urls.iter().any(|x| x == u) => urls.push(u.to_string()),
                None => {}
            }
        };
        for c in eval.iter().flat_map(|e| &e.program_html) {
            add_url(&c.url, &mut shop_calls);
            if let Some(call) = shop_call(&c.locator).filter(|call| !shop_calls.contains(call)) {
                shop_calls.push(call);
            }
        }
        for q in eval.iter().flat_map(|e| &e.page_image_query) {
            add_url(&q.eval_image_url, &mut shop_calls);
        }
        if urls.is_empty() && shop_calls.is_empty() {
            return None;
        }
        Some(StateProbes { urls, shop_calls, shop, probed_at: None, stats: Default::default() })
    }

    /// Before a step: probe when nothing was probed yet (before the agent's first action) or the recorder
    /// stored writes since the last round. Returns a note for the step when a probe failed.
    pub(super) async fn before_step(&mut self, session: &Session, env: &TaskEnv) -> Vec<String> {
        let writes = env.probe.as_ref().map(|p| p.counters().writes).unwrap_or(0);
        if self.probed_at == Some(writes) {
            return Vec::new();
        }
        let t0 = Instant::now();
        let mut notes = Vec::new();
        let last = session.url().await.unwrap_or_default();
        let mut pages: Vec<String> = Vec::new();
        for u in &self.urls {
            match helper_or_url(u, &last) {
                Some(p) => pages.push(p),
                None => notes.push(format!("state probe: {u} is not a URL known before the task ends")),
            }
        }
        for c in &self.shop_calls {
            let Some(api) = &self.shop else {
                notes.push(
                    "state probe: the checks call the shop's REST API, and the task has no shop".into(),
                );
                break;
            };
            match api.call(c).await {
                Ok(v) if c.gives_url() && !v.is_empty() => pages.push(v),
                Ok(_) => {}
                Err(e) => notes.push(format!("state probe: shop REST read: {e}")),
            }
            self.stats.rest_reads += 1;
        }
        for p in pages {
            match session.visit_in_background(&p, PROBE_HEADER, "state").await {
                Ok(_) => self.stats.pages += 1,
                Err(e) => notes.push(format!("state probe: {p}: {e}")),
            }
        }
        // The probe's own reads may have been counted (a page that writes as it loads): the next round
        // starts from here, so probes never chase their own writes.
        self.probed_at = Some(env.probe.as_ref().map(|p| p.counters().writes).unwrap_or(writes));
        self.stats.rounds += 1;
        self.stats.ms += t0.elapsed().as_millis() as u64;
        notes
    }
}

/// The pages WebArena-Verified's GET network checks name, as URLs to load: each literal expected URL with
/// its literal query parameters (the first value of each). A check that must not exist names no page to
/// read, and a regular expression (`^...$`, in the URL or a value) names none that can be loaded.
fn verified_pages<'a>(checks: impl Iterator<Item = &'a NetworkEventSpec>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in checks.filter(|n| !n.should_not_exist && n.expected.method().eq_ignore_ascii_case("GET")) {
        let params: Option<Vec<(String, String)>> = match &n.expected.query_params {
            None => Some(Vec::new()),
            Some(serde_json::Value::Object(m)) => m
                .iter()
                .map(|(k, v)| {
                    let v = match v {
                        serde_json::Value::Array(a) => a.first()?.clone(),
                        v => v.clone(),
                    };
                    let v = match v {
                        serde_json::Value::String(s) => s,
                        serde_json::Value::Number(n) => n.to_string(),
                        serde_json::Value::Bool(b) => b.to_string(),
                        _ => return None,
                    };
                    (!v.starts_with('^')).then(|| (k.clone(), v))
                })
                .collect(),
            Some(_) => None,
        };
        let Some(params) = params else { continue };
        for u in n.expected.urls().iter().filter(|u| !u.starts_with('^')) {
            let Ok(mut url) = url::Url::parse(u) else { continue };
            if !params.is_empty() {
                url.query_pairs_mut().extend_pairs(params.iter());
            }
            let url = url.to_string();
            if !out.contains(&url) {
                out.push(url);
            }
        }
    }
    out
}

/// A check URL as a page to load: itself, or what a `func:` URL helper computes; None for a helper that
/// needs the end of the task (a page helper) or is not run here.
fn helper_or_url(u: &str, last: &str) -> Option<String> {
    if !u.starts_with("func:") {
        return Some(u.to_string());
    }
    match helper(u, last) {
        Helper::Url(x) => Some(x),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_task_probes() {
        let eval: WebArenaEval = serde_json::from_value(serde_json::json!({
            "eval_types": ["program_html", "page_image_query"],
            "program_html": [
                {"url": "https://shop.test/cart", "locator": "", "required_contents": {"must_include": ["Jar"]}},
                {"url": "last", "locator": "", "required_contents": {"must_include": ["x"]}},
                {"url": "https://shop.test/cart", "locator": "document.title", "required_contents": {"must_include": ["x"]}},
                {"url": "func:shopping_get_latest_order_url()", "locator": "", "required_contents": {"must_include": ["x"]}},
                {"url": "last", "locator": "func:shopping_get_sku_latest_review_author('B0DEMO0002')", "required_contents": {"exact_match": "Kim"}}
            ],
            "page_image_query": [{"eval_image_url": "https://shop.test/product/red-mug", "eval_image_class": ".photo"}]
        }))
        .unwrap();
        let eval = TaskEvalSpec::WebArena(Box::new(eval));
        let env = |mode| TaskEnv {
            proxy: "127.0.0.1:1".parse().unwrap(),
            ca_spki: String::new(),
            ca_pem: String::new(),
            init_scripts: Vec::new(),
            time_zone: None,
            locale: None,
            mode,
            snapshot: None,
            started_ms: 0,
            probe: None,
        };
        let p = StateProbes::of(Some(&eval), &env(trajectory::RunMode::Record), None).unwrap();
        assert_eq!(p.urls, ["https://shop.test/cart", "https://shop.test/product/red-mug"]);
        assert_eq!(p.shop_calls.len(), 2, "{:?}", p.shop_calls);
        assert!(
            StateProbes::of(Some(&eval), &env(trajectory::RunMode::Replay), None).is_none(),
            "only recordings"
        );
        let none: WebArenaEval =
            serde_json::from_value(serde_json::json!({"eval_types": ["string_match"]})).unwrap();
        let none = TaskEvalSpec::WebArena(Box::new(none));
        assert!(StateProbes::of(Some(&none), &env(trajectory::RunMode::Record), None).is_none());
        // WebArena-Verified: the pages its GET network checks name, when they can be loaded.
        let verified = trajectory::VerifiedEval::from_value(serde_json::json!([
            {"evaluator": "AgentResponseEvaluator", "expected": {"task_type": "navigate", "status": "SUCCESS"}},
            {"evaluator": "NetworkEventEvaluator", "expected": {"url": "https://shop.test/orders", "query_params": {"status": ["pending"], "page": 2}}},
            {"evaluator": "NetworkEventEvaluator", "expected": {"url": "https://shop.test/cart"}},
            {"evaluator": "NetworkEventEvaluator", "expected": {"url": "https://shop.test/cart"}},
            {"evaluator": "NetworkEventEvaluator", "expected": {"url": "^https://shop.test/p/\\d+$"}},
            {"evaluator": "NetworkEventEvaluator", "expected": {"url": "https://shop.test/q", "query_params": {"q": ["^jar.*$"]}}},
            {"evaluator": "NetworkEventEvaluator", "expected": {"url": "https://shop.test/cart/add", "http_method": "POST"}},
            {"evaluator": "NetworkEventEvaluator", "should_not_exist": true, "expected": {"url": "https://shop.test/admin"}}
        ]))
        .unwrap();
        let verified = TaskEvalSpec::Verified(verified);
        let p = StateProbes::of(Some(&verified), &env(trajectory::RunMode::Record), None).unwrap();
        assert_eq!(p.urls, ["https://shop.test/orders?page=2&status=pending", "https://shop.test/cart"]);
        assert!(p.shop_calls.is_empty());
        let answer_only = trajectory::VerifiedEval::from_value(serde_json::json!([
            {"evaluator": "AgentResponseEvaluator", "expected": {"task_type": "retrieve", "status": "SUCCESS", "retrieved_data": ["3"]}}
        ]))
        .unwrap();
        let answer_only = TaskEvalSpec::Verified(answer_only);
        assert!(StateProbes::of(Some(&answer_only), &env(trajectory::RunMode::Record), None).is_none());
        assert_eq!(helper_or_url("https://a.test/x", ""), Some("https://a.test/x".into()));
    }
}
