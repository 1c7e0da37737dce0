//! What a request *does*, read from the words it names its action with (issue 60): a GraphQL operation
//! (its type from the parsed document, its name and root fields: `guard::graphql`), a persisted operation's name, an RPC
//! method (`chat.postMessage`, `wsfunction=enrol_self_enrol_user`), the last word of a REST path, a
//! query's `action`; the verb a REST request uses; a GET that acts and carries a token; and a body's
//! fields at every depth (JSON objects and arrays, bracketed form names, multipart parts).
//!
//! Identifiers are split into words (`createOrderFromCart` -> create, order, from, cart) and judged by
//! [`classify`]: an act word (place, pay, book, subscribe, follow, vote, delete, ...) or a write verb on
//! an act noun (create + order, add + comment) is an act; a word of the session's own state (cart,
//! coupon, draft, token, log-in) or of a read (search, get, list, estimate, preview) is harmless; nothing
//! either way says nothing.
//!
//! Size: one room for the act vocabulary and the readers that find its words (RPC names, paths, bodies at
//! every depth; GraphQL's own room is `guard::graphql`); the word lists are most of its length, and
//! splitting them from their readers would put each rule's words and its reasoning in two files.

/// What an identifier says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Says {
    /// An act: the rule it breaks.
    Act(&'static str),
    /// Harmless: a read, or the session's own state.
    Harmless,
    /// Nothing either way.
    Nothing,
}

/// Words that are acts wherever they stand, with the rule each breaks.
const ACT_WORDS: &[(&str, &str)] = &[
    ("place", "purchase"),
    ("purchase", "purchase"),
    ("buy", "purchase"),
    ("submit", "post"),
    ("complete", "purchase"),
    ("bind", "purchase"),
    ("accept", "purchase"),
    ("pay", "payment"),
    ("charge", "payment"),
    ("capture", "payment"),
    ("authorize", "payment"),
    ("tokenize", "payment"),
    ("refund", "payment"),
    ("refunds", "payment"),
    ("payouts", "payment"),
    ("donate", "payment"),
    ("book", "booking"),
    ("reserve", "booking"),
    ("rsvp", "booking"),
    ("enroll", "booking"),
    ("enrol", "booking"),
    ("apply", "booking"),
    ("register", "account"),
    ("signup", "account"),
    ("publish", "post"),
    ("reply", "post"),
    ("comment", "post"),
    ("retweet", "post"),
    ("reblog", "post"),
    ("approve", "post"),
    ("merge", "post"),
    ("fork", "post"),
    ("report", "message"),
    ("send", "message"),
    ("contact", "message"),
    ("invite", "message"),
    ("compose", "message"),
    ("subscribe", "vote"),
    ("unsubscribe", "vote"),
    ("follow", "vote"),
    ("unfollow", "vote"),
    ("like", "vote"),
    ("unlike", "vote"),
    ("favorite", "vote"),
    ("favourite", "vote"),
    ("fave", "vote"),
    ("star", "vote"),
    ("unstar", "vote"),
    ("vote", "vote"),
    ("upvote", "vote"),
    ("downvote", "vote"),
    ("clap", "vote"),
    ("join", "vote"),
    ("thank", "vote"),
    ("watch", "vote"),
    ("reaction", "vote"),
    ("reactions", "vote"),
    ("invites", "message"),
    ("booking", "booking"),
    ("bookings", "booking"),
    ("reservation", "booking"),
    ("reservations", "booking"),
    ("edit", "post"),
    ("ship", "purchase"),
    ("delete", "delete"),
    ("del", "delete"),
    ("destroy", "delete"),
    ("remove", "delete"),
    ("cancel", "delete"),
    ("confirm", "booking"),
    ("verify", "account"),
    ("bookmark", "vote"),
    ("react", "vote"),
    ("transition", "post"),
    ("close", "post"),
    ("reopen", "post"),
    ("archive", "delete"),
    ("redact", "delete"),
    ("yank", "delete"),
    ("ban", "delete"),
    ("rollback", "post"),
    ("revert", "post"),
    ("assign", "post"),
    ("reject", "post"),
    ("forward", "message"),
    ("broadcast", "message"),
    ("pledge", "payment"),
    ("tip", "payment"),
    ("withdraw", "payment"),
    ("deposit", "payment"),
    ("sms", "message"),
    ("unsub", "vote"),
    ("flag", "message"),
    ("love", "vote"),
];

