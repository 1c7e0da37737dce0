//! `webfreeze guard check`: the guards' judges over a recording's requests (a HAR file or a snapshot),
//! printed as a table or JSON. A write is judged with its control's label where the HAR carries one
//! (`archive::har::labels`); the WebSocket messages the page sent are judged as the live guard judges them
//! (`proxy::guard::socket`). A request that cannot be read (no method or URL, a URL that is not absolute,
//! an entry that is not an object) is not skipped: it is listed with the reason, and the command exits 1
//! after its report, as it does when the recording cannot be read at all; 0 means every request was judged.

use anyhow::Context as _;
use proxy::guard::{AnswerPlaces, Blocked, GuardConfig, WriteRules};
use serde::Serialize;

use crate::cli::GuardCheckArgs;
use crate::config::Config;
use crate::usage::UsageError;

/// One request of the recording.
#[derive(Debug, Default)]
struct Request {
    method: String,
    url: String,
    content_type: Option<String>,
    body: Option<Vec<u8>>,
    /// The control's label, when the recording carries it.
    label: Option<String>,
    /// The WebSocket messages the page sent on this connection (text payloads).
    sent: Vec<Vec<u8>>,
}

/// A recording's requests, each with its place among the entries, and the entries not read as requests.
type Read = (Vec<(usize, Request)>, Vec<Unparsed>);

/// A request that could not be judged, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Unparsed {
    /// Its place among the recording's entries (0-based).
    index: usize,
    /// Its method, when it had one.
    method: Option<String>,
    /// Its URL, when it had one.
    url: Option<String>,
    /// Why it could not be judged.
    reason: String,
}

/// What `--json` prints.
#[derive(Debug, Serialize)]
struct Report<'a> {
    recording: &'a str,
    requests: usize,
    writes: usize,
    websocket_messages: usize,
    refused: Vec<Blocked>,
    unparsed: Vec<Unparsed>,
}

pub(crate) fn check(cfg: &Config, a: GuardCheckArgs) -> anyhow::Result<()> {
    let writes = match &a.write_guard_file {
        Some(f) => WriteRules::with_file(f).map_err(|e| UsageError(e.to_string()))?,
        None => WriteRules::builtin(),
    };
    let writes = if a.no_learned_guard { writes.without_learned() } else { writes };
    let answers = match &a.answer_guard_file {
        Some(f) => AnswerPlaces::with_file(f).map_err(|e| UsageError(e.to_string()))?,
        None => AnswerPlaces::builtin(),
    };
    let guard =
        GuardConfig { writes: Some(writes), answers: Some(answers), own_hosts: a.allow_writes.clone() };
    let path = std::path::Path::new(&a.recording);
    let (requests, mut unparsed) =
        if path.is_file() { from_har(path)? } else { (from_snapshot(cfg, &a.recording)?, Vec::new()) };
    let total = requests.len() + unparsed.len();
    let (refused, more) = judge(&guard, &requests);
    unparsed.extend(more);
    unparsed.sort_by_key(|u| u.index);
    let report = Report {
        recording: &a.recording,
        requests: total,
        writes: requests
            .iter()
            .filter(|(_, r)| matches!(r.method.as_str(), "POST" | "PUT" | "PATCH" | "DELETE"))
            .count(),
        websocket_messages: requests.iter().map(|(_, r)| r.sent.len()).sum(),
        refused,
        unparsed,
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_table(&report);
    }
    if !report.unparsed.is_empty() {
        anyhow::bail!(
            "{} of {} requests could not be read, so they were not judged (listed above)",
            report.unparsed.len(),
            report.requests
        );
    }
    Ok(())
}

/// The refusals among `requests`, and the requests whose URL could not be judged (by their index).
fn judge(guard: &GuardConfig, requests: &[(usize, Request)]) -> (Vec<Blocked>, Vec<Unparsed>) {
    let mut refused = Vec::new();
    let mut unparsed = Vec::new();
    for (index, r) in requests {
        let uri = match r.url.parse::<http::Uri>() {
            Ok(u) if u.host().is_some() => u,
            Ok(_) => {
                unparsed.push(unparsed_at(*index, r, "the URL is not absolute (no host)"));
                continue;
            }
            Err(e) => {
                unparsed.push(unparsed_at(*index, r, &format!("the URL does not parse: {e}")));
                continue;
            }
        };
        let ct = r.content_type.as_deref();
        if let Some(b) = guard.judge(&r.method, &uri, ct, r.body.as_deref(), r.label.as_deref()) {
            refused.push(b);
        }
        if let Some(socket) = socket_uri(&uri).filter(|_| !r.sent.is_empty()) {
            refused
                .extend(r.sent.iter().filter_map(|m| proxy::guard::socket::judge_message(guard, &socket, m)));
        }
    }
    (refused, unparsed)
}

