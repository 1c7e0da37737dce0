//! WARC record framing: reading records (plain or gzip members) with their offsets and recovery from
//! damage, and writing records.
//!
//! A record is a version line (`WARC/1.1`, `WARC/1.0`, `WARC/0.17`, ...), named fields up to a blank line,
//! then `Content-Length` bytes of block and two line ends. In a `.warc.gz` each record is (normally) its
//! own gzip member; a file compressed as one member holding every record is read too.
//!
//! Damage never stops the walk: a record whose head does not parse is reported with its offset and the
//! reader skips to the next line that starts a record (plain) or the next gzip member (compressed). The
//! offsets are the ones CDX indexes use: the record's first byte in a plain file, its member's first byte
//! in a gzip file.

use std::io::{self, BufRead, BufReader, Read, Write};

/// Longest record head we accept (the fields before the block).
const MAX_HEAD: usize = 256 * 1024;

/// A parsed record head.
#[derive(Debug, Clone, Default)]
pub(crate) struct RecordHead {
    /// Fields in order (names as written).
    pub(crate) fields: Vec<(String, String)>,
    /// The block's length.
    pub(crate) content_length: u64,
}

impl RecordHead {
    /// A field's value by case-insensitive name.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.fields.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The record type, lower case ("response", "request", "revisit", ...).
    pub(crate) fn record_type(&self) -> String {
        self.get("WARC-Type").unwrap_or("").trim().to_ascii_lowercase()
    }

    /// A URI field with the angle brackets some writers put around it removed.
    pub(crate) fn uri(&self, name: &str) -> Option<String> {
        let v = self.get(name)?.trim();
        let v = v.strip_prefix('<').and_then(|v| v.strip_suffix('>')).unwrap_or(v);
        (!v.is_empty()).then(|| v.to_string())
    }
}

/// What the record handler says about one record.
#[derive(Debug)]
pub(crate) enum Handled {
    /// Fine (or skipped on purpose).
    Ok,
    /// The record's bytes are damaged (the input, not the store): report it and go on.
    Damaged(String),
}

/// The record handler: head, block (limited to `Content-Length`), offset.
pub(crate) type OnRecord<'a, E> =
    dyn FnMut(&RecordHead, &mut io::Take<&mut dyn BufRead>, u64) -> Result<Handled, E> + 'a;

/// Calls the handler for each record with its head, its block and offset; reports damage through
/// `on_damage(offset, why)`. Errors returned by the handler (the store failing) stop the walk.
pub(crate) fn read_records<R, E>(
    reader: R,
    on_record: &mut OnRecord<'_, E>,
    on_damage: &mut dyn FnMut(u64, String),
) -> Result<(), E>
where
    R: Read,
    E: From<io::Error>,
{
    let mut raw = Counting { inner: BufReader::with_capacity(1 << 16, reader), pos: 0 };
    let gzip = raw.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    if !gzip {
        return read_stream(&mut raw, None, on_record, on_damage);
    }
    loop {
        if raw.fill_buf()?.is_empty() {
            return Ok(());
        }
        let member_at = raw.pos;
        if !raw.fill_buf()?.starts_with(&[0x1f, 0x8b]) {
            on_damage(member_at, "not the start of a gzip member: skipped to the next member".into());
            skip_to_gzip_member(&mut raw)?;
            continue;
        }
        let mut damaged = false;
        {
            let decoder = flate2::bufread::GzDecoder::new(&mut raw);
            let mut member = Counting { inner: BufReader::with_capacity(1 << 16, decoder), pos: 0 };
            // One report per member: what follows damage inside a member is not worth a report each.
            read_stream(&mut member, Some(member_at), on_record, &mut |at, why| {
                if !damaged {
                    on_damage(at, why);
                }
                damaged = true;
            })?;
        }
        // A member whose deflate stream broke leaves the reader inside it (or, if the decoder took
        // nothing, where it started: never read the same spot twice): go on at the next member.
        if damaged && (raw.pos == member_at || !raw.fill_buf()?.starts_with(&[0x1f, 0x8b])) {
            skip_to_gzip_member(&mut raw)?;
        }
    }
}

