//! `webfreeze guard check`: the guards' judges over a recording's requests (a HAR file or a snapshot),
//! printed as a table or JSON.

use anyhow::Context as _;
use proxy::guard::{AnswerPlaces, Blocked, GuardConfig, WriteRules};

use crate::cli::GuardCheckArgs;
use crate::config::Config;
use crate::usage::UsageError;

/// One request of the recording: method, URL, content type, body.
type Request = (String, String, Option<String>, Option<Vec<u8>>);

pub(crate) fn check(cfg: &Config, a: GuardCheckArgs) -> anyhow::Result<()> {
    let writes = match &a.write_guard_file {
        Some(f) => WriteRules::with_file(f).map_err(|e| UsageError(e.to_string()))?,
        None => WriteRules::builtin(),
    };
    let answers = match &a.answer_guard_file {
        Some(f) => AnswerPlaces::with_file(f).map_err(|e| UsageError(e.to_string()))?,
        None => AnswerPlaces::builtin(),
    };
    let guard =
        GuardConfig { writes: Some(writes), answers: Some(answers), own_hosts: a.allow_writes.clone() };
    let path = std::path::Path::new(&a.recording);
    let requests = if path.is_file() { from_har(path)? } else { from_snapshot(cfg, &a.recording)? };
    let mut refused: Vec<Blocked> = Vec::new();
    for (method, url, ct, body) in &requests {
        let Ok(uri) = url.parse::<http::Uri>() else { continue };
        if let Some(b) = guard.judge(method, &uri, ct.as_deref(), body.as_deref(), None) {
            refused.push(b);
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&refused)?);
        return Ok(());
    }
    let writes =
        requests.iter().filter(|r| matches!(r.0.as_str(), "POST" | "PUT" | "PATCH" | "DELETE")).count();
    println!(
        "{}: {} requests ({} writes); the guards would refuse {}",
        a.recording,
        requests.len(),
        writes,
        refused.len()
    );
    if !refused.is_empty() {
        println!("\n| method | URL | rule | why | evidence |\n|---|---|---|---|---|");
        for b in &refused {
            let url: String = b.url.chars().take(100).collect();
            println!("| {} | {url} | {} | {} | {} |", b.method, b.rule, b.why, b.evidence);
        }
    }
    Ok(())
}

/// The requests of a HAR file, in order.
fn from_har(path: &std::path::Path) -> anyhow::Result<Vec<Request>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let har: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a HAR file (not JSON)", path.display()))?;
    let entries = har
        .pointer("/log/entries")
        .and_then(serde_json::Value::as_array)
        .with_context(|| format!("{} is not a HAR file (no log.entries)", path.display()))?;
    let s =
        |v: &serde_json::Value, p: &str| v.pointer(p).and_then(serde_json::Value::as_str).map(str::to_string);
    Ok(entries
        .iter()
        .filter_map(|e| {
            let method = s(e, "/request/method")?;
            let url = s(e, "/request/url")?;
            let ct = s(e, "/request/postData/mimeType");
            let body = s(e, "/request/postData/text").map(String::into_bytes);
            Some((method, url, ct, body))
        })
        .collect())
}

/// The requests of a snapshot in the store, in order.
fn from_snapshot(cfg: &Config, name: &str) -> anyhow::Result<Vec<Request>> {
    let store = snapshots::Store::open_read_only(&cfg.store).with_context(|| {
        format!("{name} is not a file, and the store {} cannot be opened", cfg.store.display())
    })?;
    let m = store
        .manifest(name)
        .with_context(|| format!("{name} is neither a HAR file nor a snapshot in {}", cfg.store.display()))?;
    let mut out = Vec::new();
    for x in store.exchanges(&m) {
        let x = x?;
        let ct = x
            .request
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("content-type"))
            .map(|h| h.value.clone());
        let body = match &x.request.body {
            Some(b) => Some(store.blob_bytes(&b.hash)?.to_vec()),
            None => None,
        };
        out.push((x.request.method.clone(), x.request.url.clone(), ct, body));
    }
    Ok(out)
}