fn unparsed_at(index: usize, r: &Request, reason: &str) -> Unparsed {
    Unparsed { index, method: Some(r.method.clone()), url: Some(r.url.clone()), reason: reason.to_string() }
}

/// A socket's URL as the proxy sees its handshake (`wss://` as `https://`), for the message judge.
fn socket_uri(uri: &http::Uri) -> Option<http::Uri> {
    let s = uri.to_string();
    let s = match uri.scheme_str() {
        Some("wss") => s.replacen("wss://", "https://", 1),
        Some("ws") => s.replacen("ws://", "http://", 1),
        _ => s,
    };
    s.parse().ok()
}

fn print_table(r: &Report<'_>) {
    let ws = if r.websocket_messages > 0 {
        format!(", {} WebSocket messages sent", r.websocket_messages)
    } else {
        String::new()
    };
    println!(
        "{}: {} requests ({} writes{ws}); the guards would refuse {}; {} could not be read",
        r.recording,
        r.requests,
        r.writes,
        r.refused.len(),
        r.unparsed.len()
    );
    if !r.refused.is_empty() {
        println!("\n| method | URL | rule | why | evidence |\n|---|---|---|---|---|");
        for b in &r.refused {
            let url: String = b.url.chars().take(100).collect();
            println!("| {} | {url} | {} | {} | {} |", b.method, b.rule, b.why, b.evidence);
        }
    }
    if !r.unparsed.is_empty() {
        println!("\nNot judged (could not be read):\n\n| entry | method | URL | why |\n|---|---|---|---|");
        for u in &r.unparsed {
            let url: String = u.url.as_deref().unwrap_or("-").chars().take(100).collect();
            println!("| {} | {} | {url} | {} |", u.index, u.method.as_deref().unwrap_or("-"), u.reason);
        }
    }
}

/// The requests of a HAR file, in order (with their index among its entries), and the entries that
/// could not be read as requests.
fn from_har(path: &std::path::Path) -> anyhow::Result<Read> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let har: serde_json::Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
        .with_context(|| format!("{} is not a HAR file (not JSON)", path.display()))?;
    let entries = har
        .pointer("/log/entries")
        .and_then(serde_json::Value::as_array)
        .with_context(|| format!("{} is not a HAR file (no log.entries)", path.display()))?;
    let mut requests = Vec::new();
    let mut unparsed = Vec::new();
    for (index, e) in entries.iter().enumerate() {
        match har_request(e) {
            Ok(r) => requests.push((index, r)),
            Err(u) => unparsed.push(Unparsed { index, ..u }),
        }
    }
    Ok((requests, unparsed))
}

/// One HAR entry as a request (its index is filled in by the caller).
fn har_request(e: &serde_json::Value) -> Result<Request, Unparsed> {
    let s = |p: &str| e.pointer(p).and_then(serde_json::Value::as_str).map(str::to_string);
    let (method, url) = (s("/request/method"), s("/request/url"));
    let fail =
        |reason: &str| Unparsed { index: 0, method: method.clone(), url: url.clone(), reason: reason.into() };
    if !e.is_object() {
        return Err(fail("the entry is not an object"));
    }
    if e.get("request").is_none_or(|r| !r.is_object()) {
        return Err(fail("the entry has no request"));
    }
    let Some(m) = method.clone().filter(|m| !m.trim().is_empty()) else { return Err(fail("no method")) };
    let Some(u) = url.clone().filter(|u| !u.trim().is_empty()) else { return Err(fail("no URL")) };
    let content_type = s("/request/postData/mimeType");
    let body =
        match (s("/request/postData/text"), e.pointer("/request/postData/params").and_then(|p| p.as_array()))
        {
            (Some(t), _) => Some(t.into_bytes()),
            // Some tools write a form's fields only as `params`: the body they stand for.
            (None, Some(params)) => {
                let mut f = url::form_urlencoded::Serializer::new(String::new());
                for p in params {
                    let name = p.get("name").and_then(|v| v.as_str()).unwrap_or_default();
                    f.append_pair(name, p.get("value").and_then(|v| v.as_str()).unwrap_or_default());
                }
                Some(f.finish().into_bytes())
            }
            (None, None) => None,
        };
    let sent = e
        .get("_webSocketMessages")
        .and_then(|m| m.as_array())
        .map(|ms| {
            ms.iter()
                .filter(|m| m.get("type").and_then(|t| t.as_str()) == Some("send"))
                .filter(|m| m.get("opcode").and_then(|o| o.as_u64()).unwrap_or(1) == 1)
                .filter_map(|m| m.get("data").and_then(|d| d.as_str()).map(|d| d.as_bytes().to_vec()))
                .collect()
        })
        .unwrap_or_default();
    Ok(Request { method: m, url: u, content_type, body, label: archive::har::labels::control_label(e), sent })
}