/// Act words that are also ordinary nouns in the plural (`places:searchText`, `books`, `reports`,
/// `ships`, `watches`): their plural is not read as the act.
const NO_PLURAL: &[&str] =
    &["place", "book", "report", "ship", "watch", "edit", "tip", "close", "ban", "flag", "love"];

/// Words that name the request as the browser's or the site's own machinery (a CSP or network-error
/// report, a beacon, telemetry): harmless before any act word they contain (`csp-report`).
const MACHINERY_WORDS: &[&str] =
    &["csp", "beacon", "telemetry", "analytics", "metrics", "rum", "nel", "envelope", "pixel"];

/// Credentials the user asks for themselves (a reset email, a one-time code, a log-in link): sending
/// one of these is not a message.
const OWN_CREDENTIALS: &[&str] = &[
    "password",
    "passwordless",
    "reset",
    "forgot",
    "recover",
    "recovery",
    "oob",
    "otp",
    "code",
    "magic",
    "verification",
    "mfa",
];

/// Verbs that write; an act when their object is an act noun.
const WRITE_WORDS: &[&str] =
    &["create", "add", "update", "set", "edit", "make", "save", "new", "insert", "upsert", "post", "put"];

/// Objects whose creation or change is an act.
const ACT_NOUNS: &[(&str, &str)] = &[
    ("order", "purchase"),
    ("payment", "payment"),
    ("booking", "booking"),
    ("reservation", "booking"),
    ("comment", "post"),
    ("review", "post"),
    ("post", "post"),
    ("tweet", "post"),
    ("status", "post"),
    ("issue", "post"),
    ("note", "post"),
    ("ticket", "post"),
    ("gist", "post"),
    ("discussion", "post"),
    ("topic", "post"),
    ("reaction", "vote"),
    ("message", "message"),
    ("dm", "message"),
    ("email", "message"),
    ("mail", "message"),
    ("application", "booking"),
    ("subscription", "vote"),
    ("donation", "payment"),
    ("account", "account"),
    ("customer", "account"),
    ("user", "account"),
    ("invitee", "booking"),
];

/// Words of the session's own state or of a read: harmless.
const HARMLESS_WORDS: &[&str] = &[
    "cart",
    "basket",
    "bag",
    "coupon",
    "promo",
    "discount",
    "draft",
    "drafts",
    "wishlist",
    "token",
    "login",
    "logout",
    "signin",
    "signout",
    "session",
    "reset",
    "recover",
    "preview",
    "translate",
    "estimate",
    "quote",
    "calculate",
    "track",
    "tracking",
    "log",
    "impression",
    "seen",
    "search",
    "autocomplete",
    "suggest",
    "suggestions",
    "availability",
    "stash",
    "stashedit",
    "parse",
    "compare",
    "render",
    "markdown",
    "validate",
    "lookup",
];

/// Words of a read.
const READ_WORDS: &[&str] = &[
    "query",
    "get",
    "fetch",
    "find",
    "list",
    "read",
    "view",
    "feed",
    "timeline",
    "history",
    "details",
    "rates",
    "poll",
    "by",
    "config",
    "configuration",
    "info",
    "results",
    "status",
    "elements",
];

/// Whether `w` (a lower-case word) is a verb that writes ([`WRITE_WORDS`]).
pub(crate) fn is_write_word(w: &str) -> bool {
    WRITE_WORDS.contains(&w)
}

