//! HAR import: streamed entry by entry, lenient about the quirks real tools write (the module's doc).

use std::collections::BTreeMap;
use std::fmt;
use std::io::{BufRead, BufReader, Read};

use base64::Engine as _;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use snapshots::format::{ExchangeFlags, Header, RequestRecord, ResponseRecord, Timings};
use snapshots::{request_key, Exchange, NewSnapshot, Seed, SnapshotSource, Store, StoreError};

use super::{header, websocket};
use crate::{ArchiveError, ImportOptions};

/// Outcome of an import.
#[derive(Debug, Clone, Default)]
pub struct ImportReport {
    /// Entries in the file.
    pub entries: u64,
    /// Entries stored as exchanges.
    pub imported: u64,
    /// Entries skipped, with the reason (index in the file, reason).
    pub skipped: Vec<(u64, String)>,
    /// Imported exchanges with a response body.
    pub with_body: u64,
    /// Imported exchanges whose body was not in the file.
    pub body_not_captured: u64,
    /// Entries with status 0 / -1 but a captured body (served from the capturing browser's cache or a
    /// push), imported as 200.
    pub status_inferred: u64,
    /// WebSocket connections imported with their messages.
    pub websockets: u64,
    /// WebSocket messages left out (an unknown type or opcode, binary data that is not base64).
    pub websocket_messages_skipped: u64,
}

/// Import a HAR stream into a new snapshot. `progress` is called after each entry with the count so far.
pub fn import<R: Read>(
    store: &Store,
    reader: R,
    opts: &ImportOptions,
    mut progress: impl FnMut(u64),
) -> Result<ImportReport, ArchiveError> {
    let mut reader = BufReader::with_capacity(1 << 16, reader);
    // Skip a UTF-8 byte-order mark.
    let buf =
        reader.fill_buf().map_err(|e| ArchiveError::Io { file: opts.source_file.clone(), source: e })?;
    if buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
        reader.consume(3);
    }
    let writer = store.create_snapshot(NewSnapshot {
        name: opts.snapshot.clone(),
        created_ms: opts.now_ms,
        seed: Seed { start_ms: opts.now_ms, time_zone: "UTC".into() },
        source: SnapshotSource::Har { file: opts.source_file.clone() },
        labels: BTreeMap::new(),
    })?;
    let mut report = ImportReport::default();
    let mut first_start: Option<i64> = None;
    let mut store_err: Option<StoreError> = None;
    let mut seq = 0u64;
    {
        let mut on_entry = |entry: Value| -> bool {
            let index = report.entries;
            report.entries += 1;
            match entry_to_exchange(store, &entry, seq) {
                Ok(Ok((x, inferred, ws_skipped))) => {
                    if inferred {
                        report.status_inferred += 1;
                    }
                    if x.websocket.is_some() {
                        report.websockets += 1;
                    }
                    report.websocket_messages_skipped += ws_skipped;
                    first_start = Some(first_start.map_or(x.started_ms, |s: i64| s.min(x.started_ms)));
                    if x.response.body.is_some() {
                        report.with_body += 1;
                    }
                    if x.flags.body_not_captured {
                        report.body_not_captured += 1;
                    }
                    if let Err(e) = writer.append(x) {
                        store_err = Some(e);
                        return false;
                    }
                    seq += 1;
                    report.imported += 1;
                }
                Ok(Err(skip)) => report.skipped.push((index, skip.to_string())),
                Err(e) => {
                    store_err = Some(e);
                    return false;
                }
            }
            progress(report.entries);
            true
        };
        let mut de = serde_json::Deserializer::from_reader(&mut reader);
        let parsed = RootSeed { on_entry: &mut on_entry, saw_entries: false }.deserialize(&mut de);
        match parsed {
            Ok(true) => {}
            Ok(false) => {
                let _ = writer.interrupt(opts.now_ms);
                let _ = store.remove(&opts.snapshot);
                return Err(ArchiveError::Malformed {
                    file: opts.source_file.clone(),
                    detail: "not a HAR file: no log.entries array".into(),
                });
            }
            Err(e) => {
                let _ = writer.interrupt(opts.now_ms);
                if let Some(se) = store_err {
                    return Err(se.into());
                }
                let _ = store.remove(&opts.snapshot);
                return Err(ArchiveError::Malformed {
                    file: opts.source_file.clone(),
                    detail: format!("not a HAR file: {e}"),
                });
            }
        }
    }
    if let Some(e) = store_err {
        let _ = writer.interrupt(opts.now_ms);
        return Err(e.into());
    }
    writer.finalize(opts.now_ms)?;
    // The page's clock at capture time is the earliest entry's start.
    if let Some(start) = first_start.filter(|s| *s > 0) {
        set_seed_start(store, &opts.snapshot, start)?;
    }
    Ok(report)
}

fn set_seed_start(store: &Store, name: &str, start_ms: i64) -> Result<(), StoreError> {
    let mut m = store.manifest(name)?;
    m.seed.start_ms = start_ms;
    store.put_manifest(&m)
}

