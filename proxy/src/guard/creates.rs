//! The guard's general readings of a request (issue 60, the third round): what no word list names.
//!
//! - [`dry_run`]: a request that says it changes nothing (a `dry_run`, `validate_only` or `preview` flag,
//!   a `SIMULATION` mode, a path under an estimate, a simulation or a preview) is harmless before any
//!   act word it carries (`estimates/create_subscription_for_items`).
//! - [`own_signal`]: a body that is a read receipt or a typing indicator (`sender_action`, a `status` of
//!   `read` for a message id) tells the other side nothing it did not already see: harmless, even when
//!   posted to a messages endpoint.
//! - [`creates_resource`]: the fallback for what no word list names. A POST with a body, to an API,
//!   whose action is a collection (a plural noun: `POST /v1/pages`, `/v2/droplets`, `/helix/polls`) or a
//!   write verb on a noun (`repos/create`, `putRecord`, `message/push`) creates something on the site in
//!   the user's name: a page, a room, a board, a server, an incident. What is the session's own (a cart,
//!   a session, a token, an upload before its post), a read (searches, queries, quotes, estimates,
//!   validations) or machinery (events sent to analytics, logs, traces) is left out. It is a word list
//!   too (what is own, what is a read), but a short one of what is harmless, where the act lists grow with
//!   every platform.

use super::acts::{singular, words};

/// Keys whose true value makes a request a dry run; values that name one.
const DRY_RUN_KEYS: &[&str] = &[
    "dry_run",
    "dryrun",
    "validate_only",
    "validateonly",
    "simulate",
    "test_mode",
    "preview",
    "preview_only",
    "is_dry",
    "isdry",
];
/// Path words under which a request computes and changes nothing.
const DRY_RUN_PATH: &[&str] = &[
    "estimate",
    "estimates",
    "simulate",
    "simulation",
    "dryrun",
    "dry-run",
    "dry_run",
    "preview",
    "validate",
    "validation",
    "validations",
    "lint",
];

/// Whether a request says it is a dry run (see the module docs): its query `params` and body `leaves`
/// (key paths lower case), and its path.
pub(crate) fn dry_run(path: &str, params: &[(String, String)], leaves: &[(String, String)]) -> bool {
    let truthy = |v: &str| matches!(v.to_ascii_lowercase().as_str(), "true" | "1" | "yes" | "on" | "all");
    let flagged = params.iter().chain(leaves).any(|(k, v)| {
        let leaf = k.rsplit('.').next().unwrap_or(k).to_ascii_lowercase().replace('-', "_");
        let v = v.to_ascii_lowercase();
        (DRY_RUN_KEYS.contains(&leaf.as_str()) && truthy(&v))
            || v == "simulation"
            // An operation that only plans (Pulumi's `operation: preview`, a `mode` of `plan`).
            || (matches!(leaf.as_str(), "operation" | "mode" | "run_type")
                && matches!(v.as_str(), "preview" | "plan" | "dry_run" | "dryrun" | "simulate"))
    });
    // A custom method that computes (`/v4/orders:quote`, `/v1/shipments:estimate`): Google's API style,
    // the verb after the resource's colon.
    let custom = path
        .split('?')
        .next()
        .unwrap_or(path)
        .rsplit('/')
        .next()
        .and_then(|s| s.rsplit_once(':'))
        .is_some_and(|(_, verb)| {
            matches!(
                verb.to_ascii_lowercase().as_str(),
                "quote"
                    | "estimate"
                    | "calculate"
                    | "compute"
                    | "preview"
                    | "validate"
                    | "simulate"
                    | "check"
            )
        });
    // The last segment's words (`bid_preview`, `fee-estimate`, `margincalculator`), or a quote's segment
    // (`/quote/buy/now`, `/markets/{m}/quotations`; not a quote's own act, `/quotes/{id}/accept`).
    let bare = path.split('?').next().unwrap_or(path);
    let last_words = bare.rsplit('/').find(|s| !s.is_empty()).map(super::acts::words).unwrap_or_default();
    // A quote's own act (`/quote/confirmHold`, `/quotes/{id}/execute`) is none.
    let quote_act = last_words.first().is_some_and(|w| {
        matches!(w.as_str(), "confirm" | "execute" | "accept" | "book" | "purchase" | "pay")
    });
    let computes = last_words.iter().any(|w| {
        matches!(w.as_str(), "preview" | "estimate" | "simulate" | "simulation" | "simulations" | "dryrun")
            || w.contains("calculat")
    }) || (bare.split('/').any(|s| matches!(s, "quote" | "quotation" | "quotations"))
        && !quote_act);
    flagged
        || custom
        || computes
        || path
            .split(['/', '?'])
            .flat_map(|s| s.split(['.', ':']))
            .any(|s| DRY_RUN_PATH.contains(&s.to_ascii_lowercase().as_str()))
}

