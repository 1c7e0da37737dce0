//! IO adapters for client connections: the sniffed first bytes replayed in front of the stream, and the
//! idle timeout that closes silent connections.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Writes go straight to the inner stream (the adapters here only change how a connection reads).
macro_rules! write_through {
    ($t:ident) => {
        impl<S: AsyncWrite + Unpin> AsyncWrite for $t<S> {
            fn poll_write(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<std::io::Result<usize>> {
                Pin::new(&mut self.inner).poll_write(cx, buf)
            }
            // Vectored writes pass through too: without them a TLS stream above writes its queued records
            // one `send` each (rustls hands them all at once), and hyper copies a body behind its head.
            fn poll_write_vectored(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> Poll<std::io::Result<usize>> {
                Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
            }
            fn is_write_vectored(&self) -> bool {
                self.inner.is_write_vectored()
            }
            fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
                Pin::new(&mut self.inner).poll_flush(cx)
            }
            fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
                Pin::new(&mut self.inner).poll_shutdown(cx)
            }
        }
    };
}

/// A stream that replays bytes already read (the sniffed prefix) before reading the inner stream.
pub(super) struct Prefixed<S> {
    pub(super) prefix: Vec<u8>,
    pub(super) pos: usize,
    pub(super) inner: S,
}

impl<S: AsyncRead + Unpin> AsyncRead for Prefixed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.pos < self.prefix.len() {
            let n = buf.remaining().min(self.prefix.len() - self.pos);
            let start = self.pos;
            buf.put_slice(&self.prefix[start..start + n]);
            self.pos += n;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

write_through!(Prefixed);

/// Closes a client connection after `idle` without any byte read or written: covers a client that never
/// sends its first request (hyper's header timer only starts with the first byte) and keep-alive or tunnel
/// connections left silent.
///
/// Activity only notes its time; the timer is moved when it fires and finds activity since (then to the
/// last activity plus `idle`). Resetting it on every read and write moved it in the runtime's timer wheel
/// twice per request (`bench replay`: 2% of replay's CPU per small request).
pub(super) struct IdleTimeout<S> {
    inner: S,
    idle: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
    /// The last byte read or written.
    last: tokio::time::Instant,
}

impl<S> IdleTimeout<S> {
    pub(super) fn new(inner: S, idle: Duration) -> Self {
        let now = tokio::time::Instant::now();
        Self { inner, idle, deadline: Box::pin(tokio::time::sleep_until(now + idle)), last: now }
    }

    fn touch(&mut self) {
        self.last = tokio::time::Instant::now();
    }

    /// Whether `idle` has passed since the last activity; else the timer is (re)armed to wake `cx` then.
    fn expired(&mut self, cx: &mut Context<'_>) -> bool {
        loop {
            if self.deadline.as_mut().poll(cx).is_pending() {
                return false;
            }
            let due = self.last + self.idle;
            if due <= self.deadline.deadline() {
                return true;
            }
            self.deadline.as_mut().reset(due);
        }
    }
}

fn idle_error() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::TimedOut, "client connection idle for too long")
}