/// Walks `{ "log": { ..., "entries": [ ... ] } }`, handing each entry to the callback as a JSON value.
struct RootSeed<'a, F> {
    on_entry: &'a mut F,
    saw_entries: bool,
}

impl<'de, F: FnMut(Value) -> bool> DeserializeSeed<'de> for RootSeed<'_, F> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, F: FnMut(Value) -> bool> Visitor<'de> for RootSeed<'_, F> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a HAR object with a `log`")
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<bool, A::Error> {
        while let Some(k) = map.next_key::<String>()? {
            if k == "log" {
                self.saw_entries |= map.next_value_seed(LogSeed { on_entry: self.on_entry })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(self.saw_entries)
    }
}

struct LogSeed<'a, F> {
    on_entry: &'a mut F,
}

impl<'de, F: FnMut(Value) -> bool> DeserializeSeed<'de> for LogSeed<'_, F> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, F: FnMut(Value) -> bool> Visitor<'de> for LogSeed<'_, F> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the HAR `log` object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let mut saw = false;
        while let Some(k) = map.next_key::<String>()? {
            if k == "entries" {
                map.next_value_seed(EntriesSeed { on_entry: &mut *self.on_entry })?;
                saw = true;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(saw)
    }
}

struct EntriesSeed<'a, F> {
    on_entry: &'a mut F,
}

impl<'de, F: FnMut(Value) -> bool> DeserializeSeed<'de> for EntriesSeed<'_, F> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(Value) -> bool> Visitor<'de> for EntriesSeed<'_, F> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("the HAR `entries` array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<Value>()? {
            if !(self.on_entry)(v) {
                return Err(serde::de::Error::custom("stopped: the store failed"));
            }
        }
        Ok(())
    }
}