/// Whether a body is a read receipt or a typing indicator (see the module docs).
pub(crate) fn own_signal(leaves: &[(String, String)]) -> bool {
    let has = |k: &str| leaves.iter().any(|(n, _)| n == k);
    let value = |k: &str| leaves.iter().find(|(n, _)| n == k).map(|(_, v)| v.to_ascii_lowercase());
    // A `status` of read or unread for the ids it names (a feed reader's entries marked read).
    let marks = matches!(value("status").as_deref(), Some("read" | "unread"))
        && leaves
            .iter()
            .all(|(n, _)| n == "status" || n.ends_with("id") || n.contains("ids") || n.contains("_id"));
    has("sender_action")
        || marks
        || (value("status").as_deref() == Some("read") && (has("message_id") || has("messageid")))
        || value("typing").is_some_and(|v| v == "true" || v == "false")
}

/// What is the session's own: creating one, or writing to one, acts on nothing outside the session
/// (singular, lower case).
const OWN: &[&str] = &[
    "session",
    "token",
    "cart",
    "basket",
    "bag",
    "item",
    "line",
    "checkout",
    "draft",
    "wishlist",
    "address",
    "preference",
    "setting",
    "notification",
    "upload",
    "attachment",
    "image",
    "media",
    "file",
    "photo",
    "asset",
    "filter",
    "autocomplete",
    "to",
    "marker",
    "consignment",
];

/// Collections a POST to reads, computes or reports to machinery (singular, lower case).
const READS: &[&str] = &[
    "search",
    "query",
    "querie",
    "suggestion",
    "prediction",
    "completion",
    "embedding",
    "translation",
    "estimate",
    "quote",
    "quotation",
    "rate",
    "price",
    "validation",
    "verification",
    "lookup",
    "log",
    "metric",
    "trace",
    "span",
    "event",
    "report",
    "batch",
    "result",
    "impression",
    "view",
    "read",
    "availability",
    "offer",
    "calculation",
    "tax",
    "shipping",
    "label",
    "tag",
    "recommendation",
    "option",
    "detail",
    "feature",
    "flag",
    "experiment",
    "identify",
    "identity",
    "alias",
    "pageview",
    "collect",
    "track",
    "beacon",
    "status",
    "compute",
    "shipment",
    "seatmap",
    "hotel",
    "checkrate",
    "moderation",
    "route",
    "cancellation",
];

/// Verbs that write; last (`repos/create`) or within (`putRecord`) the action, they create what the
/// rest names.
const CREATE_VERBS: &[&str] =
    &["create", "new", "add", "write", "push", "put", "insert", "mutate", "respond", "save", "upsert"];

/// Whether a request looks like an API call (where a POST to a collection creates): a JSON body, or a
/// path with `/api/`, a version segment (`/v2/`, `/v19.0/`), XRPC, Matrix or `.json`, or a host named
/// `api`.
pub(crate) fn api_call(host: &str, path: &str, json: bool) -> bool {
    let host = host.to_ascii_lowercase();
    json || host.starts_with("api.") || host.starts_with("api-") || host.contains(".api.") || {
        path.split('/').any(|s| {
            let s = s.to_ascii_lowercase();
            matches!(s.as_str(), "api" | "rest" | "services" | "xrpc" | "_matrix")
                || s.ends_with(".json")
                || (s.len() >= 2
                    && s.starts_with('v')
                    && s[1..].chars().next().is_some_and(|c| c.is_ascii_digit())
                    && s[1..].chars().all(|c| c.is_ascii_digit() || c == '.'))
        })
    }
}

