//! Bodies: one boxed streaming body type for every direction, and the observer that feeds the handler's
//! chunk hooks and fires its completion hook exactly once.
//!
//! Streaming contract: bodies are never collected by the proxy; each chunk is handed to the hook and passed
//! on, so memory is bounded by hyper's buffers whatever the body size. Cancellation: if the body is dropped
//! before its end (client gone, origin cut), the completion hook still runs, with an error.

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

pin_project_lite::pin_project! {
    /// Wraps a body, calling `on_chunk` for every data frame and `on_end` exactly once.
    pub struct Observed {
        #[pin]
        inner: Body,
        on_chunk: ChunkHook,
        end: EndGuard,
    }
}

impl Observed {
    /// Observe `inner`.
    pub fn new(
        inner: Body,
        on_chunk: impl FnMut(&Bytes) + Send + Sync + 'static,
        on_end: impl FnOnce(BodyEnd) + Send + Sync + 'static,
    ) -> Self {
        let mut o = Self { inner, on_chunk: Box::new(on_chunk), end: EndGuard(Some(Box::new(on_end))) };
        if o.inner.is_end_stream() {
            // An empty body may never be polled; it is complete already.
            o.end.fire(BodyEnd::Complete);
        }
        o
    }
}

impl HttpBody for Observed {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let mut this = self.project();
        match this.inner.as_mut().poll_frame(cx) {
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