/// Split an identifier into lower-case words: camelCase, snake_case, kebab-case, dotted, coloned.
pub fn words(ident: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for ch in ident.chars() {
        if !ch.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if ch.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = ch.is_ascii_lowercase() || ch.is_ascii_digit();
        cur.push(ch.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    // Digits are versions or counters (`new2`, `getFeedV1`): keep the letters.
    out.into_iter()
        .map(|w| w.trim_end_matches(|c: char| c.is_ascii_digit()).to_string())
        .filter(|w| !w.is_empty() && w != "v")
        .collect()
}

/// The singular of an English plural, as far as identifiers need it: `statuses` -> `status`, `boxes` ->
/// `box`, `replies` -> `reply`, `votes` -> `vote`; a word that is not a plural (`status`, `class`,
/// `analysis`, `news`) stays as it is.
pub(crate) fn singular(w: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    if let Some(stem) = w.strip_suffix("ies").filter(|s| s.len() > 1) {
        return Cow::Owned(format!("{stem}y"));
    }
    if let Some(stem) = w.strip_suffix("es") {
        if ["ss", "sh", "ch", "x", "z", "us"].iter().any(|e| stem.ends_with(e)) {
            return Cow::Borrowed(stem);
        }
    }
    match w.strip_suffix('s') {
        Some(stem) if stem.len() > 2 && !["s", "u", "i"].iter().any(|e| stem.ends_with(e)) => {
            Cow::Borrowed(stem)
        }
        _ => Cow::Borrowed(w),
    }
}

/// The act an identifier's word names, in the singular or (unless it is also a plain noun) the plural.
fn act_word(w: &str) -> Option<&'static str> {
    let find = |x: &str| ACT_WORDS.iter().find(|(a, _)| *a == x).map(|(_, r)| *r);
    find(w).or_else(|| {
        let s = singular(w);
        (s != w && !NO_PLURAL.contains(&s.as_ref())).then(|| find(&s)).flatten()
    })
}

/// What an identifier (an operation name, an RPC method, a path's last word) says it does.
pub fn classify(ident: &str) -> Says {
    let ws = words(ident);
    if ws.is_empty() {
        return Says::Nothing;
    }
    let has =
        |set: &[&str]| ws.iter().any(|w| set.contains(&w.as_str()) || set.contains(&singular(w).as_ref()));
    // The browser's and the site's machinery: a CSP report, a beacon.
    if has(MACHINERY_WORDS) {
        return Says::Harmless;
    }
    // Asking a reset email, a one-time code or a log-in link for oneself.
    if has(&["send", "request", "start", "resend", "forgot", "reset"])
        && has(OWN_CREDENTIALS)
        && !has(&["message", "invite", "invitation", "newsletter"])
    {
        return Says::Harmless;
    }
    let cartish = has(&["cart", "basket", "bag", "wishlist"]);
    let write = ws.iter().any(|w| WRITE_WORDS.contains(&w.as_str()));
    // Joined pairs: signUp, checkOut.
    let joined: Vec<String> = ws.windows(2).map(|p| format!("{}{}", p[0], p[1])).collect();
    // Marking one's own to-do, notification or message read or done.
    if has(&["mark"]) && has(&["read", "done", "seen", "unread"]) {
        return Says::Harmless;
    }
    // Creating an order is an act even from a cart (a draft order is the basket); adding an item to an
    // order, or setting its address, builds it (Vendure's `addItemToOrder`, `setOrderShippingAddress`).
    let builds = has(&["item", "line", "shipping", "billing", "address"]);
    if write && ws.iter().any(|w| singular(w) == "order") && !has(&["draft"]) {
        return if builds { Says::Harmless } else { Says::Act("purchase") };
    }
    // A checkout named first with no write verb last acts (checkoutOrders...); Saleor's and Shopify's
    // `checkoutCreate`, `checkoutLinesAdd` build the cart.
    let cart_steps =
        ["shipping", "billing", "address", "email", "delivery", "lines", "line", "promo", "query"];
    if ws[0] == "checkout"
        && ws.len() > 1
        && !WRITE_WORDS.contains(&ws[ws.len() - 1].as_str())
        && !has(&cart_steps)
    {
        return Says::Act("purchase");
    }
    if ws[0] == "checkout" && ws.len() > 1 && !has(&["complete", "submit", "pay", "place", "confirm"]) {
        return Says::Harmless;
    }
    if ws.len() == 1 && ws[0] == "checkout" {
        return Says::Act("purchase");
    }
    let act = ws.iter().chain(joined.iter()).find_map(|w| act_word(w));
    if let Some(rule) = act {
        // Removing from a cart, applying a coupon, closing a session: the session's own state.
        let soft = ws.iter().any(|w| {
            matches!(w.as_str(), "apply" | "remove" | "delete" | "del" | "cancel" | "close" | "archive")
        });
        let own = cartish
            || has(&["coupon", "promo", "discount", "draft", "token", "code", "notification", "session"]);
        if !(soft && own) {
            let account = has(&["account", "profile", "membership"]);
            return Says::Act(if rule == "delete" && account { "delete-account" } else { rule });
        }
    }
    if has(HARMLESS_WORDS) {
        return Says::Harmless;
    }
    if write {
        if let Some(rule) = ws
            .iter()
            .filter(|w| !WRITE_WORDS.contains(&w.as_str()))
            .find_map(|w| ACT_NOUNS.iter().find(|(n, _)| *n == singular(w).as_ref()).map(|(_, r)| *r))
        {
            return Says::Act(rule);
        }
    }
    // Read words as they stand (`GetStatus`), not as plurals (`statuses` are the objects themselves), and
    // not after a write verb that leads (`SaveMediaListEntry`, `updateStatus` write what they name).
    if !WRITE_WORDS.contains(&ws[0].as_str()) && ws.iter().any(|w| READ_WORDS.contains(&w.as_str())) {
        return Says::Harmless;
    }
    Says::Nothing
}

/// Collections a POST to creates an act: `POST /tweets`, `/gists`, `/invitees`, `/orders`.
const COLLECTIONS: &[(&str, &str)] = &[
    ("tweet", "post"),
    ("gist", "post"),
    ("project", "post"),
    ("pipeline", "post"),
    ("comment", "post"),
    ("status", "post"),
    ("post", "post"),
    ("feed", "post"),
    ("issue", "post"),
    ("note", "post"),
    ("ticket", "post"),
    ("review", "post"),
    ("message", "message"),
    ("privatemessage", "message"),
    ("directmessage", "message"),
    ("email", "message"),
    ("report", "message"),
    ("invitee", "booking"),
    ("enrollment", "booking"),
    ("application", "booking"),
    ("order", "purchase"),
    ("subscription", "vote"),
    ("following", "vote"),
    ("like", "vote"),
    ("donation", "payment"),
    ("registration", "account"),
    ("account", "account"),
    ("fork", "post"),
    ("reply", "post"),
    ("thread", "post"),
    ("topic", "post"),
    ("article", "post"),
    ("story", "post"),
    ("release", "post"),
    ("pull", "post"),
    ("pullrequest", "post"),
    ("repo", "post"),
    ("repository", "post"),
    ("task", "post"),
    ("card", "post"),
    ("submission", "post"),
    ("response", "post"),
    ("vote", "vote"),
    ("bookmark", "vote"),
    ("favourite", "vote"),
    ("favorite", "vote"),
    ("reblog", "post"),
    ("repost", "post"),
    ("member", "vote"),
    ("subscriber", "vote"),
    ("follower", "vote"),
    ("follow", "vote"),
    ("candidate", "booking"),
    ("applicant", "booking"),
    ("registrant", "booking"),
    ("attendee", "booking"),
    ("participant", "booking"),
    ("meeting", "booking"),
    ("invitation", "message"),
    ("transaction", "purchase"),
    ("transfer", "payment"),
    ("payment", "payment"),
    ("charge", "payment"),
    ("pledge", "payment"),
    ("user", "account"),
    ("customer", "account"),
];

/// What a POST to `segment` (a path's last word) creates, when it is a collection of acts.
pub fn collection(segment: &str) -> Option<&'static str> {
    let ws = words(segment);
    let w = match ws.as_slice() {
        [w] => w.clone(),
        // `pullrequests`, `pull_requests`: one noun in two words.
        [a, b] => format!("{a}{b}"),
        _ => return None,
    };
    COLLECTIONS.iter().find(|(c, _)| *c == singular(&w).as_ref() || *c == w.as_str()).map(|(_, r)| *r)
}