/// The requests of a snapshot in the store, in order.
fn from_snapshot(cfg: &Config, name: &str) -> anyhow::Result<Vec<(usize, Request)>> {
    let store = snapshots::Store::open_read_only(&cfg.store).with_context(|| {
        format!("{name} is not a file, and the store {} cannot be opened", cfg.store.display())
    })?;
    let m = store
        .manifest(name)
        .with_context(|| format!("{name} is neither a HAR file nor a snapshot in {}", cfg.store.display()))?;
    let mut out = Vec::new();
    for (index, x) in store.exchanges(&m).enumerate() {
        let x = x?;
        let content_type = x.request.header("content-type").map(str::to_string);
        let body = match &x.request.body {
            Some(b) => Some(store.blob_bytes(&b.hash)?.to_vec()),
            None => None,
        };
        let mut sent = Vec::new();
        if let Some(log) = &x.websocket {
            for msg in log.messages.iter().filter(|m| {
                m.from == snapshots::format::WsSide::Client && m.opcode == snapshots::format::WsOpcode::Text
            }) {
                sent.push(store.blob_bytes(&msg.payload.hash)?.to_vec());
            }
        }
        let (method, url) = (x.request.method.clone(), x.request.url.clone());
        out.push((index, Request { method, url, content_type, body, label: None, sent }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// HAR entries read as requests or listed as unread, with the label each carries.
    #[test]
    fn har_entries_are_read_or_listed_with_their_label() {
        type Row = (serde_json::Value, Result<Option<&'static str>, &'static str>);
        let rows: Vec<Row> = vec![
            (json!({"request": {"method": "GET", "url": "https://a.example/"}}), Ok(None)),
            (
                json!({"request": {"method": "POST", "url": "https://a.example/api/v2/tx"},
                       "_webfreeze": {"control": "Place order"}}),
                Ok(Some("Place order")),
            ),
            (json!({"request": {"url": "https://a.example/"}}), Err("no method")),
            (json!({"request": {"method": "GET"}}), Err("no URL")),
            (json!({"response": {}}), Err("the entry has no request")),
            (json!("nope"), Err("the entry is not an object")),
        ];
        for (entry, want) in rows {
            let got = har_request(&entry).map(|r| r.label).map_err(|u| u.reason);
            assert_eq!(got.as_ref().map(|l| l.as_deref()).map_err(String::as_str), want, "{entry}");
        }
    }

    /// A URL the judge cannot use is listed, not skipped; a label decides a write its path says nothing of
    /// (the rules alone: with the learned judge on, the unlabelled write no rule names is the model's).
    #[test]
    fn unjudgeable_urls_are_listed_and_labels_decide() {
        let mut guard = GuardConfig::standard(Vec::new());
        guard.writes = guard.writes.map(WriteRules::without_learned);
        let req = |url: &str, label: Option<&str>| Request {
            method: "POST".into(),
            url: url.into(),
            content_type: Some("application/x-www-form-urlencoded".into()),
            body: Some(b"item=jar".to_vec()),
            label: label.map(str::to_string),
            sent: Vec::new(),
        };
        let requests = vec![
            (0, req("https://shop.example/api/v2/tx", None)),
            (1, req("https://shop.example/api/v2/tx", Some("Place order"))),
            (2, req("/relative/only", None)),
            (3, req("https://bad host/", None)),
        ];
        let (refused, unparsed) = judge(&guard, &requests);
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert_eq!(refused[0].evidence, r#"label "Place order""#);
        let idx: Vec<usize> = unparsed.iter().map(|u| u.index).collect();
        assert_eq!(idx, [2, 3], "{unparsed:?}");
        // As a run judges: the model reads the unlabelled one (no rule names it), the label still decides
        // the other.
        let (refused, _) = judge(&GuardConfig::standard(Vec::new()), &requests);
        let rules: Vec<&str> = refused.iter().map(|b| b.rule.as_str()).collect();
        assert_eq!(rules, ["learned", "purchase"], "{refused:?}");
    }
}