impl<S: AsyncRead + Unpin> AsyncRead for IdleTimeout<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(r) => {
                if buf.filled().len() > before {
                    self.touch();
                }
                Poll::Ready(r)
            }
            Poll::Pending if self.expired(cx) => Poll::Ready(Err(idle_error())),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S> IdleTimeout<S> {
    /// A write's outcome: bytes written count as activity; a write still pending past the deadline fails.
    fn wrote(
        &mut self,
        cx: &mut Context<'_>,
        r: Poll<std::io::Result<usize>>,
    ) -> Poll<std::io::Result<usize>> {
        match r {
            Poll::Ready(Ok(n)) => {
                if n > 0 {
                    self.touch();
                }
                Poll::Ready(Ok(n))
            }
            Poll::Pending if self.expired(cx) => Poll::Ready(Err(idle_error())),
            other => other,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for IdleTimeout<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.wrote(cx, r)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.wrote(cx, r)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The HTTP/2 connection preface (RFC 9113 3.4). It holds a blank line itself, so an HTTP/1 head scan
/// would take it for a complete head.
const H2_PREFACE: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
const H2_HEADERS: u8 = 0x1;
const H2_CONTINUATION: u8 = 0x9;
const H2_END_HEADERS: u8 = 0x4;

/// Where the scan of a connection's first bytes stands: what counts as the first request's head depends on
/// the protocol, which the bytes themselves tell (hyper's auto server decides the same way).
#[derive(Debug, Clone, Copy, PartialEq)]
enum HeadScan {
    /// Every byte so far matched the HTTP/2 preface; `n` of them.
    Sniff(usize),
    /// HTTP/1: the head ends at its blank line. `matched` is how much of `\r\n\r\n` the bytes end with,
    /// `last` the byte before (a head may also end with a bare `\n\n`).
    Http1 {
        matched: usize,
        last: u8,
    },
    /// HTTP/2 after the preface: frames are skipped until the first request's header block has arrived
    /// whole (a HEADERS or CONTINUATION frame flagged END_HEADERS, with its payload). SETTINGS, PINGs,
    /// WINDOW_UPDATEs and trickled frames do not count.
    Http2 {
        header: [u8; 9],
        have: usize,
        skip: usize,
        ends_head: bool,
    },
    Done,
}

impl HeadScan {
    const START: HeadScan = HeadScan::Sniff(0);

    fn is_h2(&self) -> bool {
        matches!(self, HeadScan::Http2 { .. })
    }

    /// Feed bytes read; true once the first request's head is complete.
    fn feed(&mut self, mut bytes: &[u8]) -> bool {
        while !bytes.is_empty() {
            match self {
                HeadScan::Done => return true,
                HeadScan::Sniff(n) => {
                    let b = bytes[0];
                    if b == H2_PREFACE[*n] {
                        *n += 1;
                        bytes = &bytes[1..];
                        if *n == H2_PREFACE.len() {
                            *self = HeadScan::Http2 { header: [0; 9], have: 0, skip: 0, ends_head: false };
                        }
                    } else {
                        // Not HTTP/2: the bytes matched so far are the start of an HTTP/1 head.
                        let seen = *n;
                        *self = HeadScan::Http1 { matched: 0, last: 0 };
                        if self.feed(&H2_PREFACE[..seen]) {
                            return true;
                        }
                    }
                }
                HeadScan::Http1 { matched, last } => {
                    const END: &[u8; 4] = b"\r\n\r\n";
                    let b = bytes[0];
                    bytes = &bytes[1..];
                    if b == b'\n' && *last == b'\n' {
                        *self = HeadScan::Done;
                        continue;
                    }
                    *last = b;
                    *matched = if b == END[*matched] {
                        *matched + 1
                    } else if b == END[0] {
                        1
                    } else {
                        0
                    };
                    if *matched == END.len() {
                        *self = HeadScan::Done;
                    }
                }
                HeadScan::Http2 { header, have, skip, ends_head } => {
                    if *skip > 0 {
                        let n = (*skip).min(bytes.len());
                        *skip -= n;
                        bytes = &bytes[n..];
                        if *skip == 0 && *ends_head {
                            *self = HeadScan::Done;
                        }
                        continue;
                    }
                    let n = (9 - *have).min(bytes.len());
                    header[*have..*have + n].copy_from_slice(&bytes[..n]);
                    *have += n;
                    bytes = &bytes[n..];
                    if *have == 9 {
                        let len = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
                        let (kind, flags) = (header[3], header[4]);
                        *have = 0;
                        *skip = len;
                        *ends_head =
                            matches!(kind, H2_HEADERS | H2_CONTINUATION) && flags & H2_END_HEADERS != 0;
                        if len == 0 && *ends_head {
                            *self = HeadScan::Done;
                        }
                    }
                }
            }
        }
        *self == HeadScan::Done
    }
}

/// Closes a client connection whose first request head has not arrived within `limit` of the connection's
/// start, however slowly its bytes trickle in (slowloris): for HTTP/1 the head up to its blank line, for
/// HTTP/2 (prior knowledge, or ALPN h2 in a tunnel) the first request's HEADERS after the preface, so a
/// client that sends the 24-byte preface, or trickles SETTINGS frames, holds no slot past the limit. Later
/// requests on the connection are bounded by hyper's header timer (HTTP/1) and the idle timeout.
pub(super) struct HeadDeadline<S> {
    inner: S,
    /// None once the head is complete.
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
    scan: HeadScan,
    limit: Duration,
}

impl<S> HeadDeadline<S> {
    pub(super) fn new(inner: S, limit: Duration) -> Self {
        Self { inner, deadline: Some(Box::pin(tokio::time::sleep(limit))), scan: HeadScan::START, limit }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for HeadDeadline<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        // Read first, judge after: bytes that arrived in time but were read late (a busy proxy polls
        // 10,000 connections on 2 cores) complete the head. Only a read that finds nothing more waiting,
        // with the head still incomplete, is measured against the limit (slowloris).
        let this = self.get_mut();
        let before = buf.filled().len();
        let r = Pin::new(&mut this.inner).poll_read(cx, buf);
        if this.deadline.is_some() && buf.filled().len() > before && this.scan.feed(&buf.filled()[before..]) {
            this.deadline = None;
        }
        if r.is_pending() && this.deadline.as_mut().is_some_and(|d| d.as_mut().poll(cx).is_ready()) {
            let limit = this.limit;
            let what = if this.scan.is_h2() { "HTTP/2 request HEADERS" } else { "request head" };
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("first {what} not complete within {limit:?} (--header-timeout)"),
            )));
        }
        r
    }
}

