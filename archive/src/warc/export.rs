//! WARC 1.1 and WACZ export of a snapshot.
//!
//! Each exchange becomes a `response` record (HTTP head as the origin sent it, minus the framing headers
//! that no longer hold: the stored body is decoded, so `Content-Encoding`, `Transfer-Encoding` and
//! `Content-Length` are replaced by the stored body's length) followed by its `request` record
//! (`WARC-Concurrent-To` the response). A response whose body repeats an earlier one becomes a `revisit`
//! record (identical-payload-digest profile) pointing at the first. Exchanges whose body was never captured
//! are left out and counted: an empty body would replay as the wrong content.
//!
//! Digests are SHA-1 in base 32, the form every WARC reader expects. Record ids are derived from the
//! snapshot name and exchange sequence, and WACZ entries carry no wall-clock time, so exporting the same
//! snapshot twice gives the same bytes.
//!
//! Memory: one store chunk of body at a time, plus one line of CDXJ index and ~100 bytes of revisit table
//! per exported response (WACZ sorts its index before writing it).

use std::collections::HashMap;
use std::io::{self, Seek, Write};

use flate2::write::GzEncoder;
use sha1::Digest as _;
use snapshots::{Exchange, Manifest, Store};

use super::http::header;
use super::record::{write_head, CountingWriter};
use super::WarcExportReport;
use crate::ArchiveError;

/// One response or revisit record, for the CDXJ index and pages list.
struct IndexEntry {
    url: String,
    ts14: String,
    iso: String,
    mime: String,
    status: u16,
    digest: String,
    offset: u64,
    length: u64,
    revisit: bool,
    page: bool,
}

/// The first response that carried a body, for revisits of the same payload.
struct Original {
    uri: String,
    date: String,
    record_id: String,
    digest: String,
}

fn io_err(file: &str) -> impl Fn(io::Error) -> ArchiveError + '_ {
    move |e| ArchiveError::Io { file: file.to_string(), source: e }
}

/// Writes the snapshot as WARC 1.1 (each record its own gzip member when `gzip`).
pub fn export_warc<W: Write>(
    store: &Store,
    name: &str,
    out: W,
    gzip: bool,
    file: &str,
) -> Result<WarcExportReport, ArchiveError> {
    let m = store.manifest(name)?;
    let mut out = CountingWriter { inner: io::BufWriter::with_capacity(1 << 16, out), pos: 0 };
    let (report, _) = write_warc(store, &m, &mut out, gzip, file, "data.warc.gz")?;
    out.flush().map_err(io_err(file))?;
    Ok(report)
}