/// What a POST with a body to `path` on `host` creates in the user's name, if it does (see the module
/// docs): `idents` are the request's action words (`idents::action_idents`: the path's last words, or
/// its `action`), `json` whether its body is JSON.
pub(crate) fn creates_resource(
    host: &str,
    path: &str,
    idents: &[String],
    has_body: bool,
    json: bool,
) -> Option<String> {
    let machinery = ["analytics", "telemetry", "intake", "metrics", "collect", "logs"];
    if !has_body || !api_call(host, path, json) || machinery.iter().any(|m| host.contains(m)) {
        return None;
    }
    // The path's own words: an `action` in the body is read by the word lists, not here.
    let first = idents.first().filter(|i| path.contains(i.as_str()))?;
    let ws = words(first);
    let own = |w: &str| OWN.contains(&singular(w).as_ref()) || OWN.contains(&w);
    let read = |w: &str| READS.contains(&singular(w).as_ref()) || READS.contains(&w);
    let is_verb = |w: &String| CREATE_VERBS.contains(&w.as_str());
    if !ws.iter().any(is_verb) {
        // A collection: its last word a plural noun, none of its words the session's own or a read.
        let last = ws.last()?;
        let plural = singular(last) != last.as_str();
        return (plural && !ws.iter().any(|w| own(w) || read(w)))
            .then(|| format!("POST to the collection {first}"));
    }
    // A write verb: on the words beside it (`putRecord`, `addFollowers`), or alone on the segment before
    // (`repos/create`, `message/push`). None the session's own, one at least neither own nor a read.
    let rest: Vec<String> = match ws.as_slice() {
        [_] => idents.get(1).map(|p| words(p)).unwrap_or_default(),
        ws => ws.iter().filter(|w| !is_verb(w)).cloned().collect(),
    };
    (!rest.iter().any(|w| own(w)) && rest.iter().any(|w| !read(w))).then(|| format!("{first} creates"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The general readings, on requests of the tuning tables' kinds.
    #[test]
    fn what_a_request_creates_and_what_it_only_tries() {
        let ids = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        type Row = (&'static str, &'static str, Vec<String>, bool);
        let rows: Vec<Row> = vec![
            ("api.notion.com", "/v1/pages", ids(&["pages"]), true),
            ("api.digitalocean.com", "/v2/droplets", ids(&["droplets"]), true),
            ("huggingface.co", "/api/repos/create", ids(&["create", "repos", "repos/create"]), true),
            ("m.example.org", "/_matrix/client/v3/createRoom", ids(&["createRoom", "v3"]), true),
            ("api.example.com", "/v1/sessions", ids(&["sessions"]), false),
            ("api.example.com", "/v1/carts", ids(&["carts"]), false),
            ("api.example.com", "/v2/events", ids(&["events"]), false),
            ("api.example.com", "/v1/uploads", ids(&["uploads"]), false),
            ("www.example.com", "/pages", ids(&["pages"]), false),
            ("api.example.com", "/v1/search", ids(&["search"]), false),
            ("api.example.com", "/v1/status", ids(&["status"]), false),
        ];
        for (host, path, idents, want) in rows {
            assert_eq!(creates_resource(host, path, &idents, true, false).is_some(), want, "{host}{path}");
        }
        assert!(creates_resource("api.notion.com", "/v1/pages", &ids(&["pages"]), false, true).is_none());
        let cart = ids(&["add_to_cart", "v1", "v1/add_to_cart"]);
        assert!(creates_resource("api.example.com", "/v1/add_to_cart", &cart, true, true).is_none());
        let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert!(dry_run("/x", &[kv("dry_run", "true")], &[]));
        assert!(dry_run("/hotel-api/1.0/bookings/1", &[kv("cancellationflag", "SIMULATION")], &[]));
        assert!(dry_run("/api/v2/estimates/create_subscription_for_items", &[], &[]));
        assert!(!dry_run("/api/v2/subscriptions", &[kv("dry_run", "false")], &[]));
        // A custom method, the last segment's words, a quote's segment (not a quote's own act).
        for path in [
            "/v4/orders:quote",
            "/jp/show/bid_preview",
            "/api/donations/fee-estimate",
            "/v1/margincalculator",
            "/api/v2/quote/buy/now",
        ] {
            assert!(dry_run(path, &[], &[]), "{path}");
        }
        for path in ["/v4/orders:submit", "/quotes/q1/accept", "/api/previews/publish"] {
            assert!(!dry_run(path, &[], &[]), "{path}");
        }
        assert!(own_signal(&[kv("recipient.id", "1"), kv("sender_action", "typing_on")]));
        assert!(own_signal(&[kv("status", "read"), kv("message_id", "wamid.1")]));
        assert!(!own_signal(&[kv("text.body", "hello"), kv("to", "+15551234")]));
    }
}