write_through!(HeadDeadline);

#[cfg(test)]
mod tests {
    use super::*;

    /// An HTTP/2 frame: 9-byte header and payload.
    fn frame(kind: u8, flags: u8, payload: &[u8]) -> Vec<u8> {
        let len = payload.len() as u32;
        let mut f = len.to_be_bytes()[1..].to_vec();
        f.extend_from_slice(&[kind, flags, 0, 0, 0, if kind == 0x4 { 0 } else { 1 }]);
        f.extend_from_slice(payload);
        f
    }

    #[test]
    fn head_end_is_found_across_chunks() {
        let pre = H2_PREFACE.to_vec();
        let settings = frame(0x4, 0, &[0, 3, 0, 0, 0, 100]);
        let headers_end = frame(H2_HEADERS, H2_END_HEADERS | 0x1, &[0x82, 0x84, 0x87]);
        let headers_open = frame(H2_HEADERS, 0x1, &[0x82, 0x84]);
        let continuation_end = frame(H2_CONTINUATION, H2_END_HEADERS, &[0x87]);
        let ping = frame(0x6, 0, &[0; 8]);
        let cat = |parts: &[&[u8]]| parts.concat();
        let h2_whole = cat(&[&pre, &settings, &headers_end]);
        let bytewise: Vec<&[u8]> = h2_whole.chunks(1).collect();
        let cases: Vec<(&str, Vec<&[u8]>, bool)> = vec![
            ("h1 whole", vec![&b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"[..]], true),
            ("h1 split blank line", vec![&b"GET / HTTP/1.1\r\n"[..], b"\r", b"\n"], true),
            ("h1 half a blank line", vec![&b"GET / HTTP/1.1\r\nHost: a\r\n"[..], b"\r"], false),
            ("h1 blank line then more", vec![&b"GET / HTTP/1.1\r\n"[..], b"\r", b"\n\r\n"], true),
            ("h1 short", vec![&b"X\r\n\r"[..], b"\n"], true),
            ("h1 leading CR", vec![&b"\r\r\n\r\n"[..]], true),
            ("h1 bare LF", vec![&b"GET / HTTP/1.0\n"[..], b"\n"], true),
            ("h1 incomplete", vec![&b"GET / HTTP/1.1\r\nHost: a\r\n"[..]], false),
            ("h1 starting like the preface", vec![&b"PRI * HTTP/1.1\r\n\r\n"[..]], true),
            ("h1 POST (P as in PRI)", vec![&b"POST / HTTP/1.1\r\n"[..], b"\r\n"], true),
            // The 24-byte preface holds a blank line: it is not a head (issue 35).
            ("h2 preface only", vec![&pre[..]], false),
            ("h2 preface and SETTINGS", vec![&pre[..], &settings], false),
            ("h2 SETTINGS and PINGs", vec![&pre[..], &settings, &ping, &ping], false),
            ("h2 HEADERS", vec![&h2_whole[..]], true),
            ("h2 byte by byte", bytewise, true),
            ("h2 HEADERS cut short", vec![&h2_whole[..h2_whole.len() - 1]], false),
            ("h2 HEADERS without END_HEADERS", vec![&pre[..], &settings, &headers_open], false),
            ("h2 CONTINUATION ends it", vec![&pre[..], &headers_open, &continuation_end], true),
        ];
        for (name, chunks, done) in cases {
            let mut scan = HeadScan::START;
            let got = chunks.iter().any(|c| scan.feed(c));
            assert_eq!(got, done, "{name}");
        }
    }

    /// Found by the load benchmark (10,000 HTTP/1.1 connections replaying a slow snapshot: 3,301 reset): a
    /// head that arrived within the limit but was read after it was refused; it is served. A head still
    /// incomplete when nothing more is waiting past the limit is refused, as before.
    #[tokio::test(start_paused = true)]
    async fn the_deadline_judges_arrival_not_reading() {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        for (sent, read_ok) in
            [(&b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"[..], true), (b"GET / HTTP/1.1\r\nHo", false)]
        {
            let (mut client, server) = tokio::io::duplex(1024);
            let mut h = HeadDeadline::new(server, Duration::from_secs(5));
            client.write_all(sent).await.unwrap();
            tokio::time::advance(Duration::from_secs(6)).await; // nobody read it yet
            let mut buf = vec![0u8; 1024];
            let n = h.read(&mut buf).await.unwrap();
            assert_eq!(&buf[..n], sent);
            let next = tokio::time::timeout(Duration::from_millis(10), h.read(&mut buf)).await;
            match (read_ok, next) {
                (true, Err(_)) => {} // head complete: waits for more, no deadline
                (false, Ok(Err(e))) => assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{e}"),
                (ok, other) => panic!("{sent:?} (complete: {ok}): {other:?}"),
            }
        }
    }
}