/// Writes the snapshot as a WACZ: `archive/data.warc.gz`, `indexes/index.cdx`, `pages/pages.jsonl`,
/// `datapackage.json` (with the SHA-256 of each) and `datapackage-digest.json`.
pub fn export_wacz<W: Write + Seek>(
    store: &Store,
    name: &str,
    out: W,
    file: &str,
) -> Result<WarcExportReport, ArchiveError> {
    let m = store.manifest(name)?;
    let zerr =
        |e: zip::result::ZipError| ArchiveError::Io { file: file.to_string(), source: io::Error::other(e) };
    let mut zip = zip::ZipWriter::new(out);
    // The WARC is gzip already; the small text parts are stored too, so readers can range-request them.
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(true);
    let mut resources = Vec::new();

    zip.start_file("archive/data.warc.gz", opts).map_err(zerr)?;
    let (report, mut index) = {
        let mut hashing = Sha256Writer { inner: &mut zip, hasher: sha2::Sha256::new(), len: 0 };
        let mut out = CountingWriter { inner: io::BufWriter::with_capacity(1 << 16, &mut hashing), pos: 0 };
        let r = write_warc(store, &m, &mut out, true, file, "data.warc.gz")?;
        out.flush().map_err(io_err(file))?;
        drop(out);
        resources.push(("data.warc.gz", "archive/data.warc.gz", hashing.hex(), hashing.len));
        r
    };

    // CDXJ lines (sorted by SURT key, then timestamp) in `index.cdx`: the name pywb's `wb-manager add
    // --unpack-wacz` looks for (it ignores `.cdxj`), and one ReplayWeb.page reads too.
    let mut lines: Vec<String> = index
        .iter()
        .map(|e| {
            let json = serde_json::json!({
                "url": e.url,
                "mime": if e.revisit { "warc/revisit".to_string() } else { e.mime.clone() },
                "status": e.status.to_string(),
                "digest": e.digest,
                "length": e.length.to_string(),
                "offset": e.offset.to_string(),
                "filename": "data.warc.gz",
            });
            format!("{} {} {}\n", surt(&e.url), e.ts14, json)
        })
        .collect();
    lines.sort();
    let cdxj = lines.concat();
    drop(lines);
    zip.start_file("indexes/index.cdx", opts).map_err(zerr)?;
    zip.write_all(cdxj.as_bytes()).map_err(io_err(file))?;
    resources.push(("index.cdx", "indexes/index.cdx", sha256_hex(cdxj.as_bytes()), cdxj.len() as u64));

    let mut pages =
        String::from("{\"format\":\"json-pages-1.0\",\"id\":\"pages\",\"title\":\"All Pages\"}\n");
    index.retain(|e| e.page);
    for (i, e) in index.iter().enumerate() {
        pages.push_str(
            &serde_json::json!({"id": format!("page-{i}"), "url": e.url, "ts": e.iso, "title": e.url})
                .to_string(),
        );
        pages.push('\n');
    }
    zip.start_file("pages/pages.jsonl", opts).map_err(zerr)?;
    zip.write_all(pages.as_bytes()).map_err(io_err(file))?;
    resources.push(("pages.jsonl", "pages/pages.jsonl", sha256_hex(pages.as_bytes()), pages.len() as u64));

    let created = iso(m.created_ms);
    let mut package = serde_json::json!({
        "profile": "data-package",
        "wacz_version": "1.1.1",
        "title": m.name,
        "created": created,
        "modified": created,
        "software": format!("webfreeze {}", env!("CARGO_PKG_VERSION")),
        "resources": resources.iter().map(|(name, path, hash, bytes)| serde_json::json!({
            "name": name, "path": path, "hash": format!("sha256:{hash}"), "bytes": bytes,
        })).collect::<Vec<_>>(),
    });
    if let Some(first) = index.first() {
        package["mainPageUrl"] = serde_json::json!(first.url);
        package["mainPageDate"] = serde_json::json!(first.iso);
    }
    let package = serde_json::to_vec_pretty(&package).map_err(|e| io_err(file)(e.into()))?;
    zip.start_file("datapackage.json", opts).map_err(zerr)?;
    zip.write_all(&package).map_err(io_err(file))?;
    let digest =
        serde_json::json!({"path": "datapackage.json", "hash": format!("sha256:{}", sha256_hex(&package))});
    zip.start_file("datapackage-digest.json", opts).map_err(zerr)?;
    zip.write_all(digest.to_string().as_bytes()).map_err(io_err(file))?;
    zip.finish().map_err(zerr)?;
    Ok(WarcExportReport { pages: index.len() as u64, ..report })
}

