//! Bodies: one boxed streaming body type for every direction, and the observer that feeds the handler's
//! chunk hooks and fires its completion hook exactly once.
//!
//! Streaming contract: bodies are never collected by the proxy, with one exception; each chunk is handed to
//! the hook and passed on, so memory is bounded by hyper's buffers whatever the body size. The exception: a
//! forwarded request body of declared length up to 1 MiB (`server::forward`) is read whole before it goes
//! out, so the handler sees all of it even when the origin answers without reading it (longer ones stream,
//! and the origin's early answer can still cut what is teed of them). Cancellation: if the body is dropped
//! before its end (client gone, origin cut), the completion hook still runs, with an error, unless its
//! observer was told to hand the rest over ([`Observed::on_abandon`]) and read on.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use http_body_util::{combinators::BoxBody, BodyExt, Empty, Full};

/// The boxed error type bodies carry.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The body type of every request and response the proxy handles.
pub type Body = BoxBody<Bytes, BoxError>;

/// A body holding `bytes`.
pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).map_err(|never| match never {}).boxed()
}

/// An empty body.
pub fn empty() -> Body {
    Empty::<Bytes>::new().map_err(|never| match never {}).boxed()
}

/// A plain-text response.
pub fn text_response(status: http::StatusCode, text: &str) -> http::Response<Body> {
    let mut r = http::Response::new(full(Bytes::copy_from_slice(text.as_bytes())));
    *r.status_mut() = status;
    r.headers_mut()
        .insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("text/plain; charset=utf-8"));
    r.headers_mut().insert(http::header::CACHE_CONTROL, http::HeaderValue::from_static("no-store"));
    r
}

/// How long [`cut_short`] waits between its bytes and its error.
pub const CUT_AFTER: std::time::Duration = std::time::Duration::from_millis(200);

/// `bytes`, then an error: a body that was cut short, served cut again (replay of an exchange recorded
/// truncated). HTTP/1.1 clients see the connection close before the body's end, HTTP/2 clients a reset
/// stream: what they saw from the origin.
pub fn cut_short(bytes: impl Into<Bytes>, why: &'static str) -> Body {
    let bytes = bytes.into();
    let frames = futures_util::stream::unfold(0u8, move |step| {
        let bytes = bytes.clone();
        async move {
            match step {
                0 => Some((Ok(Frame::data(bytes)), 1)),
                1 => {
                    // The error must come after the head and the bytes are on the wire: hyper's HTTP/1 drops
                    // unflushed output on a body error and h2 drops a stream's queued frames when it resets
                    // it, and neither says when they are written. A pause the writes need far less than.
                    tokio::time::sleep(CUT_AFTER).await;
                    Some((Err::<Frame<Bytes>, BoxError>(why.into()), 2))
                }
                _ => None,
            }
        }
    });
    http_body_util::StreamBody::new(frames).boxed()
}

/// Box any body.
pub fn boxed<B>(b: B) -> Body
where
    B: HttpBody<Data = Bytes> + Send + Sync + 'static,
    B::Error: Into<BoxError>,
{
    b.map_err(Into::into).boxed()
}

/// How an observed body ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BodyEnd {
    /// All of it went through.
    Complete,
    /// The stream failed with this message.
    Failed(String),
    /// The body was dropped before its end (the reader went away).
    Dropped,
}

type ChunkHook = Box<dyn FnMut(&Bytes) + Send + Sync>;
type EndHook = Box<dyn FnOnce(BodyEnd) + Send + Sync>;

struct EndGuard(Option<EndHook>);

impl EndGuard {
    fn fire(&mut self, end: BodyEnd) {
        if let Some(f) = self.0.take() {
            f(end);
        }
    }
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        self.fire(BodyEnd::Dropped);
    }
}

/// Wraps a body, calling `on_chunk` for every data frame and `on_end` exactly once.
pub struct Observed {
    inner: Body,
    on_chunk: ChunkHook,
    end: EndGuard,
    abandon: Option<AbandonHook>,
}

type AbandonHook = Box<dyn FnOnce(Abandoned) + Send + Sync>;

impl Observed {
    /// Observe `inner`.
    pub fn new(
        inner: Body,
        on_chunk: impl FnMut(&Bytes) + Send + Sync + 'static,
        on_end: impl FnOnce(BodyEnd) + Send + Sync + 'static,
    ) -> Self {
        let mut o = Self {
            inner,
            on_chunk: Box::new(on_chunk),
            end: EndGuard(Some(Box::new(on_end))),
            abandon: None,
        };
        if o.inner.is_end_stream() {
            // An empty body may never be polled; it is complete already.
            o.end.fire(BodyEnd::Complete);
        }
        o
    }

    /// When the reader drops this body before its end, hand the rest of it, with the hooks still owed, to
    /// `take_over` (which reads it on, see [`Abandoned::finish`]) instead of ending with
    /// [`BodyEnd::Dropped`].
    pub fn on_abandon(mut self, take_over: impl FnOnce(Abandoned) + Send + Sync + 'static) -> Self {
        self.abandon = Some(Box::new(take_over));
        self
    }
}

impl Drop for Observed {
    fn drop(&mut self) {
        if self.end.0.is_none() {
            return;
        }
        if let Some(take_over) = self.abandon.take() {
            take_over(Abandoned {
                body: std::mem::replace(&mut self.inner, empty()),
                on_chunk: std::mem::replace(&mut self.on_chunk, Box::new(|_| {})),
                end: EndGuard(self.end.0.take()),
            });
        }
    }
}

