//! The determinism shim while recording (`webfreeze record`; `--no-inject-shim` leaves it out). Replay
//! injects a seeded script into every HTML document (`shim`): `Date`, `Math.random` and
//! `crypto.getRandomValues` read from the snapshot's seed. Recording with the same script, seeded the same
//! way (the snapshot's name and start time), makes the page's script-made URLs (random cache-busters, time
//! stamps) the same in the recording and in every replay, so they match exactly instead of by rules.
//! WebPageReplay injects its script in both. `run --mode record` installs the same script through the
//! browser (CDP) instead.
//!
//! [`RecordShim`] wraps a recording handler and changes only what the client gets: a 200 HTML response
//! with a body, up to [`INJECT_MAX`], is read whole (which records it, as the client would have), decoded, given
//! the shim and sent identity-encoded; the snapshot stores the origin's body. Anything else, a larger page,
//! an encoding it cannot decode, passes unchanged.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{header, HeaderValue, Response};
use http_body::Frame;
use http_body_util::BodyExt as _;
use proxy::body::{Body, BoxError};
use proxy::Handler;

/// HTML documents up to this size (on the wire, and decoded) get the shim; larger ones pass unchanged.
pub const INJECT_MAX: usize = 16 << 20;

/// A recording handler whose HTML documents reach the client with the determinism shim.
#[derive(Debug)]
pub struct RecordShim<H> {
    inner: std::sync::Arc<H>,
    js: String,
}

impl<H: Handler> RecordShim<H> {
    /// Wrap `inner`; `js` is [`crate::shim::for_snapshot`] of the snapshot being recorded.
    pub fn new(inner: std::sync::Arc<H>, js: String) -> Self {
        Self { inner, js }
    }
}

impl<H: Handler> Handler for RecordShim<H> {
    type Ctx = H::Ctx;

    fn to_client(
        &self,
        ctx: &H::Ctx,
        res: Response<Body>,
    ) -> impl std::future::Future<Output = Response<Body>> + Send {
        let inner = self.inner.to_client(ctx, res);
        async move { with_shim(inner.await, &self.js).await }
    }
    proxy::forward_to_inner!(
        new_ctx,
        request,
        request_chunk,
        response_head,
        response_chunk,
        complete,
        forwards_to_origins,
        finishes_abandoned,
        direct,
        observes_websocket,
        websocket_message,
    );
}

/// A whole HTML document: 200 (a 206 is part of one; 204 and 304 have none).
fn is_html(parts: &http::response::Parts) -> bool {
    parts.status == http::StatusCode::OK
        && parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.to_ascii_lowercase().contains("text/html"))
}

/// `res` with the shim in its document, or unchanged (see the module docs).
async fn with_shim(res: Response<Body>, js: &str) -> Response<Body> {
    let (mut parts, mut body) = res.into_parts();
    let declared =
        parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    let encoding = parts
        .headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_ascii_lowercase());
    let decodable = matches!(
        encoding.as_deref(),
        None | Some("" | "identity" | "gzip" | "x-gzip" | "deflate" | "br" | "zstd")
    );
    if !is_html(&parts) || !decodable || declared.is_some_and(|n| n > INJECT_MAX) {
        return Response::from_parts(parts, body);
    }
    let mut wire = Vec::with_capacity(declared.unwrap_or(64 << 10));
    loop {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    wire.extend_from_slice(&data);
                    if wire.len() > INJECT_MAX {
                        // Too large after all: what was read, then the rest, unchanged.
                        return Response::from_parts(
                            parts,
                            proxy::body::boxed(Prefixed { prefix: Some(wire.into()), rest: body }),
                        );
                    }
                }
            }
            // The origin cut it short: the client gets what arrived and the same cut, unchanged.
            Some(Err(_)) => {
                return Response::from_parts(
                    parts,
                    proxy::body::cut_short(wire, "the origin cut the response short"),
                )
            }
            None => break,
        }
    }
    // An empty body (a HEAD's answer) has no document to put it in.
    let Some(decoded) = decode(encoding.as_deref(), &wire).filter(|_| !wire.is_empty()) else {
        return Response::from_parts(parts, proxy::body::full(wire));
    };
    let out = crate::shim::inject_html(&decoded, js);
    let h = &mut parts.headers;
    h.remove(header::CONTENT_ENCODING);
    h.remove(header::ETAG);
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(out.len()));
    for name in [header::CONTENT_SECURITY_POLICY, header::CONTENT_SECURITY_POLICY_REPORT_ONLY] {
        let patched: Vec<HeaderValue> = h
            .get_all(&name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| HeaderValue::from_str(&crate::shim::patch_csp(v)).ok())
            .collect();
        if !patched.is_empty() {
            h.remove(&name);
            for v in patched {
                h.append(&name, v);
            }
        }
    }
    Response::from_parts(parts, proxy::body::full(out))
}

