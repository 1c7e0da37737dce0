//! Links that act when followed (issue 60): a GET (or HEAD) naming an act and carrying a token, an
//! address or the message itself: a vote link with its `auth`, an unsubscribe or confirmation link from an
//! email, a JSONP subscription, a publish-by-URL API. Every other GET reads.

use super::acts::{act_word, words};
use super::vocab::ACT_WORDS;

/// A GET (or HEAD) that acts: an act word in its path's last words or its `action`, with a token or an
/// address in its query (a vote link with its `auth`, an unsubscribe or confirmation link, a JSONP
/// subscription).
pub(super) fn judge_get(path_and_query: &str) -> Option<(&'static str, String)> {
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
            || (k == "code" && v.len() >= 6)
            || (k == "key" && v.len() >= 8)
            || matches!(k, "message" | "msg" | "text"))
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
                        | "join"
                        | "publish"
                        | "send"
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
    use super::*;

    #[test]
    fn get_links() {
        assert!(judge_get("/vote?id=1&how=up&auth=abc").is_some());
        assert!(judge_get("/reset-password?token=abc").is_none());
        assert!(judge_get("/search?q=how+to+unsubscribe").is_none());
        assert!(judge_get("/method/groups.join?group_id=1&access_token=x").is_some());
        assert!(judge_get("/alerts/publish?message=disk+full").is_some());
        assert!(judge_get("/unsubscribe/?uuid=1&key=9c1d2e3f4a5b").is_some());
        assert!(judge_get("/publish/docs?lang=en").is_none());
    }
}