/// Writes every record; returns the report and the index entries of responses and revisits.
fn write_warc<W: Write>(
    store: &Store,
    m: &Manifest,
    out: &mut CountingWriter<W>,
    gzip: bool,
    file: &str,
    filename: &str,
) -> Result<(WarcExportReport, Vec<IndexEntry>), ArchiveError> {
    let ioe = io_err(file);
    let mut report = WarcExportReport::default();
    let mut index = Vec::new();
    let mut originals: HashMap<String, Original> = HashMap::new();
    // Pages: top-level documents. Browsers mark them `Sec-Fetch-Dest: document`; without that header in
    // the snapshot at all, every HTML answer counts.
    let marks_documents = store
        .exchanges(m)
        .take(1000)
        .filter_map(Result::ok)
        .any(|x| header(&x.request.headers, "sec-fetch-dest").is_some());

    let info = format!(
        "software: webfreeze/{}\r\nformat: WARC File Format 1.1\r\nconformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\nisPartOf: {}\r\n",
        env!("CARGO_PKG_VERSION"),
        super::record::clean_field(&m.name)
    );
    let info_fields = vec![
        ("WARC-Type", "warcinfo".to_string()),
        ("WARC-Record-ID", record_id(&m.name, u64::MAX, "warcinfo")),
        ("WARC-Date", iso(m.created_ms)),
        ("WARC-Filename", filename.to_string()),
        ("Content-Type", "application/warc-fields".to_string()),
    ];
    write_record(out, gzip, &info_fields, info.as_bytes(), None).map_err(&ioe)?;

    for x in store.exchanges(m) {
        let x = x?;
        report.exchanges += 1;
        let Some(body) = x.response.body.clone().filter(|_| !x.flags.body_not_captured) else {
            report.not_captured += 1;
            continue;
        };
        let when = if x.started_ms > 0 { x.started_ms } else { m.created_ms };
        let date = iso(when);
        let resp_id = record_id(&m.name, x.seq, "response");
        let http_head = response_head(&x, body.size);
        let mime = header(&x.response.headers, "content-type")
            .map(|c| c.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
            .unwrap_or_default();
        let is_page = x.request.method == "GET"
            && x.response.status == 200
            && mime == "text/html"
            && (!marks_documents
                || header(&x.request.headers, "sec-fetch-dest")
                    .is_some_and(|d| d.eq_ignore_ascii_case("document")));
        let offset = out.pos;
        let mut fields = vec![
            ("WARC-Type", String::new()),
            ("WARC-Record-ID", resp_id.clone()),
            ("WARC-Date", date.clone()),
            ("WARC-Target-URI", x.request.url.clone()),
        ];
        if let Some(ip) = x.server_addr.as_deref().and_then(ip_of) {
            fields.push(("WARC-IP-Address", ip));
        }
        if x.alpn.as_deref() == Some("h2") {
            fields.push(("WARC-Protocol", "h2".to_string()));
        }
        let revisit = body.size > 0 && originals.contains_key(&body.hash);
        let digest = if let Some(orig) = originals.get(&body.hash).filter(|_| revisit) {
            fields[0].1 = "revisit".into();
            fields.push((
                "WARC-Profile",
                "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest".into(),
            ));
            fields.push(("WARC-Refers-To", orig.record_id.clone()));
            fields.push(("WARC-Refers-To-Target-URI", orig.uri.clone()));
            fields.push(("WARC-Refers-To-Date", orig.date.clone()));
            fields.push(("WARC-Payload-Digest", orig.digest.clone()));
            fields.push(("WARC-Block-Digest", sha1_b32(&[http_head.as_bytes()])));
            fields.push(("Content-Type", "application/http; msgtype=response".into()));
            let d = orig.digest.clone();
            write_record(out, gzip, &fields, http_head.as_bytes(), None).map_err(&ioe)?;
            report.revisits += 1;
            d
        } else {
            // First pass over the body: its digests (the head with them precedes the block).
            let mut payload = sha1::Sha1::new();
            let mut block = sha1::Sha1::new();
            block.update(http_head.as_bytes());
            let mut r = store.read_blob(&body.hash)?;
            while let Some(chunk) = r.next_chunk()? {
                payload.update(&chunk);
                block.update(&chunk);
            }
            let payload_digest = format!("sha1:{}", data_encoding::BASE32.encode(&payload.finalize()));
            fields[0].1 = "response".into();
            fields.push(("WARC-Payload-Digest", payload_digest.clone()));
            fields.push((
                "WARC-Block-Digest",
                format!("sha1:{}", data_encoding::BASE32.encode(&block.finalize())),
            ));
            fields.push(("Content-Type", "application/http; msgtype=response".into()));
            write_record(out, gzip, &fields, http_head.as_bytes(), Some((store, &body.hash, body.size)))
                .map_err(&ioe)?;
            if body.size > 0 {
                originals.insert(
                    body.hash.clone(),
                    Original {
                        uri: x.request.url.clone(),
                        date: date.clone(),
                        record_id: resp_id.clone(),
                        digest: payload_digest.clone(),
                    },
                );
            }
            report.responses += 1;
            payload_digest
        };
        index.push(IndexEntry {
            url: x.request.url.clone(),
            ts14: ts14(when),
            iso: date.clone(),
            mime,
            status: x.response.status,
            digest,
            offset,
            length: out.pos - offset,
            revisit,
            page: is_page,
        });

        // The request, concurrent to its response.
        let req_head = request_head(&x);
        let req_body = match &x.request.body {
            Some(b) => store.blob_bytes(&b.hash)?,
            None => Vec::new(),
        };
        let mut block = req_head.into_bytes();
        block.extend_from_slice(&req_body);
        let req_fields = vec![
            ("WARC-Type", "request".to_string()),
            ("WARC-Record-ID", record_id(&m.name, x.seq, "request")),
            ("WARC-Date", date),
            ("WARC-Target-URI", x.request.url.clone()),
            ("WARC-Concurrent-To", resp_id),
            ("WARC-Block-Digest", sha1_b32(&[&block])),
            ("Content-Type", "application/http; msgtype=request".to_string()),
        ];
        write_record(out, gzip, &req_fields, &block, None).map_err(&ioe)?;
        report.requests += 1;
    }
    report.bytes = out.pos;
    Ok((report, index))
}

/// Writes one record: head, `block` then the blob (if any), and the two closing line ends; one gzip member
/// when `gzip`.
fn write_record<W: Write>(
    out: &mut CountingWriter<W>,
    gzip: bool,
    fields: &[(&str, String)],
    block: &[u8],
    blob: Option<(&Store, &str, u64)>,
) -> io::Result<()> {
    let len = block.len() as u64 + blob.map_or(0, |b| b.2);
    let body = |w: &mut dyn Write| -> io::Result<()> {
        write_head(w, fields, len)?;
        w.write_all(block)?;
        if let Some((store, hash, _)) = blob {
            let mut r = store.read_blob(hash).map_err(io::Error::other)?;
            while let Some(chunk) = r.next_chunk().map_err(io::Error::other)? {
                w.write_all(&chunk)?;
            }
        }
        w.write_all(b"\r\n\r\n")
    };
    if gzip {
        let mut gz = GzEncoder::new(&mut *out, flate2::Compression::new(6));
        body(&mut gz)?;
        gz.finish()?;
        Ok(())
    } else {
        body(out)
    }
}

fn clean(v: &str) -> String {
    super::record::clean_field(v)
}

/// The response's HTTP head as it goes into the record.
fn response_head(x: &Exchange, body_len: u64) -> String {
    let version = if x.response.version.eq_ignore_ascii_case("HTTP/1.0") { "HTTP/1.0" } else { "HTTP/1.1" };
    let reason =
        http::StatusCode::from_u16(x.response.status).ok().and_then(|s| s.canonical_reason()).unwrap_or("");
    let mut h = format!("{version} {} {reason}\r\n", x.response.status);
    // The stored body is decoded; a body whose decoding failed is the raw encoded bytes, and keeps its
    // Content-Encoding.
    let keep_encoding = x.flags.decode_failed;
    for hd in &x.response.headers {
        let n = hd.name.to_ascii_lowercase();
        if n.starts_with(':')
            || n == "transfer-encoding"
            || n == "content-length"
            || (n == "content-encoding" && !keep_encoding)
        {
            continue;
        }
        h.push_str(&format!("{}: {}\r\n", clean(&hd.name), clean(&hd.value)));
    }
    h.push_str(&format!("Content-Length: {body_len}\r\n\r\n"));
    h
}

/// The request's HTTP head: origin-form target, a Host header if the recording had none.
fn request_head(x: &Exchange) -> String {
    let (target, host) = match url::Url::parse(&x.request.url) {
        Ok(u) => {
            let mut t = u.path().to_string();
            if let Some(q) = u.query() {
                t.push('?');
                t.push_str(q);
            }
            let host = u.host_str().map(|h| match u.port() {
                Some(p) => format!("{h}:{p}"),
                None => h.to_string(),
            });
            (t, host)
        }
        Err(_) => (x.request.url.clone(), None),
    };
    let mut h = format!("{} {} HTTP/1.1\r\n", clean(&x.request.method), clean(&target));
    if header(&x.request.headers, "host").is_none() {
        if let Some(host) = host {
            h.push_str(&format!("Host: {host}\r\n"));
        }
    }
    for hd in &x.request.headers {
        if hd.name.starts_with(':') {
            continue;
        }
        h.push_str(&format!("{}: {}\r\n", clean(&hd.name), clean(&hd.value)));
    }
    h.push_str("\r\n");
    h
}

fn ip_of(addr: &str) -> Option<String> {
    let a = addr.trim();
    if let Ok(sa) = a.parse::<std::net::SocketAddr>() {
        return Some(sa.ip().to_string());
    }
    a.parse::<std::net::IpAddr>().ok().map(|ip| ip.to_string())
}

/// A stable record id: a UUID-shaped BLAKE3 of snapshot, sequence and record kind.
fn record_id(name: &str, seq: u64, kind: &str) -> String {
    let h = blake3::hash(format!("{name}\u{0}{seq}\u{0}{kind}").as_bytes());
    let b = h.as_bytes();
    let hex: String = b[..16].iter().map(|x| format!("{x:02x}")).collect();
    format!("<urn:uuid:{}-{}-8{}-a{}-{}>", &hex[0..8], &hex[8..12], &hex[13..16], &hex[17..20], &hex[20..32])
}

fn sha1_b32(parts: &[&[u8]]) -> String {
    let mut h = sha1::Sha1::new();
    for p in parts {
        h.update(p);
    }
    format!("sha1:{}", data_encoding::BASE32.encode(&h.finalize()))
}

fn sha256_hex(b: &[u8]) -> String {
    sha2::Sha256::digest(b).iter().map(|x| format!("{x:02x}")).collect()
}

fn datetime(ms: i64) -> time::OffsetDateTime {
    time::OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000)).unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
}