/// The body decoded, or None if it does not decode (or decodes to more than [`INJECT_MAX`]).
fn decode(encoding: Option<&str>, wire: &[u8]) -> Option<Vec<u8>> {
    use std::io::Read;
    let limit = INJECT_MAX as u64 + 1;
    let mut out = Vec::new();
    let read = match encoding {
        None | Some("" | "identity") => return Some(wire.to_vec()),
        Some("gzip" | "x-gzip") => flate2::read::MultiGzDecoder::new(wire).take(limit).read_to_end(&mut out),
        Some("deflate") => {
            // zlib-wrapped per the RFC; some servers send raw deflate.
            match flate2::read::ZlibDecoder::new(wire).take(limit).read_to_end(&mut out) {
                Ok(n) => Ok(n),
                Err(_) => {
                    out.clear();
                    flate2::read::DeflateDecoder::new(wire).take(limit).read_to_end(&mut out)
                }
            }
        }
        Some("br") => brotli::Decompressor::new(wire, 64 << 10).take(limit).read_to_end(&mut out),
        Some("zstd") => {
            zstd::stream::read::Decoder::new(wire).and_then(|d| d.take(limit).read_to_end(&mut out))
        }
        Some(_) => return None,
    };
    (read.is_ok() && out.len() <= INJECT_MAX).then_some(out)
}

/// Bytes already read, then the rest of the body.
struct Prefixed {
    prefix: Option<Bytes>,
    rest: Body,
}

impl http_body::Body for Prefixed {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if let Some(p) = self.prefix.take() {
            return Poll::Ready(Some(Ok(Frame::data(p))));
        }
        Pin::new(&mut self.rest).poll_frame(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(b: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    }

    async fn through(headers: &[(&str, &str)], status: u16, body: Vec<u8>) -> (Response<Body>, Vec<u8>) {
        let mut b = Response::builder().status(status);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        let res = with_shim(b.body(proxy::body::full(body)).unwrap(), "SHIM()").await;
        let (parts, body) = res.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes().to_vec();
        (Response::from_parts(parts, proxy::body::empty()), bytes)
    }

    #[tokio::test]
    async fn html_gets_the_shim_and_nothing_else_does() {
        let page = b"<!doctype html><html><head><title>t</title></head><body>x</body></html>".to_vec();
        let html = [("content-type", "text/html; charset=utf-8")];
        // (headers, status, body, shim expected)
        type Row<'a> = (Vec<(&'a str, &'a str)>, u16, Vec<u8>, bool);
        let rows: Vec<Row> = vec![
            (html.to_vec(), 200, page.clone(), true),
            (
                vec![("content-type", "text/html"), ("content-encoding", "gzip"), ("etag", "\"1\"")],
                200,
                gzip(&page),
                true,
            ),
            (
                vec![("content-type", "text/html"), ("content-encoding", "gzip")],
                200,
                b"not gzip".to_vec(),
                false,
            ),
            (vec![("content-type", "text/html"), ("content-encoding", "compress")], 200, page.clone(), false),
            (html.to_vec(), 404, page.clone(), false),
            (html.to_vec(), 206, page[..20].to_vec(), false),
            (html.to_vec(), 200, Vec::new(), false),
            (vec![("content-type", "application/json")], 200, b"{}".to_vec(), false),
        ];
        for (i, (headers, status, body, shim)) in rows.into_iter().enumerate() {
            let (res, out) = through(&headers, status, body.clone()).await;
            let text = String::from_utf8_lossy(&out);
            assert_eq!(text.contains("SHIM()"), shim, "row {i}: {text}");
            if shim {
                assert!(
                    text.contains("<title>t</title>")
                        && res.headers().get(header::CONTENT_ENCODING).is_none()
                );
                assert!(res.headers().get(header::ETAG).is_none(), "row {i}");
                assert_eq!(res.headers()[header::CONTENT_LENGTH], out.len().to_string().as_str(), "row {i}");
            } else {
                assert_eq!(out, body, "row {i}: passed unchanged");
            }
        }
        // A policy that would stop an inline script allows the shim's nonce.
        let (res, _) = through(
            &[("content-type", "text/html"), ("content-security-policy", "script-src 'self'")],
            200,
            page,
        )
        .await;
        let csp = res.headers()[header::CONTENT_SECURITY_POLICY].to_str().unwrap().to_string();
        assert!(csp.contains("nonce-"), "{csp}");
    }
}
