//! WARC and WACZ import: records become exchanges of one new snapshot.
//!
//! - `response` records (and `resource` records of http(s) URIs) are paired with their `request` record by
//!   `WARC-Concurrent-To` either way, else by target URI and date. Pairing looks at a window of
//!   [`WINDOW`] unpaired records, so memory stays bounded whatever the file size: a response whose request
//!   does not turn up within the window is stored with a synthesised `GET`.
//! - `revisit` records take the body of the record they point at: by `WARC-Payload-Digest`, then by
//!   `WARC-Refers-To-Target-URI` (or their own URI). The lookup tables hold the last [`REVISIT_TABLE`]
//!   payloads (~200 bytes each), never bodies. A revisit read before its original waits (its head only,
//!   [`MAX_DEFERRED`] at most, its sequence number reserved at its place) and is resolved against what
//!   came after it when the import finishes; one whose original never turns up is kept as "body not
//!   captured".
//! - HTTP bodies are de-chunked when the block is chunked (a `Transfer-Encoding: chunked` header over an
//!   already de-chunked body, which some writers produce, is read as is) and decoded from their
//!   Content-Encoding (gzip, deflate, br, zstd) into the store as they stream.
//! - Record types that carry no exchange (`warcinfo`, `metadata`, `conversion`, ...) are counted and skipped;
//!   damaged records are reported with their offset and the rest is imported.
//!
//! Size: one importer whose handlers (response, resource, revisit, request) share its pairing window and
//! revisit tables; the HTTP parsing they use is `http.rs`.
//!
//! The HTTP heads inside records are parsed by hand rather than with `httparse`: archived heads carry
//! what live servers sent years ago (obsolete folding, bytes outside the token grammar, `HTTP/2` status
//! lines) and a strict parser would drop those records.

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, BufRead, Read, Seek};

use snapshots::format::{ExchangeFlags, Header, RequestRecord, ResponseRecord, Timings};
use snapshots::{request_key, BodyRef, Exchange, NewSnapshot, Seed, SnapshotSource, SnapshotWriter, Store};

use super::http::{body_reader, header, parse_date_ms, parse_status_line, read_http_head};
use super::record::{read_records, Handled, RecordHead};
use super::{ImportOptions, WarcImportReport};
use crate::ArchiveError;
use recorder::Decoding;

/// Unpaired records kept while looking for their partner.
pub(crate) const WINDOW: usize = 128;
/// Payloads remembered for revisit records, by digest and by URI (each least-recently-used first out):
/// about 200 bytes an entry, so at most ~100 MB whatever the archive's size. A revisit of an original
/// further back is kept as "body not captured" and counted as unresolved.
const REVISIT_TABLE: std::num::NonZeroUsize = match std::num::NonZeroUsize::new(250_000) {
    Some(n) => n,
    None => unreachable!(),
};
/// Revisits kept waiting for an original later in the archive (heads only, a few hundred bytes each:
/// ~50 MB at most); past it a revisit with no original so far is stored as "body not captured" at once.
const MAX_DEFERRED: usize = 100_000;
/// Largest request body kept in memory for the request key.
const MAX_REQUEST_BODY: u64 = 64 << 20;

/// A stored payload, for revisit records.
#[derive(Clone)]
struct Payload {
    body: BodyRef,
    content_encoding: Option<String>,
    decode_failed: bool,
    content_type: Option<String>,
}

struct Resp {
    id: String,
    concurrent: Vec<String>,
    uri: String,
    date: String,
    started_ms: i64,
    status: u16,
    version: String,
    headers: Vec<Header>,
    body: Option<BodyRef>,
    content_encoding: Option<String>,
    flags: ExchangeFlags,
    server_addr: Option<String>,
    /// A revisit whose original was not read yet: where to look for it once the archive has been read.
    revisit: Option<RevisitRef>,
}

/// What a revisit names its original by (payload digest, then URIs), kept to resolve it later.
struct RevisitRef {
    digest: Option<String>,
    uris: Vec<[u8; 16]>,
}

impl Resp {
    /// What the record's own fields say (id, pairing, date, URI, server address); a 200 with no body
    /// until the caller fills in the HTTP part.
    fn of_record(head: &RecordHead, uri: String) -> Resp {
        Resp {
            id: head.get("WARC-Record-ID").unwrap_or("").trim().to_string(),
            concurrent: concurrent(head),
            date: head.get("WARC-Date").unwrap_or("").trim().to_string(),
            started_ms: head.get("WARC-Date").and_then(parse_date_ms).unwrap_or(0),
            uri,
            status: 200,
            version: "unknown".into(),
            headers: Vec::new(),
            body: None,
            content_encoding: None,
            flags: ExchangeFlags::default(),
            server_addr: head.get("WARC-IP-Address").map(|s| s.trim().to_string()).filter(|s| !s.is_empty()),
            revisit: None,
        }
    }
}