/// The kind of record a generic create names in its body (AT Protocol's `collection` or `$type`
/// `app.bsky.feed.like`, a `type` or `kind`): what creating one does, when it is a collection of acts.
pub fn created_kind(leaves: &[(String, String)]) -> Option<(&'static str, String)> {
    leaves.iter().find_map(|(k, v)| {
        let leaf = k.rsplit('.').next().unwrap_or(k);
        if !matches!(leaf, "collection" | "$type" | "type" | "kind") || k.contains('.') && leaf != "$type" {
            return None;
        }
        let last = v.rsplit(['.', '/', ':']).next().unwrap_or(v);
        collection(last).or_else(|| act_word(&last.to_ascii_lowercase())).map(|r| (r, v.clone()))
    })
}

/// A request's body as leaves: (path of keys joined by `.`, lower case; the value as text). JSON at every
/// depth, form names with brackets (`card[number]` -> `card.number`), multipart parts.
pub fn leaves(content_type: Option<&str>, body: &[u8]) -> (Vec<(String, String)>, Option<serde_json::Value>) {
    let ct = content_type.unwrap_or("").to_ascii_lowercase();
    let mut out = Vec::new();
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if ct.contains("json") || matches!(first, Some(b'{') | Some(b'[')) {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) {
            walk(&v, String::new(), &mut out, 0);
            return (out, Some(v));
        }
    }
    if ct.contains("multipart/form-data") {
        let text = String::from_utf8_lossy(body);
        for part in text.split("name=\"").skip(1) {
            let Some((name, rest)) = part.split_once('"') else { continue };
            let value = rest.split_once("\r\n\r\n").map(|(_, v)| v).unwrap_or("");
            let value = value.split("\r\n--").next().unwrap_or("");
            out.push((bracket_path(name), value.to_string()));
        }
        return (out, None);
    }
    if ct.contains("x-www-form-urlencoded") || ct.is_empty() {
        for (k, v) in form_urlencoded::parse(body) {
            if !k.is_empty() {
                out.push((bracket_path(&k), v.into_owned()));
            }
        }
    }
    (out, None)
}

