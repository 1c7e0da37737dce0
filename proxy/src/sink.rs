//! Sinks: URLs the proxy answers itself, in every mode, and never forwards. WebArena-Verified's "fill in
//! the form but do not submit" tasks have their sites' forms post to a `dummy_bin` sink, and score the
//! request that reached it (a POST to `^http://.*/dummy_bin$`, status 200): the proxy answers it 200 and
//! the handler sees the exchange like any other, so a recording stores it and a replay answers the same
//! (replay answers an unrecorded one the same way).

use bytes::Bytes;
use http::{header, HeaderValue, Response, StatusCode, Uri};

use crate::body::{full, Body};

/// The header on a sink's answer.
pub const SINK_HEADER: &str = "x-webfreeze-sink";

/// Whether a request goes to a sink: a path whose last segment is `dummy_bin`.
pub fn is_sink(uri: &Uri) -> bool {
    uri.path().trim_end_matches('/').rsplit('/').next() == Some("dummy_bin")
}

/// A sink's answer: 200, a short page saying the submission was received and not sent on.
pub fn answer() -> Response<Body> {
    let mut r = Response::new(full(Bytes::from_static(
        b"<!doctype html><html><head><meta charset=\"utf-8\"><title>dummy_bin</title></head><body>\
          <p>Received by webfreeze's dummy_bin sink; not sent to any site.</p></body></html>",
    )));
    *r.status_mut() = StatusCode::OK;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(SINK_HEADER, HeaderValue::from_static("dummy_bin"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sink_urls() {
        for (url, want) in [
            ("http://shop.test/dummy_bin", true),
            ("https://gitlab.test:8023/dummy_bin/", true),
            ("http://shop.test/a/dummy_bin?x=1", true),
            ("http://shop.test/dummy_bin/more", false),
            ("http://shop.test/not_dummy_bin", false),
            ("http://shop.test/", false),
        ] {
            assert_eq!(is_sink(&url.parse().unwrap()), want, "{url}");
        }
    }
}
