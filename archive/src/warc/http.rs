//! The HTTP message inside a WARC record's block: its head (first line and headers), its status line, its
//! body de-chunked when it was stored chunked, and WARC dates.

use std::io::{self, BufRead, Read};

use snapshots::format::Header;

/// The longest HTTP head read from a record.
pub(super) const MAX_HTTP_HEAD: u64 = 256 * 1024;

/// Why a record's HTTP head could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum HeadError {
    /// The block could not be read (a truncated or damaged archive).
    #[error("cannot read the HTTP head: {0}")]
    Io(#[source] io::Error),
    /// No blank line within [`MAX_HTTP_HEAD`] bytes: not an HTTP head.
    #[error("HTTP head longer than {MAX_HTTP_HEAD} bytes")]
    TooLong,
}

pub(super) use snapshots::format::header_value as header;

/// An HTTP head inside a record: the first line and the headers.
pub(crate) struct HttpHead {
    pub(crate) first: String,
    pub(crate) headers: Vec<Header>,
}

/// Reads the HTTP head at the start of a block; `None` for an empty block.
pub(crate) fn read_http_head(r: &mut dyn BufRead) -> Result<Option<HttpHead>, HeadError> {
    let mut r = Read::take(r, MAX_HTTP_HEAD);
    let mut line = Vec::new();
    let first = loop {
        line.clear();
        let n = r.read_until(b'\n', &mut line).map_err(HeadError::Io)?;
        if n == 0 {
            return Ok(None);
        }
        let l = String::from_utf8_lossy(&line).trim().to_string();
        if !l.is_empty() {
            break l;
        }
    };
    let mut headers: Vec<Header> = Vec::new();
    loop {
        line.clear();
        let n = r.read_until(b'\n', &mut line).map_err(HeadError::Io)?;
        if n == 0 {
            // A head without its blank line: a block that is only a head (revisits often are).
            break;
        }
        let l = String::from_utf8_lossy(&line);
        let l = l.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            break;
        }
        if l.starts_with([' ', '\t']) {
            if let Some(h) = headers.last_mut() {
                h.value.push(' ');
                h.value.push_str(l.trim());
            }
            continue;
        }
        if let Some((name, value)) = l.split_once(':') {
            if !name.trim().is_empty() {
                headers.push(Header::new(name.trim(), value.trim()));
            }
        }
        // A line without a colon is dropped, as browsers do.
    }
    if r.limit() == 0 {
        return Err(HeadError::TooLong);
    }
    Ok(Some(HttpHead { first, headers }))
}

/// `HTTP/1.1 200 OK` -> ("HTTP/1.1", 200).
pub(super) fn parse_status_line(line: &str) -> Option<(String, u16)> {
    let mut parts = line.split_whitespace();
    let version = parts.next()?;
    if !version.to_ascii_uppercase().starts_with("HTTP/") {
        return None;
    }
    let status: u16 = parts.next()?.parse().ok()?;
    (100..=999).contains(&status).then(|| (version.to_string(), status))
}

/// A WARC-Date (ISO 8601 / RFC 3339, with or without fractions; WARC 0.17's 14 digits) as Unix ms.
pub(crate) fn parse_date_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Ok(t) = time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339) {
        return i64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok();
    }
    if s.len() == 14 && s.bytes().all(|b| b.is_ascii_digit()) {
        let f = time::macros::format_description!("[year][month][day][hour][minute][second]");
        let t = time::PrimitiveDateTime::parse(s, &f).ok()?.assume_utc();
        return i64::try_from(t.unix_timestamp_nanos() / 1_000_000).ok();
    }
    None
}

/// The body's reader: de-chunked when the head says chunked and the body starts with a chunk-size line
/// (read whole here, rather than peeked, so a line across the reader's buffer boundary is seen whole).
pub(super) fn body_reader<'a>(block: &'a mut dyn BufRead, chunked: bool) -> io::Result<Box<dyn Read + 'a>> {
    if !chunked {
        return Ok(Box::new(block));
    }
    let mut first = Vec::new();
    Read::take(&mut *block, 1024).read_until(b'\n', &mut first)?;
    let is_chunked = is_chunk_size_line(&first);
    let src = io::Cursor::new(first).chain(block);
    Ok(if is_chunked { Box::new(Dechunk::new(src)) } else { Box::new(src) })
}

/// A chunk-size line: hex digits, optional extension, line end.
fn is_chunk_size_line(line: &[u8]) -> bool {
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 || digits > 16 || !line.ends_with(b"\n") {
        return false;
    }
    let ext = &line[digits..line.len() - 1];
    let ext = ext.strip_suffix(b"\r").unwrap_or(ext);
    ext.iter().all(|b| *b == b' ' || *b == b'\t') || ext.trim_ascii_start().starts_with(b";")
}

/// De-chunks a chunked body as it streams; trailers are read and dropped.
struct Dechunk<R> {
    inner: R,
    remaining: u64,
    state: ChunkState,
}

#[derive(PartialEq)]
enum ChunkState {
    Size,
    Data,
    DataEnd,
    Done,
}

impl<R: BufRead> Dechunk<R> {
    fn new(inner: R) -> Self {
        Self { inner, remaining: 0, state: ChunkState::Size }
    }

    fn line(&mut self) -> io::Result<String> {
        let mut l = Vec::new();
        if Read::take(&mut self.inner, 4096).read_until(b'\n', &mut l)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "chunked body cut short"));
        }
        Ok(String::from_utf8_lossy(&l).trim().to_string())
    }
}

impl<R: BufRead> Read for Dechunk<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.state {
                ChunkState::Done => return Ok(0),
                ChunkState::Size => {
                    let l = self.line()?;
                    let size = l.split(';').next().unwrap_or("").trim();
                    let n = u64::from_str_radix(size, 16).map_err(|_| {
                        io::Error::new(io::ErrorKind::InvalidData, format!("bad chunk size line {l:?}"))
                    })?;
                    if n == 0 {
                        // Trailers up to the blank line (or the block's end).
                        loop {
                            match self.line() {
                                Ok(t) if !t.is_empty() => continue,
                                _ => break,
                            }
                        }
                        self.state = ChunkState::Done;
                        return Ok(0);
                    }
                    self.remaining = n;
                    self.state = ChunkState::Data;
                }
                ChunkState::Data => {
                    if self.remaining == 0 {
                        self.state = ChunkState::DataEnd;
                        continue;
                    }
                    let want = buf.len().min(usize::try_from(self.remaining).unwrap_or(usize::MAX));
                    let n = self.inner.read(&mut buf[..want])?;
                    if n == 0 {
                        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "chunked body cut short"));
                    }
                    self.remaining -= n as u64;
                    return Ok(n);
                }
                ChunkState::DataEnd => {
                    let _ = self.line()?;
                    self.state = ChunkState::Size;
                }
            }
        }
    }
}
