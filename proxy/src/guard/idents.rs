//! The words a request names its action with (issue 60): the `action` (or RPC method) in its query or
//! body, else its path's last words that are not ids. The judge (`writes`) reads them with the act
//! vocabulary (`acts::classify`) and the general readings (`creates`).

/// The identifier a request names its action with: the `action` (or RPC method) in its query or body,
/// else its path's last word that is not an id.
pub(crate) fn action_idents(path_and_query: &str, leaves: &[(String, String)]) -> Vec<String> {
    const KEYS: &[&str] = &[
        "action",
        "_action",
        "do",
        "wsfunction",
        "methodname",
        "method",
        "rating",
        "paction",
        "route",
        "methodcalls",
    ];
    let (path, query) = path_and_query.split_once('?').unwrap_or((path_and_query, ""));
    let from_query = form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| KEYS.contains(&k.to_ascii_lowercase().as_str()))
        .map(|(_, v)| v.into_owned());
    let from_body = leaves
        .iter()
        .find(|(k, v)| KEYS.contains(&k.rsplit('.').next().unwrap_or(k)) && v.len() < 80 && !v.contains(' '))
        .map(|(_, v)| v.clone());
    if let Some(a) = from_query.or(from_body).filter(|a| !a.is_empty()) {
        return vec![a];
    }
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
    match segs.as_slice() {
        [last, prev] => vec![last.clone(), prev.clone(), format!("{prev}/{last}")],
        _ => segs,
    }
}
