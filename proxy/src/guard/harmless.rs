//! What no act rule names and still changes nothing another user sees (issue 60, the eighth round): the
//! readings the judge tries last, before a POST to an API's collection is called a creation, a committing
//! label an act, or the strict guard refuses what is left (`writes` step 9). Written from the strict
//! guard's false refusals on the tuning material: under `--strict-write-guard` every write these do not
//! recognise is refused, so each reading here is a class of ordinary requests strict no longer refuses.
//!
//! - **telemetry**: an events batch (`{"events": [{"event_type": ...}]}`), an event with its time or
//!   its visitor (`{"event": "Purchase", "timestamp": ...}`), an error report, a beacon's endpoint
//!   (`/tr/`, `/e/`, `/collect`), or a host named for collection (`collect.`, `intake.`, `events.`, a host
//!   with `analytics`, `telemetry`, `ingest` or `insights` in it): analytics, error reports and session
//!   replays record what happened, they make nothing happen;
//! - **reads by their last word**: `/users/show`, `/single/check`, `/transactions/sync`,
//!   `/directions/v2:computeRoutes`, `/freeBusy`, `/order/test`, `/job/web/plan`, a travel API's
//!   `shopping`, an RPC envelope whose one request is a `get...` (`getTransactionDetailsRequest`), a
//!   JSON-RPC read (`eth_call`, `eth_getBalance`);
//! - **the session's own**: a checkout's or a cart's steps before the order (an address, a shipping
//!   option); the user's own settings (`/user/settings`, `/api/v1/settings` with a theme or a language,
//!   no address, under no shared resource); a body of the user's own view; a media player; a read mark,
//!   a typing indicator, a played mark; a log-out, an account recovery for oneself; a watch list; an
//!   autosaved draft; a captcha's own traffic.
//!
//! Each is read only after every act rule had its say: a telemetry host that names an order, or a
//! settings path with a published text, is judged by those rules first.

use super::acts::{singular, words};

/// Leading host labels of collection endpoints (`collect.example.com`, `intake-analytics.`).
const COLLECTION_HOSTS: &[&str] = &[
    "collect",
    "collector",
    "intake",
    "events",
    "beacon",
    "beacons",
    "rum",
    "telemetry",
    "track",
    "tracking",
    "sessions",
];

/// Words in a host that name collection (`api.analytics.example`, `r.lr-ingest.io`, `in.logs.`).
const COLLECTION_HOST_WORDS: &[&str] =
    &["analytics", "telemetry", "ingest", "insights", "metrics", "beacon", "logs."];

/// Last segments of a beacon's endpoint (Meta's `/tr/`, PostHog's `/e/`, `/collect`).
const COLLECTION_TAILS: &[&str] = &[
    "tr", "t", "e", "i", "hit", "collect", "beacon", "rgstr", "bundle", "tp2", "bf", "adrum", "science",
    "httpapi", "pixel", "px",
];

/// Keys that name an event in a telemetry body.
const EVENT_KEYS: &[&str] = &["event", "event_type", "eventname", "event_name", "eventtype", "en", "ev"];

/// Keys of an item of an events batch that name the event.
const BATCH_ITEM_KEYS: &[&str] =
    &["event", "event_type", "eventname", "event_name", "eventtype", "type", "name", "key", "e", "kind"];

/// Keys that carry an event's time.
const TIME_KEYS: &[&str] =
    &["timestamp", "time", "ts", "when", "event_time", "occurredon", "client_ts", "sent_at", "senttime"];

/// Keys that come with an event in an analytics body (who, where, what else).
const EVENT_COMPANIONS: &[&str] = &[
    "properties",
    "anonymousid",
    "anonymous_id",
    "userid",
    "user_id",
    "device_id",
    "session_id",
    "url",
    "page_title",
    "id",
    "dl",
];

/// Last words of an action that read or compute (singular, lower case).
const READ_TAILS: &[&str] = &[
    "show",
    "check",
    "sync",
    "calc",
    "compute",
    "route",
    "direction",
    "interpreter",
    "rerank",
    "moderation",
    "summary",
    "stat",
    "balance",
    "mytrade",
    "precheck",
    "test",
    "plan",
    "form",
    "busy",
    "freebusy",
    "player",
    "next",
    "morechildren",
    "shop",
    "prebook",
    "fee",
    "ping",
    "heartbeat",
    "evaluator",
    "template",
    "siteverify",
    "validatebatch",
    "price",
    "tax",
    "rate",
    "checkrate",
    "seatmap",
    "shipping",
    "option",
    "assist",
    "view",
    "verification",
    "download",
    "export",
];

/// Path words of a checkout or a cart, whose steps before the order are the session's own.
const CHECKOUT: &[&str] = &["checkout", "cart", "basket", "bag", "trolley"];

/// Path words of the user's own settings.
const SETTINGS: &[&str] = &["settings", "setting", "preferences", "prefs", "appearance"];

/// Path words that name the user themselves.
const SELF: &[&str] = &["user", "users", "me", "self", "my", "profile", "web"];

