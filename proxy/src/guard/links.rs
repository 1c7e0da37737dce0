//! Links that act when followed (issue 60): a GET (or HEAD) naming an act and carrying a token, an
//! address or the message itself: a vote link with its `auth`, an unsubscribe or confirmation link from an
//! email, a JSONP subscription, a publish-by-URL API; a write or a command with an API's credential; a
//! link carrying a form's CSRF token (Moodle's `sesskey`); a link clicked on a label that names an act,
//! with its token. Every other GET reads.

use super::acts::{act_word, words};
use super::facts::WriteFacts;
use super::table::RULES;
use super::vocab::ACT_WORDS;
use super::writes::WriteHit;

/// Words of a GET that act when the link carries a token (a confirmation of a purchase word on GET,
/// `/complete`, is a page; only these act).
const GET_ACTS: &[&str] = &[
    "vote",
    "upvote",
    "downvote",
    "unsubscribe",
    "unsub",
    "optout",
    "flag",
    "subscribe",
    "confirm",
    "verify",
    "delete",
    "remove",
    "fave",
    "favorite",
    "favourite",
    "like",
    "follow",
    "unfollow",
    "cancel",
    "join",
    "publish",
    "send",
    "respond",
    "notify",
    "watch",
    "rollback",
    "revert",
    // The tenth round (the eighth table's failures): an invitation's answer, an approval by mail, an RSVP,
    // a routine triggered.
    "accept",
    "decline",
    "approve",
    "reject",
    "rsvp",
    "trigger",
    "annuler",
    "cancelar",
    "stornieren",
    // The twelfth round (the tenth table's failures): an ad renewed by mail, a job alert cancelled
    // (Danish).
    "renew",
    "afmeld",
    // The thirteenth round: a transfer or a payment by link, a job applied for, an alert deleted
    // (Finnish), a subscription or a purchase confirmed (Norwegian, Polish), a rating given.
    "transfer",
    "apply",
    "poista",
    "bekreft",
    "potwierdz",
    "rate",
    // The fourteenth round: an unsubscribe (German), an acceptance and a confirmation (Portuguese,
    // Spanish), a rating (German).
    "abmelden",
    "aceitar",
    "confirmar",
    "bewerten",
];

/// Leading verbs of a signed query API's `Action` (AWS's, Tencent's, Alibaba's: `Action=TerminateInstances`)
/// that change what the account runs; `Describe`, `List` and `Get` read.
const QUERY_API_WRITES: &[&str] = &[
    "terminate",
    "delete",
    "create",
    "run",
    "stop",
    "start",
    "reboot",
    "modify",
    "update",
    "put",
    "attach",
    "detach",
    "release",
    "allocate",
    "associate",
    "disassociate",
    "authorize",
    "revoke",
    "purchase",
    "send",
    "publish",
];

/// Query keys of a form's CSRF token.
const CSRF_KEYS: &[&str] = &[
    "sesskey",
    "authenticity_token",
    "_wpnonce",
    "csrf_token",
    "csrfmiddlewaretoken",
    "_csrf",
    "csrf",
    "_token",
    "formkey",
];

/// Write verbs a GET acts with when it carries a credential of an API (`Command=domains.create`,
/// `/dns/add-record.json?auth-password=...`, `/update?api_key=...`).
const GET_WRITES: &[&str] = &[
    "create", "add", "update", "set", "delete", "remove", "send", "register", "trigger", "complete", "build",
];

/// Path words of a page that manages what a link would do (an unsubscribe's preference centre), and of a
/// payment's check (`/transaction/verify/{ref}`): the link opens a page or reads, it does not act.
const NOT_THE_ACT: &[&str] =
    &["center", "centre", "preferences", "preference", "manage", "settings", "transaction", "transactions"];