struct Req {
    id: String,
    concurrent: Vec<String>,
    uri: String,
    date: String,
    method: String,
    version: String,
    headers: Vec<Header>,
    body: Vec<u8>,
}

enum Pending {
    Resp(Resp),
    Req(Req),
}

/// Imports one or more WARC streams into one snapshot.
pub(crate) struct Importer<'s> {
    store: &'s Store,
    writer: SnapshotWriter,
    pub(crate) report: WarcImportReport,
    pending: VecDeque<Pending>,
    by_digest: lru::LruCache<String, Payload>,
    by_uri: lru::LruCache<[u8; 16], Payload>,
    first_ms: Option<i64>,
    /// Revisits whose original had not been read when they were, with the sequence number reserved at
    /// their place in the archive: resolved against what came after them when the import finishes.
    deferred: Vec<(Exchange, RevisitRef)>,
}

impl<'s> Importer<'s> {
    pub(crate) fn new(store: &'s Store, opts: &ImportOptions) -> Result<Self, ArchiveError> {
        let writer = store.create_snapshot(NewSnapshot {
            name: opts.snapshot.clone(),
            created_ms: opts.now_ms,
            seed: Seed { start_ms: opts.now_ms, time_zone: "UTC".into() },
            source: SnapshotSource::Warc { file: opts.source_file.clone() },
            labels: BTreeMap::new(),
        })?;
        Ok(Self {
            store,
            writer,
            report: WarcImportReport::default(),
            pending: VecDeque::new(),
            by_digest: lru::LruCache::new(REVISIT_TABLE),
            by_uri: lru::LruCache::new(REVISIT_TABLE),
            first_ms: None,
            deferred: Vec::new(),
        })
    }

    /// Reads one WARC stream (plain or gzip). `file` names it in damage reports.
    pub(crate) fn read<R: Read>(
        &mut self,
        reader: R,
        file: &str,
        progress: &mut dyn FnMut(&WarcImportReport),
    ) -> Result<(), ArchiveError> {
        self.report.warc_files += 1;
        let mut damage = Vec::new();
        let r = read_records::<_, ArchiveError>(
            reader,
            &mut |head, block, at| {
                let h = self.record(head, block, at);
                progress(&self.report);
                h
            },
            &mut |at, why| damage.push((at, why)),
        );
        for (at, why) in damage {
            self.report.damaged.push(super::Damage { file: file.to_string(), offset: at, reason: why });
        }
        r
    }

    /// Flushes what is still unpaired and seals the snapshot.
    pub(crate) fn finish(mut self, now_ms: i64) -> Result<WarcImportReport, ArchiveError> {
        while let Some(p) = self.pending.pop_front() {
            self.emit_unpaired(p)?;
        }
        // Revisits read before their original: the original may have come later in the archive.
        for (mut x, r) in std::mem::take(&mut self.deferred) {
            let found = r
                .digest
                .as_deref()
                .and_then(|d| self.by_digest.get(d).cloned())
                .or_else(|| r.uris.iter().find_map(|u| self.by_uri.get(u).cloned()));
            if let Some(p) = found {
                self.report.revisits_resolved += 1;
                self.report.revisits_resolved_forward += 1;
                self.report.revisits_unresolved -= 1;
                x.flags.body_not_captured = false;
                x.flags.decode_failed = p.decode_failed;
                if x.response.status == 304 {
                    x.response.status = 200;
                }
                if header(&x.response.headers, "content-type").is_none() {
                    if let Some(ct) = &p.content_type {
                        x.response.headers.push(Header::new("Content-Type", ct.clone()));
                    }
                }
                x.response.body = Some(p.body);
                x.response.content_encoding = p.content_encoding;
            }
            self.append(x)?;
        }
        self.writer.finalize(now_ms)?;
        if let Some(start) = self.first_ms.filter(|s| *s > 0) {
            let mut m = self.store.manifest(&self.report_name())?;
            m.seed.start_ms = start;
            self.store.put_manifest(&m)?;
        }
        Ok(self.report)
    }