fn headers_of(v: Option<&Value>) -> Vec<Header> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|h| {
                    let name = h.get("name")?.as_str()?;
                    let value = match h.get("value") {
                        Some(Value::String(s)) => s.clone(),
                        Some(Value::Null) | None => String::new(),
                        Some(other) => other.to_string(),
                    };
                    Some(Header::new(name, value))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn version_of(v: Option<&Value>) -> String {
    match v.and_then(Value::as_str).map(str::trim) {
        Some("") | None => "unknown".into(),
        Some(s) => s.to_string(),
    }
}

fn parse_time_ms(s: &str) -> Option<i64> {
    let t = time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()?;
    i64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok()
}

fn num(v: Option<&Value>) -> Option<f64> {
    v.and_then(Value::as_f64).filter(|x| *x >= 0.0)
}

/// Map one HAR entry to an exchange, whether its status was inferred (0 with a body), and how many of its
/// WebSocket messages were left out. `Ok(Err(skip))` means "skip this entry", for that reason.
type Entry = (Exchange, bool, u64);

/// Why a HAR entry was not imported (the report lists each skipped entry with this, as text).
#[derive(Debug, thiserror::Error)]
enum Skip {
    /// The entry lacks a part every exchange needs.
    #[error("{0}")]
    Missing(&'static str),
    /// The browser got no response (status 0 or below without a body, or out of range).
    #[error("status {0} (no response received)")]
    NoResponse(i64),
    /// The request's key cannot be derived (its URL does not parse).
    #[error("{0}")]
    Key(snapshots::KeyError),
}

fn entry_to_exchange(store: &Store, e: &Value, seq: u64) -> Result<Result<Entry, Skip>, StoreError> {
    let req = match e.get("request") {
        Some(r) if r.is_object() => r,
        _ => return Ok(Err(Skip::Missing("no request object"))),
    };
    let resp = match e.get("response") {
        Some(r) if r.is_object() => r,
        _ => return Ok(Err(Skip::Missing("no response object"))),
    };
    let method = match req.get("method").and_then(Value::as_str).map(str::trim) {
        Some(m) if !m.is_empty() => m.to_ascii_uppercase(),
        _ => return Ok(Err(Skip::Missing("null or empty method"))),
    };
    let url = match req.get("url").and_then(Value::as_str) {
        Some(u) => websocket::import_url(u),
        None => return Ok(Err(Skip::Missing("no request url"))),
    };
    let has_text = resp.get("content").and_then(|c| c.get("text")).and_then(Value::as_str).is_some();
    let (status, inferred) = match resp.get("status").and_then(Value::as_i64) {
        Some(s) if (100..=999).contains(&s) => (s as u16, false),
        // Firefox: a resource served from its cache (or pushed) has status 0 and its body.
        Some(s) if s <= 0 && has_text => (200, true),
        Some(s) => return Ok(Err(Skip::NoResponse(s))),
        None => return Ok(Err(Skip::Missing("no response status"))),
    };
    let req_headers = headers_of(req.get("headers"));
    // Request body: postData.text, or the params of a form.
    let post = req.get("postData");
    let mut req_body: Option<Vec<u8>> = post.and_then(|p| p.get("text")).and_then(Value::as_str).map(|t| {
        if post.and_then(|p| p.get("encoding")).and_then(Value::as_str) == Some("base64") {
            base64::engine::general_purpose::STANDARD
                .decode(t.trim())
                .unwrap_or_else(|_| t.as_bytes().to_vec())
        } else {
            t.as_bytes().to_vec()
        }
    });
    if req_body.is_none() {
        if let Some(params) = post.and_then(|p| p.get("params")).and_then(Value::as_array) {
            let mut ser = form_urlencoded::Serializer::new(String::new());
            for p in params {
                if let Some(n) = p.get("name").and_then(Value::as_str) {
                    ser.append_pair(n, p.get("value").and_then(Value::as_str).unwrap_or(""));
                }
            }
            req_body = Some(ser.finish().into_bytes());
        }
    }
    let req_ct = header(&req_headers, "content-type")
        .map(str::to_string)
        .or_else(|| post.and_then(|p| p.get("mimeType")).and_then(Value::as_str).map(str::to_string));
    let key = match request_key(&method, &url, req_ct.as_deref(), req_body.as_deref().unwrap_or(&[])) {
        Ok(k) => k,
        Err(err) => return Ok(Err(Skip::Key(err))),
    };
    let req_body_ref = match &req_body {
        Some(b) if !b.is_empty() => Some(store.put_blob(b)?),
        _ => None,
    };

    let mut resp_headers = headers_of(resp.get("headers"));
    let content = resp.get("content");
    // Some tools keep the type only in content.mimeType: without it a browser refuses stylesheets and
    // scripts under strict MIME checking.
    if header(&resp_headers, "content-type").is_none() {
        if let Some(mime) = content.and_then(|c| c.get("mimeType")).and_then(Value::as_str) {
            if !mime.trim().is_empty() && mime.contains('/') {
                resp_headers.push(Header::new("content-type", mime.trim()));
            }
        }
    }
    let text = content.and_then(|c| c.get("text")).and_then(Value::as_str);
    let encoding = content.and_then(|c| c.get("encoding")).and_then(Value::as_str);
    let declared_size = content.and_then(|c| c.get("size")).and_then(Value::as_i64).unwrap_or(-1);
    let ours = e.get("_webfreeze");
    let mut flags = ExchangeFlags {
        truncated: ours.and_then(|o| o.get("truncated")).and_then(Value::as_bool).unwrap_or(false),
        decode_failed: ours.and_then(|o| o.get("decode_failed")).and_then(Value::as_bool).unwrap_or(false),
        body_not_captured: false,
        probe: ours.and_then(|o| o.get("probe")).and_then(Value::as_bool).unwrap_or(false),
    };
    let body_bytes: Option<Vec<u8>> = match (text, encoding) {
        (Some(t), Some("base64")) => match base64::engine::general_purpose::STANDARD.decode(t.trim()) {
            Ok(b) => Some(b),
            Err(_) => {
                flags.decode_failed = true;
                Some(t.as_bytes().to_vec())
            }
        },
        (Some(t), _) => Some(t.as_bytes().to_vec()),
        // No text: an empty body only where the status has none by nature (1xx, 204, 304) or is a
        // redirect. Tools write `size: 0` for bodies they did not capture (WebPageTest does), so a missing
        // text with size 0 on a 200 is "not captured", never a fabricated empty page.
        (None, _) if status < 200 || status == 204 || status == 304 || (300..400).contains(&status) => {
            Some(Vec::new())
        }
        (None, _) => None,
    };
    if body_bytes.is_none() {
        flags.body_not_captured = true;
    }
    if let (Some(b), true) = (&body_bytes, declared_size > 0) {
        // A body shorter than the size the tool declared was cut short (stubbed or truncated capture).
        if (b.len() as i64) < declared_size
            && encoding != Some("base64")
            && text.is_some_and(|t| t.is_ascii())
        {
            flags.truncated = true;
        }
    }
    let resp_body_ref = match &body_bytes {
        Some(b) => Some(store.put_blob(b)?),
        None => None,
    };
    let content_encoding = header(&resp_headers, "content-encoding").map(str::to_string);
    let timings = e.get("timings");
    let started = e.get("startedDateTime").and_then(Value::as_str).and_then(parse_time_ms).unwrap_or(0);
    let (ws, ws_skipped) = match websocket::import_log(store, e, status, started)? {
        Some((log, skipped)) => (Some(log), skipped),
        None => (None, 0),
    };
    Ok(Ok((
        Exchange {
            seq,
            started_ms: started,
            key: key.hex(),
            request: RequestRecord {
                method,
                url,
                version: version_of(req.get("httpVersion")),
                headers: req_headers,
                body: req_body_ref,
            },
            response: ResponseRecord {
                status,
                version: version_of(resp.get("httpVersion")),
                headers: resp_headers,
                body: resp_body_ref,
                content_encoding,
            },
            timings: Timings {
                wait_ms: num(timings.and_then(|t| t.get("wait"))),
                receive_ms: num(timings.and_then(|t| t.get("receive"))),
                total_ms: num(e.get("time")),
            },
            alpn: ours.and_then(|o| o.get("alpn")).and_then(Value::as_str).map(str::to_string),
            server_addr: e
                .get("serverIPAddress")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string),
            flags,
            websocket: ws,
        },
        inferred,
        ws_skipped,
    )))
}