/// A secret only the link's recipient holds: a value of letters and digits both (6 or more), under a key
/// that is not an object's id (`id`, `productId`, `sku`) or a page's state.
fn secret(k: &str, v: &str) -> bool {
    let id_key = k == "id"
        || k.ends_with("id")
        || k.ends_with("ids")
        || matches!(k, "sku" | "ref" | "page" | "q" | "v" | "ver" | "version" | "lang" | "locale" | "hl")
        || k.starts_with("utm");
    !id_key && mixed(v, 6)
}

/// Letters and digits both, `min` or more characters, nothing but those and `-_.=`.
fn mixed(v: &str, min: usize) -> bool {
    v.len() >= min
        && v.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '='))
        && v.chars().filter(|c| c.is_ascii_digit()).count() >= 2
        && v.chars().filter(|c| c.is_ascii_alphabetic()).count() >= 2
}

/// A path segment that is a link's token (`/invites/Zx81Kq/accept`, `/confirm/8Jk2mQ/a1b2c3d4e5`): letters
/// and digits mixed, not a word with a version (`oauth2`, `api-v2`, `p-77812`).
fn token_segment(s: &str) -> bool {
    let versioned = {
        let t = s.trim_end_matches(|c: char| c.is_ascii_digit());
        let t = t.trim_end_matches(['-', '_', 'v', 'V']);
        t.chars().all(|c| c.is_ascii_alphabetic())
    };
    mixed(s, 6) && !versioned
}

/// An opaque value: an id or a token that only its link knows (12 or more letters and digits, both).
fn opaque(v: &str) -> bool {
    v.len() >= 12
        && v.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '='))
        && v.chars().any(|c| c.is_ascii_digit())
        && v.chars().any(|c| c.is_ascii_alphabetic())
}

/// A GET's or a HEAD's verdict: a GraphQL mutation sent by GET (`?query=mutation{accountDelete(...)}`)
/// is the mutation; a link that acts and carries its token ([`judge_get`]: a vote, an unsubscribe, a
/// confirmation); a link whose clicked label names an act (`label_act`: the label judged as a write's
/// would be) and that carries a secret ([`carries_secret`]).
pub(super) fn judge_link(
    f: &WriteFacts<'_>,
    label_act: impl Fn(Option<&str>) -> Option<WriteHit>,
) -> Option<WriteHit> {
    let hit = |rule: &str, matched: String| WriteHit {
        rule: rule.to_string(),
        why: RULES.iter().find(|r| r.0 == rule).map_or("acts in the world", |r| r.1).to_string(),
        matched,
    };
    if let super::acts::Says::Act(rule) = super::graphql::judge_graphql(&f.graphql) {
        return Some(hit(rule, "graphql operation by GET".into()));
    }
    let api = super::creates::api_call(f.host, f.path.split('?').next().unwrap_or(f.path), false);
    judge_get(f.path, api).map(|(rule, m)| hit(rule, m)).or_else(|| {
        // Only a GET clicked on a label: every other GET (most of them) runs no label rule.
        f.label
            .and_then(|l| label_act(Some(l)))
            .filter(|_| carries_secret(f.path))
            .map(|h| WriteHit { matched: format!("link {}", h.matched), ..h })
    })
}

/// Whether a link carries a secret only its recipient holds (a token in its query or its path), on no
/// page that only manages what it would do: a link whose clicked label names an act (`Approve`,
/// `Yes`, `Unsubscribe from all emails`) and carries one is the act (`writes`, for GET).
pub(super) fn carries_secret(path_and_query: &str) -> bool {
    let (path, query) = path_and_query.split_once('?').unwrap_or((path_and_query, ""));
    let manages = path.split('/').flat_map(words).any(|w| NOT_THE_ACT.contains(&w.as_str()));
    let tokened = form_urlencoded::parse(query.replace(';', "&").as_bytes()).any(|(k, v)| {
        let k = k.to_ascii_lowercase();
        let named = matches!(
            k.trim_start_matches('_'),
            "token" | "tok" | "sig" | "signature" | "hash" | "auth" | "key"
        ) || k.ends_with("token");
        (named && v.len() >= 4) || secret(&k, &v)
    });
    !manages && (tokened || path.split('/').any(token_segment))
}

