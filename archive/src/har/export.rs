//! HAR 1.2 export, entry by entry, with what HAR has no place for under `_webfreeze` (the module's doc).

use std::io::Write;

use base64::Engine as _;
use serde_json::{json, Value};

use snapshots::format::Header;
use snapshots::{Store, StoreError};

use super::{header, websocket};
use crate::ArchiveError;

fn is_textual(mime: &str) -> bool {
    let m = mime.to_ascii_lowercase();
    m.starts_with("text/")
        || m.contains("json")
        || m.contains("javascript")
        || m.contains("xml")
        || m.contains("x-www-form-urlencoded")
}

fn format_time(ms: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".into())
}

fn body_json(store: &Store, hash: &str, mime: &str) -> Result<(Value, Option<&'static str>), StoreError> {
    let bytes = store.blob_bytes(hash)?;
    if is_textual(mime) {
        if let Ok(s) = String::from_utf8(bytes.clone()) {
            return Ok((Value::String(s), None));
        }
    }
    Ok((Value::String(base64::engine::general_purpose::STANDARD.encode(&bytes)), Some("base64")))
}

/// HAR's `queryString`: the URL's query parameters, decoded.
fn query_json(url: &str) -> Value {
    let Ok(u) = url::Url::parse(url) else { return json!([]) };
    Value::Array(u.query_pairs().map(|(k, v)| json!({"name": k, "value": v})).collect())
}

/// HAR's request `cookies`: the Cookie headers' pairs.
fn request_cookies(h: &[Header]) -> Value {
    let pairs = h
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("cookie"))
        .flat_map(|h| h.value.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .map(|(k, v)| json!({"name": k, "value": v}));
    Value::Array(pairs.collect())
}

/// HAR's response `cookies`: each Set-Cookie's name and value, with the attributes HAR names.
fn response_cookies(h: &[Header]) -> Value {
    let cookies = h.iter().filter(|h| h.name.eq_ignore_ascii_case("set-cookie")).filter_map(|h| {
        let mut parts = h.value.split(';');
        let (name, value) = parts.next()?.trim().split_once('=')?;
        let mut c = json!({"name": name, "value": value});
        for attr in parts {
            let (k, v) = attr.trim().split_once('=').unwrap_or((attr.trim(), ""));
            match k.to_ascii_lowercase().as_str() {
                "path" => c["path"] = json!(v),
                "domain" => c["domain"] = json!(v),
                "expires" => c["expires"] = json!(v),
                "httponly" => c["httpOnly"] = json!(true),
                "secure" => c["secure"] = json!(true),
                "samesite" => c["sameSite"] = json!(v),
                _ => {}
            }
        }
        Some(c)
    });
    Value::Array(cookies.collect())
}

fn headers_json(h: &[Header]) -> Value {
    Value::Array(h.iter().map(|h| json!({"name": h.name, "value": h.value})).collect())
}

/// Export a snapshot as HAR 1.2, streaming one entry at a time.
pub fn export<W: Write>(store: &Store, name: &str, out: W, file: &str) -> Result<u64, ArchiveError> {
    let m = store.manifest(name)?;
    let io = |e: std::io::Error| ArchiveError::Io { file: file.to_string(), source: e };
    let mut out = std::io::BufWriter::new(out);
    let head = json!({
        "version": "1.2",
        "creator": {"name": "webfreeze", "version": env!("CARGO_PKG_VERSION")},
        "pages": [],
        "comment": format!("snapshot {}", m.name),
    });
    let head = serde_json::to_string(&head).map_err(|e| io(e.into()))?;
    // Open the object, then stream the entries array into it.
    write!(out, "{{\"log\":{},\"entries\":[", head.strip_suffix('}').unwrap_or(&head)).map_err(io)?;
    let mut n = 0u64;
    for x in store.exchanges(&m) {
        let x = x?;
        if n > 0 {
            out.write_all(b",").map_err(io)?;
        }
        let req_ct = header(&x.request.headers, "content-type").unwrap_or("").to_string();
        let resp_ct = header(&x.response.headers, "content-type").unwrap_or("").to_string();
        let mut request = json!({
            "method": x.request.method,
            "url": websocket::export_url(&x),
            "httpVersion": x.request.version,
            "headers": headers_json(&x.request.headers),
            "queryString": query_json(&x.request.url),
            "cookies": request_cookies(&x.request.headers),
            "headersSize": -1,
            "bodySize": x.request.body.as_ref().map_or(0, |b| b.size as i64),
        });
        if let Some(b) = &x.request.body {
            let (text, enc) = body_json(store, &b.hash, &req_ct)?;
            let mut pd = json!({"mimeType": req_ct, "text": text});
            if let Some(enc) = enc {
                pd["encoding"] = json!(enc);
            }
            request["postData"] = pd;
        }
        let mut content = json!({
            "size": x.response.body.as_ref().map_or(-1, |b| b.size as i64),
            "mimeType": resp_ct,
        });
        if let Some(b) = &x.response.body {
            let (text, enc) = body_json(store, &b.hash, &resp_ct)?;
            content["text"] = text;
            if let Some(enc) = enc {
                content["encoding"] = json!(enc);
            }
        }
        let mut entry = json!({
            "startedDateTime": format_time(x.started_ms),
            "time": x.timings.total_ms.unwrap_or(0.0),
            "request": request,
            "response": {
                "status": x.response.status,
                "statusText": "",
                "httpVersion": x.response.version,
                "headers": headers_json(&x.response.headers),
                "cookies": response_cookies(&x.response.headers),
                "content": content,
                "redirectURL": header(&x.response.headers, "location").unwrap_or(""),
                "headersSize": -1,
                "bodySize": -1,
            },
            "cache": {},
            "timings": {
                "send": 0,
                "wait": x.timings.wait_ms.unwrap_or(-1.0),
                "receive": x.timings.receive_ms.unwrap_or(-1.0),
            },
            "serverIPAddress": x.server_addr.clone().unwrap_or_default(),
            "_webfreeze": {
                "seq": x.seq,
                "alpn": x.alpn,
                "truncated": x.flags.truncated,
                "decode_failed": x.flags.decode_failed,
                "body_not_captured": x.flags.body_not_captured,
            },
        });
        if x.flags.probe {
            entry["_webfreeze"]["probe"] = true.into();
        }
        websocket::export_fields(store, &x, &mut entry)?;
        serde_json::to_writer(&mut out, &entry).map_err(|e| io(e.into()))?;
        n += 1;
    }
    out.write_all(b"]}}\n").map_err(io)?;
    out.flush().map_err(io)?;
    Ok(n)
}