fn bracket_path(name: &str) -> String {
    name.replace("][", ".").replace(['[', ']'], ".").trim_matches('.').to_ascii_lowercase()
}

fn walk(v: &serde_json::Value, path: String, out: &mut Vec<(String, String)>, depth: usize) {
    if depth > 32 {
        return;
    }
    let join = |k: &str| {
        if path.is_empty() {
            k.to_ascii_lowercase()
        } else {
            format!("{path}.{}", k.to_ascii_lowercase())
        }
    };
    match v {
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                walk(x, join(k), out, depth + 1);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                walk(x, path.clone(), out, depth + 1);
            }
        }
        serde_json::Value::String(s) => out.push((path, s.clone())),
        other => out.push((path, other.to_string())),
    }
}

/// A GET (or HEAD) that acts: an act word in its path's last words or its `action`, with a token or an
/// address in its query (a vote link with its `auth`, an unsubscribe or confirmation link, a JSONP
/// subscription).
pub fn judge_get(path_and_query: &str) -> Option<(&'static str, String)> {
    let (path, query) = path_and_query.split_once('?')?;
    let params: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.to_ascii_lowercase(), v.into_owned()))
        .collect();
    let tokenish = params.iter().any(|(k, v)| {
        let k = k.trim_start_matches('_');
        (matches!(k, "token" | "auth" | "csrf" | "hmac" | "sig" | "signature" | "nonce" | "fkey")
            || k.ends_with("token")
            || k.contains("email")
            || k == "e"
            || (k == "code" && v.len() >= 6))
            && !v.is_empty()
    });
    // An act named as a flag (`confirm=true`) is the action itself.
    let flagged =
        params.iter().find(|(k, v)| matches!(v.as_str(), "true" | "1" | "yes") && act_word(k).is_some());
    if !tokenish && flagged.is_none() {
        return None;
    }
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let tail = segs.iter().rev().take(2).copied().collect::<Vec<_>>();
    let action =
        params.iter().find(|(k, _)| matches!(k.as_str(), "action" | "do" | "how")).map(|(_, v)| v.as_str());
    for ident in tail.into_iter().chain(action).chain(flagged.map(|(k, _)| k.as_str())) {
        for w in words(ident) {
            // A confirmation link, a newsletter's opt-in: the confirmation itself.
            let w = match w.as_str() {
                "confirmation" | "confirmations" => "confirm",
                "optin" => "subscribe",
                w => w,
            };
            if let Some((_, rule)) = ACT_WORDS.iter().find(|(a, _)| *a == w) {
                // A confirmation of a purchase word on GET (`/complete`) is a page; only these act.
                if matches!(
                    w,
                    "vote"
                        | "upvote"
                        | "downvote"
                        | "unsubscribe"
                        | "unsub"
                        | "flag"
                        | "subscribe"
                        | "confirm"
                        | "verify"
                        | "delete"
                        | "remove"
                        | "fave"
                        | "favorite"
                        | "favourite"
                        | "like"
                        | "follow"
                        | "unfollow"
                        | "cancel"
                ) {
                    return Some((rule, format!("GET {ident} with a token")));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::graphql::{judge_graphql, parse_graphql};
    use super::*;

    #[test]
    fn identifiers() {
        let check = |ident: &str, want: Says| assert_eq!(classify(ident), want, "{ident}");
        check("createOrderFromCart", Says::Act("purchase"));
        check("addProductsToCart", Says::Harmless);
        check("checkoutLinesAdd", Says::Harmless);
        check("checkoutComplete", Says::Act("purchase"));
        check("FavoriteTweet", Says::Act("vote"));
        check("SearchTimeline", Says::Harmless);
        check("chat.postMessage", Says::Act("message"));
        check("enrol_self_enrol_user", Says::Act("booking"));
        check("users.info", Says::Harmless);
        check("ClientConfiguration", Says::Harmless);
        check("AddComment", Says::Act("post"));
        check("csp-report", Says::Harmless);
        check("accounts:sendOobCode", Says::Harmless);
        check("votes", Says::Act("vote"));
        check("places:searchText", Says::Harmless);
        assert_eq!(singular("statuses"), "status");
        assert_eq!(singular("status"), "status");
        assert_eq!(singular("replies"), "reply");
        assert_eq!(collection("statuses"), Some("post"));
        assert_eq!(collection("forks"), Some("post"));
    }

    #[test]
    fn graphql_documents() {
        let ops =
            parse_graphql("mutation { placeOrder(input: {cart_id: \"x\"}) { orderV2 { number } } }").unwrap();
        assert_eq!(ops[0].kind, "mutation");
        assert_eq!(ops[0].fields, vec!["placeOrder".to_string()]);
        assert_eq!(judge_graphql(&ops), Says::Act("purchase"));
        let ops = parse_graphql("{ products(search: \"bag\") { items { name } } }").unwrap();
        assert_eq!(judge_graphql(&ops), Says::Harmless);
    }

    #[test]
    fn get_links() {
        assert!(judge_get("/vote?id=1&how=up&auth=abc").is_some());
        assert!(judge_get("/reset-password?token=abc").is_none());
        assert!(judge_get("/search?q=how+to+unsubscribe").is_none());
    }
}