    /// Abandons the import: nothing half-imported stays visible.
    pub(crate) fn abandon(self, now_ms: i64) {
        let name = self.report_name();
        let _ = self.writer.interrupt(now_ms);
        let _ = self.store.remove(&name);
    }

    fn report_name(&self) -> String {
        self.writer.manifest().map(|m| m.name).unwrap_or_default()
    }

    fn record(
        &mut self,
        head: &RecordHead,
        block: &mut io::Take<&mut dyn BufRead>,
        _at: u64,
    ) -> Result<Handled, ArchiveError> {
        self.report.records += 1;
        let kind = head.record_type();
        *self
            .report
            .record_types
            .entry(if kind.is_empty() { "(none)".into() } else { kind.clone() })
            .or_insert(0) += 1;
        let uri = head.uri("WARC-Target-URI").unwrap_or_default();
        let is_http = uri.starts_with("http://") || uri.starts_with("https://");
        match kind.as_str() {
            "response" | "resource" | "revisit" | "request" if !is_http => {
                self.report.skipped_not_http += 1;
                Ok(Handled::Ok)
            }
            "response" => self.response(head, block, uri),
            "resource" => self.resource(head, block, uri),
            "revisit" => self.revisit(head, block, uri),
            "request" => self.request(head, block, uri),
            _ => Ok(Handled::Ok),
        }
    }

