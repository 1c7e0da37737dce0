//! The side-effect guard's learned judge (issue 60): a reading of what the rules leave unnamed.
//!
//! Fourteen rounds of rules measured on tables written apart showed the rules keeping up with the sites
//! they were written from and not with the next 500 (recall 0.83 to 0.88 on each new table). A model that
//! reads the request's words where they stand (`features`: the path's last words, the body's names and short
//! values, the GraphQL operation's name, the clicked control's words; never the host) and was trained on
//! every row of the spent tables errs on other rows than the rules do. On the held-out fifteenth table
//! the rules alone read 0.953 / 0.838 (precision / recall), with the learned judge 0.921 / 0.921; on the
//! fourteenth, before it, 0.931 / 0.842 and 0.917 / 0.917 (docs/BENCHMARKS.md).
//!
//! - **What it reads:** what the rules leave unnamed: a POST, PUT, PATCH or DELETE no rule names as an
//!   act or as harmless (what `--strict-write-guard` refuses as `unnamed`), or a GET no rule reads as an
//!   act whose query carries a token (a link that acts). Never what a rule decided (a refusal, or an
//!   explicit harmless reading such as a search form, the session's cart, telemetry), a page load, an
//!   asset, a HEAD or OPTIONS, a WebSocket message, or a host the run owns.
//! - **What it refuses:** a request it reads as harmful with probability [`THRESHOLD`] or more, as rule
//!   `learned`, naming the features that weighed most (`last:order, l:pay`).
//! - **What it is trained on:** every row of the guard's spent tables ([`super::heldout::tuning_rows`]),
//!   never the held-out table, once per process (about a second in a debug build), on a thread of its own
//!   as soon as a guard is made ([`warm`]); the same rows give the same weights (`model`).
//!   `--no-learned-guard` leaves the rules alone.

pub mod features;
pub mod measure;
pub mod model;

use std::collections::BTreeSet;
use std::sync::OnceLock;

pub use model::Model;

use super::heldout::Row;

/// A request read as harmful with this probability or more is refused. Chosen on the spent tables (each
/// judged by a model trained on the tables before it), never on the held-out one: 0.6 refused more ordinary
/// requests than it caught harmful ones, 0.8 gave back half of what the model adds.
pub const THRESHOLD: f64 = 0.7;

/// The rule id of a refusal by the learned judge.
pub const RULE: &str = "learned";

/// What the learned judge says of a request it refuses.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnedHit {
    /// The probability it gave.
    pub probability: f64,
    /// The features that weighed most towards harmful.
    pub features: Vec<String>,
}

impl super::WriteRules {
    /// These rules alone: what they let pass is not read again by the learned judge
    /// (`--no-learned-guard`).
    pub fn without_learned(mut self) -> Self {
        self.learned = false;
        self
    }

    /// Whether what these rules let pass is read again by the learned judge.
    pub fn is_learned(&self) -> bool {
        self.learned
    }
}

/// A row's request as the proxy would see it, with its verdict: None when its URL does not parse.
pub fn row_features(r: &Row) -> Option<(BTreeSet<String>, bool)> {
    let uri: http::Uri = r.url.parse().ok()?;
    let ct = Some(r.content_type.as_str()).filter(|t| !t.is_empty());
    let label = Some(r.label.as_str()).filter(|l| !l.is_empty());
    Some((features::features(&r.method, &uri, ct, Some(r.body.as_bytes()), label), r.harmful()))
}

/// A model trained on `rows`.
pub fn train(rows: &[Row]) -> Model {
    let data: Vec<_> = rows.iter().filter_map(row_features).collect();
    Model::train(&data)
}

/// The model trained on every spent table's rows, once per process.
pub fn builtin() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| train(&super::heldout::tuning_rows()))
}

/// Train the built-in model now, on a thread of its own, so that the first write a run judges does not
/// wait for it (a guard does this when it is made); a judgement that comes first waits for the same training.
pub fn warm() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let spawned = std::thread::Builder::new().name("webfreeze-guard-model".into()).spawn(|| {
            builtin();
        });
        // No thread: the first judgement trains it instead.
        drop(spawned);
    });
}

/// Whether the built-in model refuses a request, and why.
pub fn judge(
    method: &str,
    uri: &http::Uri,
    content_type: Option<&str>,
    body: Option<&[u8]>,
    label: Option<&str>,
) -> Option<LearnedHit> {
    if !features::eligible(method, uri) {
        return None;
    }
    let f = features::features(method, uri, content_type, body, label);
    let model = builtin();
    let probability = model.probability(&f);
    (probability >= THRESHOLD).then(|| LearnedHit {
        probability,
        features: model.strongest(&f, 3).into_iter().map(|(name, _)| name).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Requests of no table, each judged by the built-in model: what it must refuse and what it must let
    /// pass. Rows are kept plain so that a change of the tables that loses one of these shows here.
    #[test]
    fn the_builtin_model_reads_acts_and_leaves_reads_alone() {
        let cases: &[(&str, &str, &str, &str, &str, bool)] = &[
            (
                "POST",
                "https://shop.invalid/api/checkout/orders/submit",
                "application/json",
                r#"{"paymentMethod":{"type":"card","cardNumber":"4111111111111111","cvc":"123"},"cartId":"c1"}"#,
                "Place order",
                true,
            ),
            (
                "POST",
                "https://social.invalid/api/graphql",
                "application/json",
                r#"{"operationName":"CreateComment","variables":{"postId":"p1","text":"Great!"}}"#,
                "Post",
                true,
            ),
            ("GET", "https://shop.invalid/products?category=shoes&page=2", "", "", "", false),
            (
                "POST",
                "https://shop.invalid/api/search",
                "application/json",
                r#"{"query":"running shoes","filters":{"size":"42"},"sort":"price_asc","page":1}"#,
                "Search",
                false,
            ),
        ];
        for (method, url, ct, body, label, harmful) in cases {
            let uri: http::Uri = url.parse().unwrap();
            let ct = Some(*ct).filter(|c| !c.is_empty());
            let label = Some(*label).filter(|l| !l.is_empty());
            let got = judge(method, &uri, ct, Some(body.as_bytes()), label);
            let p =
                builtin().probability(&features::features(method, &uri, ct, Some(body.as_bytes()), label));
            if *harmful {
                assert!(got.is_some(), "{method} {url}: passed (p = {p:.2})");
            } else {
                assert!(got.is_none(), "{method} {url}: refused (p = {p:.2})");
            }
        }
        let (known, rows) = builtin().size();
        assert!(rows >= 5000 && known >= 5000, "trained on {rows} rows, {known} features");
    }
}