/// Walks the records of one (decoded) stream. `member` is the gzip member's offset, used as the offset of
/// every record inside it (the CDX convention); `None` for a plain file.
fn read_stream<B, E>(
    r: &mut Counting<B>,
    member: Option<u64>,
    on_record: &mut OnRecord<'_, E>,
    on_damage: &mut dyn FnMut(u64, String),
) -> Result<(), E>
where
    B: BufRead,
    E: From<io::Error>,
{
    let mut first_line: Option<Vec<u8>> = None;
    loop {
        if first_line.is_none() {
            // The line ends closing the previous record: the next record's offset is after them.
            if let Err(e) = skip_line_ends(r) {
                on_damage(member.unwrap_or(r.pos), format!("unreadable: {e}"));
                return Ok(());
            }
        }
        let at = member.unwrap_or(r.pos);
        let head = match read_head(r, first_line.take()) {
            Ok(Some(h)) => h,
            Ok(None) => return Ok(()),
            Err(HeadError::Io(e)) => {
                // In a gzip member: a broken deflate stream; in a plain file: a read error.
                on_damage(at, format!("unreadable: {e}"));
                return Ok(());
            }
            Err(HeadError::Bad(why)) => {
                on_damage(at, format!("{why}: skipped to the next record"));
                match resync(r) {
                    Ok(Some(line)) => {
                        first_line = Some(line);
                        continue;
                    }
                    Ok(None) => return Ok(()),
                    Err(e) => {
                        on_damage(r.pos, format!("unreadable: {e}"));
                        return Ok(());
                    }
                }
            }
        };
        let dyn_r: &mut dyn BufRead = r;
        let mut block = Read::take(dyn_r, head.content_length);
        let handled = on_record(&head, &mut block, at)?;
        // Whatever the handler left unread.
        if let Err(e) = io::copy(&mut block, &mut io::sink()) {
            on_damage(at, format!("unreadable block: {e}"));
            return Ok(());
        }
        let missing = block.limit();
        match handled {
            _ if missing > 0 => {
                on_damage(
                    at,
                    format!(
                        "record cut short: {missing} of its {} block bytes are missing",
                        head.content_length
                    ),
                );
                return Ok(());
            }
            Handled::Ok => {}
            Handled::Damaged(why) => on_damage(at, why),
        }
    }
}

enum HeadError {
    Io(io::Error),
    Bad(String),
}

/// Reads a record head; `None` at a clean end of stream. Line ends between records are skipped.
fn read_head<B: BufRead>(r: &mut B, first_line: Option<Vec<u8>>) -> Result<Option<RecordHead>, HeadError> {
    let mut line = Vec::new();
    let version_line = match first_line {
        Some(l) => l,
        None => loop {
            line.clear();
            let n =
                Read::take(&mut *r, MAX_HEAD as u64).read_until(b'\n', &mut line).map_err(HeadError::Io)?;
            if n == 0 {
                return Ok(None);
            }
            if !line.iter().all(u8::is_ascii_whitespace) {
                break std::mem::take(&mut line);
            }
        },
    };
    let v = String::from_utf8_lossy(&version_line);
    // Any version is read the same way: 0.17, 0.18, 1.0 and 1.1 differ in fields, not in framing.
    if v.trim().strip_prefix("WARC/").is_none_or(str::is_empty) {
        return Err(HeadError::Bad(format!("no WARC version line (found {:?})", truncate(v.trim(), 40))));
    }
    let mut head = RecordHead::default();
    let mut total = version_line.len();
    loop {
        line.clear();
        let n = Read::take(&mut *r, MAX_HEAD as u64).read_until(b'\n', &mut line).map_err(HeadError::Io)?;
        if n == 0 {
            return Err(HeadError::Bad("record head ends before its blank line".into()));
        }
        total += n;
        if total > MAX_HEAD {
            return Err(HeadError::Bad(format!("record head longer than {MAX_HEAD} bytes")));
        }
        let l = String::from_utf8_lossy(&line);
        let l = l.trim_end_matches(['\r', '\n']);
        if l.is_empty() {
            break;
        }
        if l.starts_with([' ', '\t']) {
            // A continuation line (obsolete folding).
            if let Some(last) = head.fields.last_mut() {
                last.1.push(' ');
                last.1.push_str(l.trim());
            }
            continue;
        }
        match l.split_once(':') {
            Some((name, value)) => head.fields.push((name.trim().to_string(), value.trim().to_string())),
            None => return Err(HeadError::Bad(format!("malformed field line {:?}", truncate(l, 40)))),
        }
    }
    head.content_length = match head.get("Content-Length").map(|v| v.trim().parse::<u64>()) {
        Some(Ok(n)) => n,
        Some(Err(_)) => return Err(HeadError::Bad("Content-Length is not a number".into())),
        None => return Err(HeadError::Bad("no Content-Length".into())),
    };
    Ok(Some(head))
}