/// Path words of resources others share: settings under them are not the user's own.
const SHARED: &[&str] = &[
    "project",
    "repo",
    "repository",
    "org",
    "organization",
    "group",
    "team",
    "workspace",
    "site",
    "channel",
    "server",
    "guild",
    "space",
    "app",
    "application",
    "store",
    "shop",
    "instance",
    "admin",
    "system",
    "global",
    "security",
    "mfa",
    "twofactor",
];

/// Path words of the session's own state.
const OWN_STATE: &[&str] = &[
    "player",
    "marker",
    "ack",
    "played",
    "playeditem",
    "logout",
    "signout",
    "recovery",
    "watchlist",
    "wishlist",
];

/// Why a request no act rule named is harmless, if it is (see the module docs): its method, host, path
/// without the query, query parameters and body leaves (keys lower case), and its action words.
pub(crate) fn unnamed_harmless(
    method: &str,
    host: &str,
    path: &str,
    params: &[(String, String)],
    leaves: &[(String, String)],
    idents: &[String],
) -> Option<&'static str> {
    let host = host.to_ascii_lowercase();
    let path_words: Vec<String> =
        path.split('/').flat_map(words).map(|w| singular(&w).into_owned()).collect();
    let has_path = |set: &[&str]| path_words.iter().any(|w| set.contains(&w.as_str()));
    let leaf = |k: &str| k.rsplit('.').next().unwrap_or(k).to_string();
    let has_leaf = |set: &[&str]| leaves.iter().any(|(k, _)| set.contains(&leaf(k).as_str()));
    // Telemetry.
    let first_label = host.split('.').next().unwrap_or("");
    if COLLECTION_HOSTS.iter().any(|h| first_label == *h || first_label.starts_with(&format!("{h}-")))
        || COLLECTION_HOST_WORDS.iter().any(|w| host.contains(w))
    {
        return Some("a collection host");
    }
    let batch = leaves.iter().any(|(k, _)| {
        let parts: Vec<&str> = k.split('.').collect();
        parts.windows(2).enumerate().any(|(i, w)| {
            matches!(w[0], "events" | "evts" | "es")
                && w[1].parse::<usize>().is_ok()
                && parts[i + 2..].iter().any(|p| BATCH_ITEM_KEYS.contains(p))
        })
    });
    let event = leaves.iter().any(|(k, v)| EVENT_KEYS.contains(&k.as_str()) && !v.is_empty());
    let timed_event = has_leaf(EVENT_KEYS) && has_leaf(TIME_KEYS);
    // An error report (Rollbar's `level` with its `environment`, Bugsnag's `notifier`).
    let error_report = (has_leaf(&["level"]) && has_leaf(&["environment"]))
        || leaves
            .iter()
            .any(|(k, _)| k.split('.').any(|p| matches!(p, "backtrace" | "stacktrace" | "stack_trace")))
        || leaves.iter().any(|(k, _)| k.starts_with("notifier."));
    let tail_collects = path
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .is_some_and(|t| COLLECTION_TAILS.contains(&t.to_ascii_lowercase().as_str()));
    if batch || timed_event || (event && has_leaf(EVENT_COMPANIONS)) || error_report || tail_collects {
        return Some("telemetry");
    }
    if path_words.iter().any(|w| w.contains("collector") || w == "beacon") {
        return Some("a collection path");
    }
    // A typing indicator, a read mark (`removeLabelIds: UNREAD`, `flag=read`, `type: conversation:read`).
    if params.iter().chain(leaves).any(|(k, v)| {
        let v = v.to_ascii_lowercase();
        v.starts_with("typing")
            || v.ends_with(":read")
            || ((k.contains("flag") || k.contains("label") || k.contains("status"))
                && matches!(v.as_str(), "read" | "unread" | "seen"))
    }) {
        return Some("a read mark or a typing indicator");
    }
    // A captcha's own traffic.
    if host.contains("captcha")
        || path.contains("captcha")
        || path.contains("challenge-platform")
        || path.contains("siteverify")
    {
        return Some("a captcha");
    }
    // Reads by their last word, or by the one word a body's or query's action names; JSON-RPC reads.
    let tail = idents
        .iter()
        .find(|i| path.contains(i.as_str()))
        .and_then(|i| words(i).last().map(|w| singular(w).into_owned()));
    let named =
        idents.iter().find(|i| !path.contains(i.as_str())).map(|i| words(i)).filter(|ws| ws.len() == 1);
    if tail.as_deref().is_some_and(|t| READ_TAILS.contains(&t))
        || named.is_some_and(|ws| READ_TAILS.contains(&singular(&ws[0]).as_ref()))
        || has_path(&["shopping"])
    {
        return Some("a read by its last word");
    }
    if leaves.iter().any(|(k, v)| {
        k == "method"
            && v.starts_with("eth_")
            && !["send", "sign", "submit", "install", "uninstall"].iter().any(|w| v.contains(w))
    }) {
        return Some("a JSON-RPC read");
    }
    // An RPC envelope whose one request reads (`{"getTransactionDetailsRequest": {...}}`).
    let tops: std::collections::BTreeSet<&str> =
        leaves.iter().map(|(k, _)| k.split('.').next().unwrap_or(k)).collect();
    if tops.len() == 1
        && tops.iter().next().is_some_and(|t| {
            // Keys are lower case: the verb, then a request's name (`gettransactiondetailsrequest`), not a
            // noun that starts like one (`listing`).
            ["get", "list", "search", "find", "query", "describe"]
                .iter()
                .any(|v| t.starts_with(v) && t.len() >= v.len() + 6 && !t[v.len()..].starts_with("ing"))
        })
    {
        return Some("an RPC that reads");
    }
    // The session's own.
    if has_path(CHECKOUT) {
        return Some("a checkout's or a cart's step");
    }
    let addressy = leaves.iter().any(|(k, _)| {
        let l = leaf(k);
        l.contains("email") || l.contains("password") || l == "username" || l == "login"
    });
    if matches!(method, "PUT" | "PATCH" | "POST")
        && has_path(SETTINGS)
        && (has_path(SELF) || !has_path(SHARED))
        && !addressy
    {
        return Some("the user's own settings");
    }
    // A body of the user's own view (a theme, a read position, notification settings).
    if super::flags::own_view(leaves) {
        return Some("the user's own view");
    }
    let query_words: Vec<String> = params.iter().flat_map(|(_, v)| words(v)).collect();
    if has_path(OWN_STATE)
        || query_words.iter().any(|w| matches!(w.as_str(), "logout" | "signout" | "cart" | "basket"))
    {
        return Some("the session's own state");
    }
    let all_words = path_words.iter().cloned().chain(idents.iter().flat_map(|i| words(i)));
    if all_words.clone().any(|w| w == "autosave" || w.starts_with("draftsave") || w == "heartbeat")
        || params.iter().chain(leaves).any(|(k, v)| k == "call" && v == "draftsave")
    {
        return Some("an autosave");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn what_no_act_rule_names_and_is_harmless() {
        type Row =
            (&'static str, &'static str, &'static str, Vec<(String, String)>, &'static [&'static str], bool);
        let rows: Vec<Row> = vec![
            ("POST", "collect.shop.test", "/v1/e", vec![], &["e"], true),
            ("POST", "api.shop.test", "/v1/t", kv(&[("events.0.event_type", "purchase")]), &["t"], true),
            (
                "POST",
                "api.shop.test",
                "/api/event",
                kv(&[("event", "Purchase"), ("timestamp", "1")]),
                &["event"],
                true,
            ),
            ("POST", "www.social.test", "/tr/", kv(&[("id", "1"), ("ev", "Purchase")]), &["tr"], true),
            (
                "POST",
                "api.social.test",
                "/api/users/show",
                kv(&[("username", "a")]),
                &["show", "users"],
                true,
            ),
            ("POST", "rpc.chain.test", "/eth", kv(&[("method", "eth_call")]), &["eth_call", "eth"], true),
            ("POST", "rpc.chain.test", "/eth", kv(&[("method", "eth_sendRawTransaction")]), &["eth"], false),
            (
                "POST",
                "pay.test",
                "/xml/v1/request.api",
                kv(&[("gettransactiondetailsrequest.transid", "1")]),
                &["request.api"],
                true,
            ),
            (
                "POST",
                "mail.test",
                "/v1/users/me/messages/18c/modify",
                kv(&[("removelabelids.0", "UNREAD")]),
                &["modify", "messages"],
                true,
            ),
            (
                "PATCH",
                "shop.test",
                "/ecom/v1/checkouts/4a7b",
                kv(&[("checkout.shippinginfo.city", "NY")]),
                &["checkouts"],
                true,
            ),
            (
                "PATCH",
                "git.test",
                "/api/v1/user/settings",
                kv(&[("theme", "dark")]),
                &["settings", "user"],
                true,
            ),
            ("PATCH", "chat.test", "/api/v1/settings", kv(&[("color_scheme", "2")]), &["settings"], true),
            (
                "PATCH",
                "git.test",
                "/api/v1/user/settings",
                kv(&[("email", "x@y.z")]),
                &["settings", "user"],
                false,
            ),
            ("PUT", "api.music.test", "/v1/me/player/volume", vec![], &["volume", "player"], true),
            (
                "POST",
                "api.tickets.test",
                "/inventory/listings/v2",
                kv(&[("listing.eventid", "9")]),
                &["listings"],
                false,
            ),
            // What these readings leave to the act rules and to strict.
            (
                "POST",
                "api.calendar.test",
                "/v3/grants/g/events",
                kv(&[("title", "Standup"), ("when.start_time", "1")]),
                &["events"],
                false,
            ),
            ("POST", "api.cloud.test", "/v1/servers", kv(&[("name", "web-1")]), &["servers"], false),
            (
                "POST",
                "api.cloud.test",
                "/v1/projects/p/settings",
                kv(&[("visibility", "public")]),
                &["settings"],
                false,
            ),
        ];
        for (method, host, path, leaves, idents, want) in rows {
            let idents: Vec<String> = idents.iter().map(|s| s.to_string()).collect();
            let got = unnamed_harmless(method, host, path, &[], &leaves, &idents);
            assert_eq!(got.is_some(), want, "{method} {host}{path}: {got:?}");
        }
    }
}