/// `2026-01-02T03:04:05Z` (seconds: what every WARC reader parses).
fn iso(ms: i64) -> String {
    let f = time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z");
    datetime(ms).format(&f).unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

fn ts14(ms: i64) -> String {
    let f = time::macros::format_description!("[year][month][day][hour][minute][second]");
    datetime(ms).format(&f).unwrap_or_else(|_| "19700101000000".into())
}

/// The SURT form CDX indexes sort by, as pywb's canonicaliser writes it: scheme and `www.` dropped, host
/// labels reversed and comma-joined, default port dropped, the whole key lower-cased, query arguments
/// sorted.
pub fn surt(url: &str) -> String {
    let Ok(u) = url::Url::parse(url) else { return url.to_ascii_lowercase() };
    let host = u.host_str().unwrap_or("").trim_end_matches('.').to_ascii_lowercase();
    let host = strip_www(&host);
    let mut labels: Vec<&str> = host.split('.').collect();
    labels.reverse();
    let mut key = labels.join(",");
    if let Some(p) = u.port() {
        key.push_str(&format!(":{p}"));
    }
    key.push(')');
    key.push_str(u.path());
    if let Some(q) = u.query() {
        let mut args: Vec<&str> = q.split('&').collect();
        args.sort_unstable();
        key.push('?');
        key.push_str(&args.join("&"));
    }
    key.to_ascii_lowercase()
}

fn strip_www(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix("www") {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if let Some(r) = rest[digits..].strip_prefix('.') {
            if r.contains('.') {
                return r;
            }
        }
    }
    host
}

/// Hashes (SHA-256) and counts what passes through.
struct Sha256Writer<W> {
    inner: W,
    hasher: sha2::Sha256,
    len: u64,
}

impl<W> Sha256Writer<W> {
    fn hex(&self) -> String {
        self.hasher.clone().finalize().iter().map(|x| format!("{x:02x}")).collect()
    }
}

impl<W: Write> Write for Sha256Writer<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surt_keys() {
        for (url, want) in [
            ("http://www.Example.com/Path?b=2&a=1", "com,example)/path?a=1&b=2"),
            ("https://example.com/", "com,example)/"),
            ("http://shop.test:8080/x", "test,shop:8080)/x"),
            ("http://www2.example.org/", "org,example)/"),
        ] {
            assert_eq!(surt(url), want, "{url}");
        }
    }

    #[test]
    fn record_ids_are_stable_and_distinct() {
        assert_eq!(record_id("s", 1, "response"), record_id("s", 1, "response"));
        assert_ne!(record_id("s", 1, "response"), record_id("s", 1, "request"));
        assert!(record_id("s", 1, "response").starts_with("<urn:uuid:"));
    }
}