    fn response(
        &mut self,
        head: &RecordHead,
        block: &mut io::Take<&mut dyn BufRead>,
        uri: String,
    ) -> Result<Handled, ArchiveError> {
        let (version, status, headers) = match response_head("response", block) {
            Ok(Some(h)) => h,
            Ok(None) => return Ok(Handled::Damaged("response record without an HTTP head".into())),
            Err(damaged) => return Ok(damaged),
        };
        let content_encoding = header(&headers, "content-encoding").map(str::to_string);
        let chunked =
            header(&headers, "transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
        let content_type = header(&headers, "content-type").map(str::to_string);
        let (body, flags) =
            self.store_payload(head, &uri, block, chunked, content_encoding.clone(), content_type)?;
        let resp = Resp {
            status,
            version,
            headers,
            body: Some(body),
            content_encoding,
            flags,
            ..Resp::of_record(head, uri)
        };
        self.add_response(resp)?;
        Ok(Handled::Ok)
    }

    fn resource(
        &mut self,
        head: &RecordHead,
        block: &mut io::Take<&mut dyn BufRead>,
        uri: String,
    ) -> Result<Handled, ArchiveError> {
        let ct = head.get("Content-Type").map(|s| s.trim().to_string());
        let (body, flags) = self.store_payload(head, &uri, block, false, None, ct.clone())?;
        let resp = Resp {
            headers: ct.into_iter().map(|ct| Header::new("Content-Type", ct)).collect(),
            body: Some(body),
            flags,
            server_addr: None,
            ..Resp::of_record(head, uri)
        };
        self.add_response(resp)?;
        Ok(Handled::Ok)
    }

    fn revisit(
        &mut self,
        head: &RecordHead,
        block: &mut io::Take<&mut dyn BufRead>,
        uri: String,
    ) -> Result<Handled, ArchiveError> {
        let (version, status, mut headers) = match response_head("revisit", block) {
            Ok(Some(h)) => h,
            Ok(None) => ("unknown".to_string(), 200, Vec::new()),
            Err(damaged) => return Ok(damaged),
        };
        let mut original =
            head.get("WARC-Payload-Digest").and_then(|d| self.by_digest.get(d.trim()).cloned());
        if original.is_none() {
            let refers = head.uri("WARC-Refers-To-Target-URI").unwrap_or_else(|| uri.clone());
            original = self.by_uri.get(&uri_key(&refers)).cloned();
        }
        if original.is_none() {
            original = self.by_uri.get(&uri_key(&uri)).cloned();
        }
        // A "server not modified" revisit answers 304; the body it stands for was a full answer.
        let status = if status == 304 && original.is_some() { 200 } else { status };
        let mut flags = ExchangeFlags::default();
        let (body, content_encoding) = match original {
            Some(p) => {
                self.report.revisits_resolved += 1;
                flags.decode_failed = p.decode_failed;
                if header(&headers, "content-type").is_none() {
                    if let Some(ct) = &p.content_type {
                        headers.push(Header::new("Content-Type", ct.clone()));
                    }
                }
                (Some(p.body), p.content_encoding)
            }
            None => {
                self.report.revisits_unresolved += 1;
                flags.body_not_captured = true;
                (None, None)
            }
        };
        let revisit = flags.body_not_captured.then(|| {
            let refers = head.uri("WARC-Refers-To-Target-URI");
            RevisitRef {
                digest: head
                    .get("WARC-Payload-Digest")
                    .map(|d| d.trim().to_string())
                    .filter(|d| !d.is_empty()),
                uris: refers.iter().chain(std::iter::once(&uri)).map(|u| uri_key(u)).collect(),
            }
        });
        let resp = Resp {
            status,
            version,
            headers,
            body,
            content_encoding,
            flags,
            revisit,
            ..Resp::of_record(head, uri)
        };
        self.add_response(resp)?;
        Ok(Handled::Ok)
    }

    fn request(
        &mut self,
        head: &RecordHead,
        block: &mut io::Take<&mut dyn BufRead>,
        uri: String,
    ) -> Result<Handled, ArchiveError> {
        let http = match read_http_head(block) {
            Ok(Some(h)) => h,
            Ok(None) => return Ok(Handled::Damaged("request record without an HTTP head".into())),
            Err(e) => return Ok(Handled::Damaged(format!("request record: {e}"))),
        };
        let mut parts = http.first.split_whitespace();
        let method = parts.next().unwrap_or("GET").to_ascii_uppercase();
        let _target = parts.next();
        let version = parts.next().unwrap_or("unknown").to_string();
        let chunked = header(&http.headers, "transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
        let mut body = Vec::new();
        let r = match body_reader(block, chunked) {
            Ok(src) => src.take(MAX_REQUEST_BODY).read_to_end(&mut body),
            Err(e) => Err(e),
        };
        if let Err(e) = r {
            return Ok(Handled::Damaged(format!("request record body: {e}")));
        }
        let req = Req {
            id: head.get("WARC-Record-ID").unwrap_or("").trim().to_string(),
            concurrent: concurrent(head),
            date: head.get("WARC-Date").unwrap_or("").trim().to_string(),
            uri,
            method,
            version,
            headers: http.headers,
            body,
        };
        // Its response may already be waiting.
        let found = self
            .find_pending(|p| matches!(p, Pending::Resp(r) if pairs_by_id(r, &req)))
            .or_else(|| self.find_pending(|p| matches!(p, Pending::Resp(r) if pairs_by_uri(r, &req))));
        if let Some(i) = found {
            if let Some(Pending::Resp(r)) = self.pending.remove(i) {
                self.report.paired += 1;
                return self.emit(r, Some(req)).map(|_| Handled::Ok);
            }
        }
        self.push_pending(Pending::Req(req))?;
        Ok(Handled::Ok)
    }

    fn add_response(&mut self, resp: Resp) -> Result<(), ArchiveError> {
        let found = self
            .find_pending(|p| matches!(p, Pending::Req(q) if pairs_by_id(&resp, q)))
            .or_else(|| self.find_pending(|p| matches!(p, Pending::Req(q) if pairs_by_uri(&resp, q))));
        if let Some(i) = found {
            if let Some(Pending::Req(q)) = self.pending.remove(i) {
                self.report.paired += 1;
                return self.emit(resp, Some(q));
            }
        }
        self.push_pending(Pending::Resp(resp))
    }

    /// Index of the oldest pending record the predicate accepts.
    fn find_pending(&self, pred: impl Fn(&Pending) -> bool) -> Option<usize> {
        self.pending.iter().position(pred)
    }

    fn push_pending(&mut self, p: Pending) -> Result<(), ArchiveError> {
        self.pending.push_back(p);
        while self.pending.len() > WINDOW {
            if let Some(old) = self.pending.pop_front() {
                self.emit_unpaired(old)?;
            }
        }
        Ok(())
    }

    fn emit_unpaired(&mut self, p: Pending) -> Result<(), ArchiveError> {
        match p {
            Pending::Resp(r) => {
                self.report.without_request += 1;
                self.emit(r, None)
            }
            Pending::Req(_) => {
                self.report.requests_without_response += 1;
                Ok(())
            }
        }
    }

    fn emit(&mut self, r: Resp, q: Option<Req>) -> Result<(), ArchiveError> {
        let (method, req_version, req_headers, req_body) = match q {
            Some(q) => (q.method, q.version, q.headers, q.body),
            None => ("GET".to_string(), "unknown".to_string(), Vec::new(), Vec::new()),
        };
        let ct = header(&req_headers, "content-type").map(str::to_string);
        let key = match request_key(&method, &r.uri, ct.as_deref(), &req_body) {
            Ok(k) => k,
            Err(e) => {
                self.report.skipped.push((r.uri.clone(), e.to_string()));
                return Ok(());
            }
        };
        let req_body = if req_body.is_empty() { None } else { Some(self.store.put_blob(&req_body)?) };
        if r.started_ms > 0 {
            self.first_ms = Some(self.first_ms.map_or(r.started_ms, |f| f.min(r.started_ms)));
        }
        let x = Exchange {
            seq: u64::MAX,
            started_ms: r.started_ms,
            key: key.hex(),
            request: RequestRecord {
                method,
                url: r.uri,
                version: req_version,
                headers: req_headers,
                body: req_body,
            },
            response: ResponseRecord {
                status: r.status,
                version: r.version,
                headers: r.headers,
                body: r.body,
                content_encoding: r.content_encoding,
            },
            timings: Timings::default(),
            alpn: None,
            server_addr: r.server_addr,
            flags: r.flags,
            websocket: None,
        };
        let seq = self.writer.reserve_seq()?;
        let x = Exchange { seq, ..x };
        match r.revisit {
            // Kept (head only, no body) until the archive has been read, within a bound.
            Some(rr) if self.deferred.len() < MAX_DEFERRED => {
                self.deferred.push((x, rr));
                Ok(())
            }
            _ => self.append(x),
        }
    }

    fn append(&mut self, x: Exchange) -> Result<(), ArchiveError> {
        if x.flags.body_not_captured {
            self.report.body_not_captured += 1;
        }
        self.writer.append(x)?;
        self.report.imported += 1;
        Ok(())
    }

    /// Stores a response or resource record's payload (see [`Self::store_body`]) and remembers it for the
    /// revisits that name it; the exchange's flags say whether it was cut short or failed to decode.
    fn store_payload(
        &mut self,
        head: &RecordHead,
        uri: &str,
        block: &mut io::Take<&mut dyn BufRead>,
        chunked: bool,
        content_encoding: Option<String>,
        content_type: Option<String>,
    ) -> Result<(BodyRef, ExchangeFlags), ArchiveError> {
        let mut flags =
            ExchangeFlags { truncated: head.get("WARC-Truncated").is_some(), ..Default::default() };
        let (body, decode_failed) =
            self.store_body(block, chunked, content_encoding.as_deref(), &mut flags)?;
        flags.decode_failed = decode_failed;
        self.remember(
            head,
            uri,
            Payload { body: body.clone(), content_encoding, decode_failed, content_type },
        );
        Ok((body, flags))
    }

    fn remember(&mut self, head: &RecordHead, uri: &str, p: Payload) {
        if let Some(d) = head.get("WARC-Payload-Digest").map(str::trim).filter(|d| !d.is_empty()) {
            if !self.by_digest.contains(d) {
                self.by_digest.put(d.to_string(), p.clone());
            }
        }
        self.by_uri.put(uri_key(uri), p);
    }

    /// Streams an HTTP body into the store: de-chunked if it is chunked, decoded from its content-encoding.
    /// A read error keeps what arrived and flags the exchange truncated.
    fn store_body(
        &mut self,
        block: &mut io::Take<&mut dyn BufRead>,
        chunked: bool,
        content_encoding: Option<&str>,
        flags: &mut ExchangeFlags,
    ) -> Result<(BodyRef, bool), ArchiveError> {
        let mut decoding = Decoding::new(self.store, content_encoding);
        let mut buf = vec![0u8; 64 * 1024];
        {
            let mut src = match body_reader(&mut *block, chunked) {
                Ok(src) => src,
                Err(_) => {
                    flags.truncated = true;
                    Box::new(io::empty())
                }
            };
            loop {
                match src.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => decoding.write(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(_) => {
                        flags.truncated = true;
                        break;
                    }
                }
            }
        }
        if block.limit() > 0 {
            // The block ended before its Content-Length: the record was cut short.
            flags.truncated = true;
        }
        Ok(decoding.finish()?)
    }
}

/// A response or revisit record's HTTP head: version, status and headers; `None` when the block has no
/// head; a damaged head is the record's [`Handled::Damaged`], naming the `kind` of record.
fn response_head(kind: &str, block: &mut dyn BufRead) -> Result<Option<(String, u16, Vec<Header>)>, Handled> {
    let http = match read_http_head(block) {
        Ok(Some(h)) => h,
        Ok(None) => return Ok(None),
        Err(e) => return Err(Handled::Damaged(format!("{kind} record: {e}"))),
    };
    match parse_status_line(&http.first) {
        Some((version, status)) => Ok(Some((version, status, http.headers))),
        None => Err(Handled::Damaged(format!("{kind} record: bad status line {:?}", http.first))),
    }
}

/// A request and a response that name each other.
fn pairs_by_id(r: &Resp, q: &Req) -> bool {
    (!r.id.is_empty() && q.concurrent.contains(&r.id)) || (!q.id.is_empty() && r.concurrent.contains(&q.id))
}

/// A request and a response for the same URI at the same time (writers that omit WARC-Concurrent-To).
fn pairs_by_uri(r: &Resp, q: &Req) -> bool {
    r.uri == q.uri && !r.date.is_empty() && r.date == q.date
}

fn concurrent(head: &RecordHead) -> Vec<String> {
    head.fields
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case("WARC-Concurrent-To"))
        .map(|(_, v)| v.trim().to_string())
        .collect()
}

fn uri_key(uri: &str) -> [u8; 16] {
    let h = blake3::hash(uri.as_bytes());
    let mut k = [0u8; 16];
    k.copy_from_slice(&h.as_bytes()[..16]);
    k
}

/// Imports every `archive/*.warc[.gz]` of a WACZ (a zip) into the importer, in name order.
pub(crate) fn read_wacz<R: Read + Seek>(
    importer: &mut Importer<'_>,
    reader: R,
    file: &str,
    progress: &mut dyn FnMut(&WarcImportReport),
) -> Result<(), ArchiveError> {
    let mut zip = zip::ZipArchive::new(reader)
        .map_err(|e| ArchiveError::Malformed { file: file.to_string(), detail: format!("not a zip: {e}") })?;
    let mut names: Vec<String> = zip
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.into_owned()))
        .filter(|n| n.starts_with("archive/") && (n.ends_with(".warc") || n.ends_with(".warc.gz")))
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(ArchiveError::Malformed {
            file: file.to_string(),
            detail: "a zip without archive/*.warc(.gz): not a WACZ".into(),
        });
    }
    for name in names {
        let entry = zip.by_name(&name).map_err(|e| ArchiveError::Malformed {
            file: file.to_string(),
            detail: format!("{name}: {e}"),
        })?;
        importer.read(entry, &format!("{file}!{name}"), progress)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        for (s, ms) in [
            ("2026-01-02T03:04:05Z", Some(1_767_323_045_000)),
            ("2026-01-02T03:04:05.250Z", Some(1_767_323_045_250)),
            ("20260102030405", Some(1_767_323_045_000)),
            ("yesterday", None),
        ] {
            assert_eq!(parse_date_ms(s), ms, "{s}");
        }
    }

    #[test]
    fn chunked_bodies_are_recognised_across_buffer_boundaries() {
        // (wire, head says chunked, decoded)
        let cases: [(&[u8], bool, &[u8]); 5] = [
            (b"1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n", true, b"abcdefghijklmnopqrstuvwxyz"),
            (b"5;ext=1\r\nhello\r\n0\r\n\r\n", true, b"hello"),
            (b"hello, not chunked", true, b"hello, not chunked"),
            (b"xyz\r\nnot a chunk", true, b"xyz\r\nnot a chunk"),
            (b"5\r\nhello\r\n0\r\n\r\n", false, b"5\r\nhello\r\n0\r\n\r\n"),
        ];
        for (wire, chunked, want) in cases {
            // A 2-byte buffer: the size line always straddles refills.
            let mut r = io::BufReader::with_capacity(2, wire);
            let mut out = Vec::new();
            let got = body_reader(&mut r, chunked).unwrap().read_to_end(&mut out);
            assert!(got.is_ok(), "{}: {got:?}", String::from_utf8_lossy(wire));
            assert_eq!(out, want, "{}", String::from_utf8_lossy(wire));
        }
    }

    #[test]
    fn status_lines() {
        for (l, want) in [
            ("HTTP/1.1 200 OK", Some(("HTTP/1.1", 200))),
            ("HTTP/2 404", Some(("HTTP/2", 404))),
            ("http/1.0 301 Moved", Some(("http/1.0", 301))),
            ("ICY 200 OK", None),
            ("HTTP/1.1 abc", None),
            ("HTTP/1.1 42 x", None),
        ] {
            assert_eq!(parse_status_line(l), want.map(|(v, s)| (v.to_string(), s)), "{l}");
        }
    }
}
