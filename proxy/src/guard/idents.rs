//! The words a request names its action with (issue 60): the `action` (or RPC method) in its query or
//! body, else its path's last words that are not ids. The judge (`writes`) reads them with the act
//! vocabulary (`acts::classify`) and the general readings (`creates`).

/// The identifiers a request names its action with: the `action` (or RPC method) in its query or body,
/// then its path's last words that are not ids.
pub(crate) fn action_idents(path_and_query: &str, leaves: &[(String, String)]) -> Vec<String> {
    const KEYS: &[&str] = &[
        "action",
        "_action",
        // XE and Rhymix boards (`index.php` with `act=procDocumentVoteUp`).
        "act",
        ":action",
        "do",
        "wsfunction",
        "methodname",
        "method",
        "rating",
        "paction",
        "route",
        "methodcalls",
        "__eventtarget",
    ];
    let (path, query) = path_and_query.split_once('?').unwrap_or((path_and_query, ""));
    let from_query = form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| KEYS.contains(&k.to_ascii_lowercase().as_str()))
        .map(|(_, v)| v.into_owned())
        // A query that is one bare name (`mwebapi.phtml?SERVER_ENCOUNTERS_VOTE`): the RPC it calls.
        .or_else(|| {
            (!query.contains(['=', '&']) && query.len() > 3 && query.chars().any(|c| c.is_ascii_alphabetic()))
                .then(|| query.to_string())
        });
    // Every action the body names, outermost first: an RPC envelope's `method` is often `call`, the
    // method it calls nested (`params.method`: `action_confirm`); a generic `action` hands over to a
    // nested `method` (`action=mailpoet&method=subscribe`).
    let from_body: Vec<String> = leaves
        .iter()
        .filter(|(k, v)| {
            KEYS.contains(&k.rsplit('.').next().unwrap_or(k))
                && !v.is_empty()
                && v.len() < 80
                && !v.contains(' ')
        })
        .map(|(_, v)| v.clone())
        .collect();
    let named: Vec<String> = from_query.filter(|a| !a.is_empty()).into_iter().chain(from_body).collect();
    // The last two words of the path that are not ids (numbers, hashes, UUIDs, versions), and both
    // together (`dm/new`).
    let segs: Vec<String> = path
        .split('/')
        .rev()
        .filter(|s| {
            let digits = s.chars().filter(|c| c.is_ascii_digit()).count();
            !(s.is_empty()
                || digits >= 3
                || s.len() > 24 && !s.contains(['.', '-', '_'])
                || s.len() <= 2 && (digits > 0 || s.len() == 1))
        })
        .take(2)
        .map(|s| s.trim_end_matches(".json").trim_end_matches(".php").to_string())
        .collect();
    // What the query or the body names comes first; the path's words after it, read when those say
    // nothing (a `rating` of 9 in the body of `POST /sync/ratings`).
    let from_path = match segs.as_slice() {
        [last, prev] => vec![last.clone(), prev.clone(), format!("{prev}/{last}")],
        _ => segs,
    };
    named.into_iter().chain(from_path).collect()
}