/// One request of a run as its wire log keeps it (`trajectory::wire`), for [`export_records`]: what the
/// browser sent, the status it got, and the stored body it was answered with, when it came from a
/// recorded exchange.
#[derive(Debug, Clone)]
pub struct WireRecord<'a> {
    /// Method.
    pub method: &'a str,
    /// Absolute URL.
    pub url: &'a str,
    /// Request headers.
    pub request_headers: Vec<Header>,
    /// Request body as text.
    pub request_body: Option<&'a str>,
    /// Status (0: none).
    pub status: u16,
    /// Response headers.
    pub response_headers: Vec<Header>,
    /// The response body's hash in the store.
    pub response_body: Option<&'a str>,
    /// The response body as text, when no store holds it (a live run's wire log).
    pub response_text: Option<&'a str>,
    /// The label of the control that sent it, when the run knew it: `_webfreeze.control`
    /// ([`super::labels`]), read back by `webfreeze guard check`.
    pub control: Option<&'a str>,
}

/// A run's own requests (its wire log) as HAR 1.2, so a benchmark's own evaluator (WebArena-Verified's reads
/// HAR) scores what the run sent. Response bodies come from the store by hash; a request with no response
/// gets status 0.
pub fn export_records<W: Write>(
    store: &Store,
    records: &[WireRecord<'_>],
    comment: &str,
    out: W,
    file: &str,
) -> Result<u64, ArchiveError> {
    let io = |e: std::io::Error| ArchiveError::Io { file: file.to_string(), source: e };
    let mut entries = Vec::with_capacity(records.len());
    for r in records {
        let req_ct = header(&r.request_headers, "content-type").unwrap_or("").to_string();
        let resp_ct = header(&r.response_headers, "content-type").unwrap_or("").to_string();
        let mut request = json!({
            "method": r.method,
            "url": r.url,
            "httpVersion": "HTTP/1.1",
            "headers": headers_json(&r.request_headers),
            "queryString": query_json(r.url),
            "cookies": request_cookies(&r.request_headers),
            "headersSize": -1,
            "bodySize": r.request_body.map_or(0, |b| b.len() as i64),
        });
        if let Some(b) = r.request_body {
            request["postData"] = json!({"mimeType": req_ct, "text": b});
        }
        let mut content = json!({"size": -1, "mimeType": resp_ct});
        if let Some(text) = r.response_text {
            content["text"] = json!(text);
        } else if let Some(hash) = r.response_body {
            let (text, enc) = body_json(store, hash, &resp_ct)?;
            content["text"] = text;
            if let Some(enc) = enc {
                content["encoding"] = json!(enc);
            }
        }
        let mut entry = json!({
            "startedDateTime": format_time(0),
            "time": 0,
            "request": request,
            "response": {
                "status": r.status,
                "statusText": "",
                "httpVersion": "HTTP/1.1",
                "headers": headers_json(&r.response_headers),
                "cookies": response_cookies(&r.response_headers),
                "content": content,
                "redirectURL": header(&r.response_headers, "location").unwrap_or(""),
                "headersSize": -1,
                "bodySize": -1,
            },
            "cache": {},
            "timings": {"send": 0, "wait": -1, "receive": -1},
        });
        if let Some(label) = r.control {
            entry["_webfreeze"] = json!({ super::labels::CONTROL_FIELD: label });
        }
        entries.push(entry);
    }
    let har = json!({"log": {
        "version": "1.2",
        "creator": {"name": "webfreeze", "version": env!("CARGO_PKG_VERSION")},
        "pages": [],
        "comment": comment,
        "entries": entries,
    }});
    let mut out = std::io::BufWriter::new(out);
    serde_json::to_writer(&mut out, &har).map_err(|e| io(e.into()))?;
    out.write_all(b"\n").map_err(io)?;
    out.flush().map_err(io)?;
    Ok(records.len() as u64)
}