fn truncate(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

fn skip_line_ends<B: BufRead>(r: &mut B) -> io::Result<()> {
    loop {
        let buf = r.fill_buf()?;
        let n = buf.iter().take_while(|b| matches!(b, b'\r' | b'\n')).count();
        let all = n == buf.len() && n > 0;
        r.consume(n);
        if !all {
            return Ok(());
        }
    }
}

/// Skips lines up to the next one that starts a record; returns that line.
fn resync<B: BufRead>(r: &mut B) -> io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if Read::take(&mut *r, MAX_HEAD as u64).read_until(b'\n', &mut line)? == 0 {
            return Ok(None);
        }
        if line.starts_with(b"WARC/") {
            return Ok(Some(line));
        }
    }
}

/// Skips bytes up to the next gzip member header (`1f 8b 08`), or the end.
fn skip_to_gzip_member<B: BufRead>(r: &mut Counting<B>) -> io::Result<()> {
    // Step past the byte we are on, so a broken member at this spot is not found again.
    if !r.fill_buf()?.is_empty() {
        r.consume(1);
    }
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.windows(3).position(|w| w == [0x1f, 0x8b, 0x08]) {
            Some(i) => {
                r.consume(i);
                return Ok(());
            }
            // Keep the last two bytes: the magic may straddle the buffer's end.
            None if buf.len() > 2 => {
                let n = buf.len() - 2;
                r.consume(n);
            }
            None => {
                // Fewer than three bytes left before a refill: read them one by one.
                let mut one = [0u8; 1];
                if r.read(&mut one)? == 0 {
                    return Ok(());
                }
            }
        }
    }
}

/// A buffered reader that counts the bytes consumed.
pub(crate) struct Counting<B> {
    pub(crate) inner: B,
    pub(crate) pos: u64,
}

impl<B: BufRead> Read for Counting<B> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<B: BufRead> BufRead for Counting<B> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.pos += amt as u64;
        self.inner.consume(amt);
    }
}

/// A writer that counts bytes, for record offsets.
pub(crate) struct CountingWriter<W> {
    pub(crate) inner: W,
    pub(crate) pos: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes one record head (version 1.1) for a block of `len` bytes.
pub(crate) fn write_head<W: Write + ?Sized>(
    out: &mut W,
    fields: &[(&str, String)],
    len: u64,
) -> io::Result<()> {
    let mut head = String::from("WARC/1.1\r\n");
    for (name, value) in fields {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(&clean_field(value));
        head.push_str("\r\n");
    }
    head.push_str(&format!("Content-Length: {len}\r\n\r\n"));
    out.write_all(head.as_bytes())
}

/// Field values never carry line ends (a stored header with one would otherwise break the framing).
pub(crate) fn clean_field(v: &str) -> String {
    v.replace(['\r', '\n'], " ")
}