/// A GET (or HEAD) that acts: an act word in its path's last words or its `action`, with a token or an
/// address in its query (a vote link with its `auth`, an unsubscribe or confirmation link, a JSONP
/// subscription); an unsubscribe or a verification by an opaque id alone; a write verb with an API's
/// credential; a message sent by link (a recipient and a text); an API's purchase by GET (`api`: the
/// request is an API call, `creates::api_call`).
pub(super) fn judge_get(path_and_query: &str, api: bool) -> Option<(&'static str, String)> {
    let (path, query) = path_and_query.split_once('?').unwrap_or((path_and_query, ""));
    // `;` separates parameters too (Simple Machines' `action=deletemsg;topic=1;sesc=...`).
    let query = query.replace(';', "&");
    let raw: Vec<(String, String)> =
        form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    // A signed query API's action (`Action=TerminateInstances`, capitalised as those APIs spell it).
    if let Some((_, a)) =
        raw.iter().find(|(k, v)| k == "Action" && v.starts_with(|c: char| c.is_ascii_uppercase()))
    {
        if words(a).first().is_some_and(|w| QUERY_API_WRITES.contains(&w.as_str())) {
            return Some(("post", format!("GET Action={a}")));
        }
    }
    let params: Vec<(String, String)> = raw.into_iter().map(|(k, v)| (k.to_ascii_lowercase(), v)).collect();
    // A long hexadecimal value is a session's token or a link's signature.
    // (32 or more: an MD5 or SHA token; a 24-digit MongoDB id is an order's or a page's, not a token).
    let hex_token = |v: &str| v.len() >= 32 && v.chars().all(|c| c.is_ascii_hexdigit());
    // A magic link or a password reset: a log-in, not an act.
    if params.iter().any(|(k, v)| {
        matches!(k.as_str(), "type" | "mode")
            && matches!(
                v.to_ascii_lowercase().as_str(),
                "magiclink" | "login" | "signin" | "recovery" | "resetpassword"
            )
    }) {
        return None;
    }
    // An API's credential (`api_key`, `apiKey`, `auth-password`); a link's own `key` is its token.
    let credential = |k: &str, v: &str| {
        k != "key"
            && ((k.ends_with("key") && v.len() >= 6) || k.contains("password") || k.ends_with("secret"))
    };
    // A token only the link carries (not an address, not an API's key): what a verification needs.
    let link_token = params.iter().any(|(k, v)| {
        let k = k.trim_start_matches('_');
        !v.is_empty()
            && (matches!(k, "token" | "tok" | "ticket" | "hash" | "sig" | "signature" | "hmac" | "nonce")
                || k.ends_with("token")
                || (k.ends_with("code") && v.len() >= 6)
                || (k == "key" && v.len() >= 8)
                || hex_token(v))
    });
    let tokenish = params.iter().any(|(k, v)| {
        let k = k.trim_start_matches('_');
        (matches!(
            k,
            "token"
                | "auth"
                | "csrf"
                | "hmac"
                | "sig"
                | "signature"
                | "nonce"
                | "fkey"
                | "tok"
                | "ticket"
                | "hash"
                | "formkey"
        ) || k.ends_with("token")
            || k.contains("email")
            || k == "e"
            || (k.ends_with("code") && v.len() >= 6)
            || (k == "key" && v.len() >= 8)
            || hex_token(v)
            || matches!(k, "message" | "msg" | "text"))
            && !v.is_empty()
    });
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let path_words: Vec<String> = segs.iter().flat_map(|s| words(s)).collect();
    // A page that manages what the link would do, or a payment's check: no act by link.
    let manages = path_words.iter().any(|w| NOT_THE_ACT.contains(&w.as_str()));
    // The link's own secret: a token-like value in its query, or a token in its path.
    let secreted = params.iter().any(|(k, v)| secret(k, v) && !credential(k, v))
        || segs.iter().any(|s| token_segment(s));
    // A message sent by link: a recipient and a text.
    let has = |ks: &[&str]| params.iter().any(|(k, v)| ks.contains(&k.as_str()) && !v.is_empty());
    let addressed = params.iter().any(|(k, v)| {
        matches!(
            k.as_str(),
            "phone" | "to" | "number" | "numbers" | "recipient" | "mobile" | "msisdn" | "destination"
        ) && (v.contains('@') || v.chars().filter(|c| c.is_ascii_digit()).count() >= 7)
    });
    if addressed && has(&["text", "message", "msg", "content", "body"]) {
        return Some(("message", "GET with a recipient and a text".into()));
    }
    // An API's purchase or transfer by GET (the credential in a header): the action is the path's last word.
    if api {
        if let Some(w) = segs.last().map(|s| words(s)).and_then(|ws| ws.last().cloned()) {
            if matches!(w.as_str(), "buy" | "sell" | "transfer" | "withdraw") {
                return Some(("purchase", format!("GET {w} on an API")));
            }
        }
    }
    // A write verb or a command (`/devices/31/unlock`) with an API's credential in the query; a `key`
    // is one when a command or a method is named beside it (`key=...&command=set_dns2`).
    let named_keys = ["command", "action", "cmd", "method", "wsfunction", "function"];
    let commanded = params.iter().any(|(k, _)| named_keys.contains(&k.as_str()));
    // Under an API's path a long `key` is the API's (`/api/registerDomain?key=...`).
    let api_path = path_words.iter().any(|w| w == "api");
    // cPanel's session in the path (`/cpsess0912738411/execute/...`): what it runs is the last segment.
    let cpanel = segs.iter().any(|s| {
        s.strip_prefix("cpsess").is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    });
    if cpanel {
        if let Some(w) = segs
            .last()
            .map(|s| words(s))
            .and_then(|ws| ws.into_iter().find(|w| GET_WRITES.contains(&w.as_str())))
        {
            return Some(("post", format!("GET {w} in a cPanel session")));
        }
    }
    // The dynamic DNS update protocol (`/nic/update?hostname=...&myip=...`): a host repointed.
    if path.ends_with("/nic/update") && params.iter().any(|(k, _)| k == "hostname") {
        return Some(("post", "a dynamic DNS update".into()));
    }
    // A check or a read the last segment leads with (`checkRegisterAvailability`) is no write.
    let reads = segs.last().and_then(|s| words(s).into_iter().next()).is_some_and(|w| {
        matches!(
            w.as_str(),
            "check" | "get" | "list" | "search" | "find" | "query" | "lookup" | "fetch" | "describe"
        )
    });
    if !reads
        && params.iter().any(|(k, v)| {
            credential(k, v)
                || ((matches!(k.as_str(), "token" | "authorization") || k.ends_with("_token"))
                    && v.len() >= 6)
                || (k.ends_with("token") && v.len() >= 16)
                || (k == "key" && (commanded || api_path) && v.len() >= if commanded { 6 } else { 16 })
        })
    {
        let named =
            params.iter().filter(|(k, _)| named_keys.contains(&k.as_str())).flat_map(|(_, v)| words(v));
        if let Some(w) = path_words
            .iter()
            .cloned()
            .chain(named)
            .find(|w| GET_WRITES.contains(&w.as_str()) || super::commands::is_command(w))
        {
            return Some(("post", format!("GET {w} with an API credential")));
        }
    }
    // A link that carries a form's CSRF token (`sesskey`, `authenticity_token`, `_wpnonce`): a site asks
    // for one only where the request changes something.
    // A log-out link carries one too (WordPress's `action=logout&_wpnonce=...`): the session's own; so
    // does a search form that sends its token along (`/search?q=...&_token=...`): a read.
    let own_or_read = path_words.iter().cloned().chain(params.iter().flat_map(|(_, v)| words(v))).any(|w| {
        matches!(w.as_str(), "logout" | "signout" | "logoff" | "search" | "find" | "filter" | "results")
    });
    if let Some((k, _)) =
        params.iter().find(|(k, v)| CSRF_KEYS.contains(&k.as_str()) && v.len() >= 6).filter(|_| !own_or_read)
    {
        return Some(("post", format!("GET with the form token {k}")));
    }
    // An unsubscribe or an email verification by an opaque id (the link is the token).
    let opaque_id = params.iter().any(|(k, v)| opaque(v) && !credential(k, v))
        || segs.iter().rev().take(2).any(|s| opaque(s));
    let says = |set: &[&str]| {
        path_words.iter().any(|w| set.contains(&w.as_str()))
            || params.iter().any(|(k, v)| {
                matches!(k.as_str(), "action" | "p" | "mode" | "do")
                    && words(v).iter().any(|w| set.contains(&w.as_str()))
            })
    };
    if manages {
        return None;
    }
    if opaque_id && says(&["unsubscribe", "unsub", "optout", "verification", "verify"]) {
        let rule = if says(&["verification", "verify"]) { "account" } else { "vote" };
        return Some((rule, "GET unsubscribe or verification by an opaque id".into()));
    }
    // An act named as a flag (`confirm=true`) is the action itself.
    let flagged =
        params.iter().find(|(k, v)| matches!(v.as_str(), "true" | "1" | "yes") && act_word(k).is_some());
    if !tokenish && !secreted && flagged.is_none() {
        return None;
    }
    // Every segment's words (an act before the link's token: `/invite/decline/9f8e7d6c5b4a`).
    let tail = segs.iter().rev().copied().collect::<Vec<_>>();
    let action = params
        .iter()
        .find(|(k, _)| matches!(k.as_str(), "action" | "do" | "how" | "mode" | "p" | "op" | "cmd"))
        .map(|(_, v)| v.as_str());
    // A query key that is the act (`watch=topic` with its `hash`).
    let keyed =
        params.iter().find(|(k, v)| !v.is_empty() && GET_ACTS.contains(&k.as_str())).map(|(k, _)| k.as_str());
    for ident in tail.into_iter().chain(action).chain(flagged.map(|(k, _)| k.as_str())).chain(keyed) {
        for w in words(ident) {
            // A confirmation link, a newsletter's opt-in: the confirmation itself.
            let w = match w.as_str() {
                "confirmation" | "confirmations" => "confirm",
                "verification" => "verify",
                "optin" => "subscribe",
                w => w,
            };
            // A coupon, a voucher or a filter applied by link is the session's own.
            let own = |p: &String| {
                matches!(
                    p.as_str(),
                    "coupon" | "promo" | "discount" | "voucher" | "filter" | "filters" | "giftcard"
                )
            };
            if w == "apply" && path_words.iter().chain(params.iter().map(|(k, _)| k)).any(own) {
                continue;
            }
            if GET_ACTS.contains(&w) {
                let rule = ACT_WORDS.iter().find(|(a, _)| *a == w).map_or("post", |(_, r)| *r);
                // A verification needs the link's own token: an address checked with an API's key reads.
                let checks = matches!(w, "verify" | "confirm");
                if link_token || secreted || !checks {
                    return Some((rule, format!("GET {ident} with a token")));
                }
            }
            // A verb written together with its object (`deletemsg`, `notifytopic`, `confirmemail`).
            if let Some(v) =
                ["delete", "remove", "cancel", "unsubscribe", "subscribe", "rollback", "notify", "confirm"]
                    .iter()
                    .find(|v| w.len() > v.len() + 2 && w.starts_with(*v))
            {
                if let Some((_, rule)) = ACT_WORDS.iter().find(|(a, _)| a == v) {
                    if *v == "confirm" && !(link_token || secreted) {
                        continue;
                    }
                    return Some((rule, format!("GET {ident} with a token")));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(path_and_query: &str) -> Option<(&'static str, String)> {
        judge_get(path_and_query, false)
    }

    #[test]
    fn get_links() {
        assert!(judge("/vote?id=1&how=up&auth=abc").is_some());
        assert!(judge("/reset-password?token=abc").is_none());
        assert!(judge("/search?q=how+to+unsubscribe").is_none());
        assert!(judge("/method/groups.join?group_id=1&access_token=x").is_some());
        assert!(judge("/alerts/publish?message=disk+full").is_some());
        assert!(judge("/unsubscribe/?uuid=1&key=9c1d2e3f4a5b").is_some());
        assert!(judge("/publish/docs?lang=en").is_none());
        // The sixth round: an unsubscribe or a verification by an opaque id alone, a write verb with an
        // API's credential, a message by link, a magic link (a log-in), a translation (not a message).
        assert!(judge("/email/unsubscribe/6651a2b3c4d5e6f7a8b9c").is_some());
        assert!(judge("/track/unsub.php?u=30516473&id=8e3c8f1a2b4d4c6e9f0a").is_some());
        assert!(judge("/unsubscribe?id=12").is_none());
        assert!(judge("/u/email-verification?ticket=Yb3Kx9Zt2Qw8Lm4Np6Rs1Tv5").is_some());
        assert!(judge("/dns/add-record.json?auth-id=1&auth-password=pw&host=www").is_some());
        assert!(judge("/update?api_key=XXXXXXXXXXXXXXXX&field1=23.5").is_some());
        assert!(judge("/messages/http/send?apiKey=abc123XyZ&to=27999123456&content=Ready").is_some());
        assert!(judge("/translate?to=fr&text=hello").is_none());
        assert!(judge("/auth/v1/verify?token=pkce_3a4b5c6d7e8f&type=magiclink").is_none());
        assert!(judge("/viewtopic.php?t=254321&watch=topic&hash=3f2a1b0c").is_some());
        assert!(judge("/watch?v=dQw4w9WgXcQ").is_none());
        assert!(judge_get("/api/v2/private/buy?amount=40&instrument_name=ETH", true).is_some());
        assert!(judge_get("/api/v2/public/get_book_summary?currency=ETH", true).is_none());
        assert!(judge("/order/confirmation?id=8f1e2d3c4b5a69788796").is_none());
        assert!(judge("/orders/confirmation?orderId=5f1a9c3b2d4e6f7a8b9c0d1e").is_none());
        // The seventh round: `;` separators and a hexadecimal session token, a rollback link, a signed
        // query API's write action (not its reads), an address checked with an API key.
        assert!(judge("/index.php?action=deletemsg;topic=5.0;msg=6;sesc=a322c0ab4117dda4b09b15e03a6821a0")
            .is_some());
        assert!(judge("/w/index.php?title=X&action=rollback&from=Y&token=17d537eccdd4a65f821b86cef5bd99c6")
            .is_some());
        assert!(judge("/?Action=TerminateInstances&InstanceIds.0=ins-1&Version=2017-03-12").is_some());
        assert!(judge("/?Action=DescribeInstances&Version=2017-03-12").is_none());
        assert!(judge("/v2/verify?email=a%40b.com&apikey=live_41f918a7f9c67b487b661ee6").is_none());
        // The tenth round: an invitation answered, an approval, an RSVP, a cancellation by link (their
        // tokens in the path or under any name), an act before its token in the path, a joined
        // `confirmemail`; a preference centre, a payment's check and a versioned path segment are no act.
        // The eleventh: a form's CSRF token on a link (not a log-out's, not a search's), a command or a
        // write method with an API's credential (a `key` beside a named command); a read method passes.
        let rows: &[(&str, bool)] = &[
            ("/invite/accept?token=inv_7f2c1d9e8b&workspace=bluefin", true),
            ("/invite/decline/9f8e7d6c5b4a?project=118823", true),
            ("/invites/Zx81Kq/accept", true),
            ("/requests/approve/rq_88c1?t=5d2e9f", true),
            ("/rsvp/p-77812?response=no&token=ab12cd34", true),
            ("/cancel-appointment?aid=88123991&c=9a8b7c", true),
            ("/unsubscribe/v1/5f1a2b3c4d5e6f/8c2e1d?all=1", true),
            ("/mail/confirm/8Jk2mQ/a1b2c3d4e5", true),
            ("/confirmemail?code=ce_71f2a9b0&uid=88123", true),
            ("/update?domains=homelab&token=a7c4d1e2-9f80-4b3a-8c1d-2e3f4a5b6c7d&ip=203.0.113.77", true),
            ("/unsub_center.aspx?qs=3c1b8a9d2e4f60a1b2c3d4e5f6a7b8c9", false),
            ("/v1/transaction/verify/chewatatest-6669", false),
            ("/oauth2/accept?lang=en", false),
            ("/confirm?productId=ab12cd34ef", false),
            ("/mod/choice/view.php?id=9&action=delchoice&sesskey=Xk3fP9aQ2r", true),
            ("/apps/112/devices/31/unlock?access_token=0e9f8a7b6c", true),
            ("/api3.xml?key=dyn-key-123&command=set_dns2&domain=example.org", true),
            ("/services/rest/?method=rtm.tasks.complete&api_key=abc123&auth_token=tok456", true),
            ("/api3.xml?key=dyn-key-123&command=search&domain=example.org", false),
            ("/course/view.php?id=9", false),
            ("/wp-login.php?action=logout&_wpnonce=8a7b6c5d4e", false),
            ("/search?q=kettle&_token=Xk3fP9aQ2rT7", false),
            // The twelfth round: an API's key under `/api/`, cPanel's session in the path, the dynamic DNS
            // protocol; a check under the same key reads, and so does a cPanel listing.
            ("/api/registerDomain?version=1&key=7a1c9e40d2b3f8a6c5e1&domain=example.org", true),
            ("/api/checkRegisterAvailability?version=1&key=7a1c9e40d2b3f8a6c5e1&domains=example.org", false),
            ("/cpsess0912738411/execute/Mysql/delete_database?name=wp", true),
            ("/cpsess0912738411/execute/Mysql/list_databases", false),
            ("/nic/update?hostname=home.example.org&myip=198.51.100.23", true),
            ("/ads/renew?adId=771203553&token=e9c41b7", true),
            // The thirteenth round: a web service's token and function (Moodle), a job applied for by
            // link; a coupon applied by link is the cart's own, and a read function reads.
            ("/webservice/rest/server.php?wstoken=6f1e2d0c9b8a7f6e5d4c&wsfunction=mod_forum_add_discussion_post", true),
            ("/webservice/rest/server.php?wstoken=6f1e2d0c9b8a7f6e5d4c&wsfunction=core_course_get_courses", false),
            ("/job/apply_quick.php?job_id=8120334&t=f3a9c0b17e", true),
            ("/cart/apply?coupon=SAVE10&token=f3a9c0b17e", false),
            // The fourteenth round: a newsletter's confirmation (Spanish) and unsubscribe (German) links.
            ("/newsletters/confirmar?nl=daily&t=91c2e0f3a7", true),
            ("/newsletter/abmelden?uid=55812990&token=0f9a6b2c7e4d1a3b5c8e9f0a1b2c3d4e", true),
        ];
        for (link, acts) in rows {
            assert_eq!(judge(link).is_some(), *acts, "{link}");
        }
        assert!(carries_secret("/approvals/email/approve?token=eyJleHAi.q1w2e3"));
        assert!(carries_secret("/invites/Zx81Kq/accept"));
        assert!(!carries_secret("/hotels/paris?sid=ab12cd34&page=2"));
        assert!(!carries_secret("/preferences/center?token=abcdef123456"));
    }
}
