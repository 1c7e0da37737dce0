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
//! The word lists are `guard::vocab`; a body's leaves are read in `guard::facts`; links that act when followed are judged in `guard::links`.

use super::vocab::{
    ACT_NOUNS, ACT_WORDS, COLLECTIONS, HARMLESS_WORDS, JOINED_NOUNS, LEADING_VERBS, MACHINERY_WORDS, MARKS,
    NO_PLURAL, OWN_CREDENTIALS, READ_WORDS, WRITE_WORDS,
};

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
        .flat_map(|w| unjoin(&w))
        .collect()
}

/// A word written without separators, split after a leading verb when what follows is a word the
/// vocabulary knows (`createbuyorder` -> create, buy, order); any other word as it is (`address` is not
/// add + ress, `listing` not list + ing).
fn unjoin(w: &str) -> Vec<String> {
    let known = |r: &str| {
        let s = singular(r);
        [s.as_ref(), r].iter().any(|x| {
            ACT_WORDS.iter().any(|(a, _)| a == x)
                || ACT_NOUNS.iter().any(|(a, _)| a == x)
                || COLLECTIONS.iter().any(|(a, _)| a == x)
                || READ_WORDS.contains(x)
                || HARMLESS_WORDS.contains(x)
                || JOINED_NOUNS.contains(x)
        })
    };
    for v in LEADING_VERBS {
        if let Some(rest) = w.strip_prefix(v).filter(|r| r.len() >= 3) {
            if known(rest) {
                return std::iter::once(v.to_string()).chain(unjoin(rest)).collect();
            }
            // One more joined word: `buyorder`.
            let parts = unjoin(rest);
            if parts.len() > 1 {
                return std::iter::once(v.to_string()).chain(parts).collect();
            }
        }
    }
    vec![w.to_string()]
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
pub(super) fn act_word(w: &str) -> Option<&'static str> {
    let find = |x: &str| ACT_WORDS.iter().find(|(a, _)| *a == x).map(|(_, r)| *r);
    find(w).or_else(|| {
        let s = singular(w);
        (s != w && !NO_PLURAL.contains(&s.as_ref())).then(|| find(&s)).flatten()
    })
}

/// [`classify`] for a request made with `method`: a PUT, PATCH or DELETE reads nothing, so a read word in
/// what it names (`DELETE /anime/1/my_list_status`: a list, a status) does not make it harmless; the
/// session's own words and its marks (`MARKS`) still do.
pub fn classify_for(method: &str, ident: &str) -> Says {
    let says = classify(ident);
    if says == Says::Harmless && matches!(method, "PUT" | "PATCH" | "DELETE") {
        let ws = words(ident);
        let own = ws.iter().any(|w| {
            let s = singular(w);
            [w.as_str(), s.as_ref()]
                .iter()
                .any(|x| HARMLESS_WORDS.contains(x) || MACHINERY_WORDS.contains(x) || MARKS.contains(x))
        });
        if !own {
            return Says::Nothing;
        }
    }
    says
}

/// Whether an identifier names the session's own state or machinery (a cart, a session, a draft, a
/// search, a beacon), not only a read (`config`, `status`, `details`).
pub(crate) fn names_own_state(ident: &str) -> bool {
    words(ident).iter().any(|w| {
        let s = singular(w);
        [w.as_str(), s.as_ref()].iter().any(|x| HARMLESS_WORDS.contains(x) || MACHINERY_WORDS.contains(x))
    })
}

/// What an identifier (an operation name, an RPC method, a path's last word) says it does.
pub fn classify(ident: &str) -> Says {
    match classify_words(ident) {
        Says::Nothing => namespaced_verb(ident),
        says => says,
    }
}

/// A namespaced RPC method (`mediatopic.post`, `wall.post`, `LJ.XMLRPC.postevent`) whose words say
/// nothing else: its last part is the verb, the parts before it only its namespace.
fn namespaced_verb(ident: &str) -> Says {
    let Some((_, last)) = ident.rsplit_once('.').filter(|(ns, l)| !ns.is_empty() && !l.is_empty()) else {
        return Says::Nothing;
    };
    let lw = words(last);
    let verb = lw.first().map(String::as_str).unwrap_or_default();
    if lw.len() <= 2
        && matches!(verb, "post" | "create" | "add" | "delete" | "remove" | "send" | "publish" | "edit")
    {
        return Says::Act(if matches!(verb, "delete" | "remove") { "delete" } else { "post" });
    }
    // A verb joined to its object (`postevent`), not a noun that starts like one (`postcode`).
    let joined = last.to_ascii_lowercase();
    let object = joined.strip_prefix("post").unwrap_or_default();
    if matches!(
        object,
        "event" | "message" | "status" | "comment" | "entry" | "item" | "photo" | "video" | "link" | "note"
    ) {
        return Says::Act("post");
    }
    Says::Nothing
}

/// [`classify`] by the identifier's words alone.
fn classify_words(ident: &str) -> Says {
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
    // A test or a preview of a send goes to the user themselves (`sendTest`, `sendpreview`).
    if has(&["send"]) && has(&["test", "preview"]) {
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

/// What a POST to `segment` (a path's last word) creates, when it is a collection of acts.
pub fn collection(segment: &str) -> Option<&'static str> {
    let ws = words(segment);
    let find =
        |w: &str| COLLECTIONS.iter().find(|(c, _)| *c == singular(w).as_ref() || *c == w).map(|(_, r)| *r);
    match ws.as_slice() {
        [w] => find(w),
        // `pullrequests`, `pull_requests`: one noun in two words; `product-offers`: offers of products.
        [a, b] => find(&format!("{a}{b}"))
            .or_else(|| find(b).filter(|_| singular(b) != b.as_str() && classify(a) == Says::Nothing)),
        _ => None,
    }
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
        // Two words: the last a collection unless the first says what the request is.
        assert_eq!(collection("product-signatures"), Some("post"));
        assert_eq!(collection("search.messages"), None);
        // Words written without separators, split only into words the vocabulary knows.
        assert_eq!(words("createbuyorder"), ["create", "buy", "order"]);
        assert_eq!(words("getrates"), ["get", "rates"]);
        assert_eq!(words("address"), ["address"]);
        assert_eq!(words("listing"), ["listing"]);
        assert_eq!(words("settings"), ["settings"]);
        // A PUT, PATCH or DELETE reads nothing: a read word does not make it harmless; a mark does.
        assert_eq!(classify("my_list_status"), Says::Harmless);
        assert_eq!(classify_for("POST", "my_list_status"), Says::Harmless);
        assert_eq!(classify_for("DELETE", "my_list_status"), Says::Nothing);
        assert_eq!(classify_for("PUT", "read_all"), Says::Harmless);
        assert_eq!(classify_for("PUT", "cart"), Says::Harmless);
        check("sendpreview", Says::Harmless);
        check("sendTest", Says::Harmless);
        check("send_typing_indicator", Says::Harmless);
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
}