/// The rest of an observed body its reader left before the end, with the chunk and end hooks still owed
/// (see [`Observed::on_abandon`]). Dropped unread, it ends with [`BodyEnd::Dropped`].
pub struct Abandoned {
    body: Body,
    on_chunk: ChunkHook,
    end: EndGuard,
}

impl Abandoned {
    /// Read the rest through the hooks, as the reader would have: each frame must come within `idle`, and
    /// reading stops after `limit` more bytes. The end hook then fires with how it ended: complete, the
    /// origin's error or silence ([`BodyEnd::Failed`]), or [`BodyEnd::Dropped`] when `limit` cut it.
    pub async fn finish(mut self, idle: std::time::Duration, limit: u64) {
        let mut read = 0u64;
        loop {
            match tokio::time::timeout(idle, self.body.frame()).await {
                Err(_) => {
                    let why = format!("the origin sent nothing for {idle:?} after the client went away");
                    return self.end.fire(BodyEnd::Failed(why));
                }
                Ok(None) => return self.end.fire(BodyEnd::Complete),
                Ok(Some(Err(e))) => return self.end.fire(BodyEnd::Failed(e.to_string())),
                Ok(Some(Ok(frame))) => {
                    if let Some(data) = frame.data_ref() {
                        (self.on_chunk)(data);
                        read += data.len() as u64;
                    }
                    if self.body.is_end_stream() {
                        return self.end.fire(BodyEnd::Complete);
                    }
                    if read >= limit {
                        return self.end.fire(BodyEnd::Dropped);
                    }
                }
            }
        }
    }
}

impl HttpBody for Observed {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    (this.on_chunk)(data);
                }
                // A body of known length is over once its last byte is out: hyper stops polling then
                // and drops the body, which must not read as "the reader went away".
                if this.inner.is_end_stream() {
                    this.end.fire(BodyEnd::Complete);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                this.end.fire(BodyEnd::Failed(e.to_string()));
                Poll::Ready(Some(Err(e)))
            }
            Poll::Ready(None) => {
                this.end.fire(BodyEnd::Complete);
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use super::*;

    /// A body of `chunks`, then `end`: `Ok(())` ends it, `Err(m)` fails it, `None` never ends.
    fn body(chunks: &[&'static [u8]], end: Option<Result<(), &'static str>>) -> Body {
        let frames: Vec<Result<Frame<Bytes>, BoxError>> =
            chunks.iter().map(|c| Ok(Frame::data(Bytes::from_static(c)))).collect();
        let tail = futures_util::stream::unfold(end, |end| async move {
            match end {
                Some(Ok(())) => None,
                Some(Err(m)) => Some((Err::<Frame<Bytes>, BoxError>(m.into()), Some(Ok(())))),
                None => std::future::pending().await,
            }
        });
        let s = futures_util::StreamExt::chain(futures_util::stream::iter(frames), tail);
        http_body_util::StreamBody::new(s).boxed()
    }

    /// Whatever the reader takes before it drops the body, the rest is read on when it is handed over, and
    /// the end says how the rest ended; without a hand-over the drop is the end.
    #[tokio::test(start_paused = true)]
    async fn a_body_its_reader_left_is_read_on_to_its_end() {
        // Rows: the body, frames the reader takes, handed over, limit, the bytes the hooks saw, the end.
        type Row = (Body, usize, bool, u64, &'static [u8], BodyEnd);
        let rows: Vec<Row> = vec![
            (body(&[b"ab", b"cd", b"ef"], Some(Ok(()))), 1, true, 1 << 20, b"abcdef", BodyEnd::Complete),
            (
                body(&[b"ab", b"cd"], Some(Err("cut"))),
                1,
                true,
                1 << 20,
                b"abcd",
                BodyEnd::Failed("cut".into()),
            ),
            (body(&[b"ab", b"cd", b"ef", b"gh"], Some(Ok(()))), 1, true, 3, b"abcdef", BodyEnd::Dropped),
            (body(&[b"ab", b"cd"], Some(Ok(()))), 1, false, 1 << 20, b"ab", BodyEnd::Dropped),
            (body(&[b"ab"], None), 0, true, 1 << 20, b"ab", BodyEnd::Failed("idle".into())),
        ];
        for (i, (inner, take, hand_over, limit, seen, end)) in rows.into_iter().enumerate() {
            let got = Arc::new(Mutex::new(Vec::new()));
            let ended = Arc::new(Mutex::new(None));
            let (g, e) = (got.clone(), ended.clone());
            let mut o = Observed::new(
                inner,
                move |c| g.lock().unwrap().extend_from_slice(c),
                move |end| *e.lock().unwrap() = Some(end),
            );
            let rest = Arc::new(Mutex::new(None));
            if hand_over {
                let r = rest.clone();
                o = o.on_abandon(move |a| *r.lock().unwrap() = Some(a));
            }
            for _ in 0..take {
                o.frame().await.unwrap().unwrap();
            }
            drop(o);
            let rest = rest.lock().unwrap().take();
            assert_eq!(rest.is_some(), hand_over, "row {i}");
            if let Some(a) = rest {
                a.finish(Duration::from_secs(30), limit).await;
            }
            assert_eq!(got.lock().unwrap().as_slice(), seen, "row {i}");
            let ended = ended.lock().unwrap().take().unwrap_or_else(|| panic!("row {i}: no end"));
            match (&ended, &end) {
                (BodyEnd::Failed(m), BodyEnd::Failed(want)) if want == "idle" => {
                    assert!(m.contains("sent nothing"), "row {i}: {m}")
                }
                _ => assert_eq!(ended, end, "row {i}"),
            }
        }
    }
}
