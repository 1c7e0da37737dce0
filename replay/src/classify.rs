//! Classify a replayed request, the first of [`Replay::decide`]'s three steps: its body read whole, and
//! what the later steps ask of it (its method, URL, content type and fetch destination; whether it is a
//! browser's background request, a search this replay answers, a state-changing write). Nothing here
//! reads the snapshot.

use bytes::Bytes;
use http::{header, Request};
use proxy::{text_response, Body, Decision};
use recorder::HostFilter;

use crate::matcher::Incoming;
use crate::search::SearchRequest;
use crate::serving::read_body;
use crate::Replay;

/// `Sec-Fetch-Dest`, named once (a name built from a string at run time is parsed on every request).
const SEC_FETCH_DEST: http::HeaderName = http::HeaderName::from_static("sec-fetch-dest");

/// A request as the layers and the answer read it.
pub(crate) struct Classified {
    /// The request's head (headers, URI), kept to forward a miss.
    pub(crate) parts: http::request::Parts,
    /// Its body, read whole.
    pub(crate) body: Bytes,
    pub(crate) method: String,
    pub(crate) url: String,
    /// Its `Content-Type`, when it has one.
    pub(crate) content_type: Option<String>,
    /// Its `Sec-Fetch-Dest` (`document`, `image` ...), when the browser sent one.
    pub(crate) dest: Option<String>,
    /// A browser's own background request (safe browsing, update checks): never the page's.
    pub(crate) background: bool,
    /// The search engine request it is, when this replay answers searches ([`Replay::as_search`]).
    pub(crate) search: Option<SearchRequest>,
    /// A write that changes the site's state (`epochs`): never answered fuzzily.
    pub(crate) is_write: bool,
}

impl Classified {
    /// The request as the matcher reads it.
    pub(crate) fn incoming(&self) -> Incoming<'_> {
        Incoming {
            method: &self.method,
            url: &self.url,
            content_type: self.content_type.as_deref(),
            body: &self.body,
            headers: &self.parts.headers,
        }
    }

    /// Whether the method only reads (a page recorded several times is then chosen by write epoch).
    pub(crate) fn is_safe(&self) -> bool {
        matches!(self.method.as_str(), "GET" | "HEAD")
    }
}

impl Replay {
    /// Read `req`'s body and classify it; a body that cannot be read is answered here.
    pub(crate) async fn classify(&self, req: Request<Body>) -> Result<Classified, Decision> {
        let (parts, body) = req.into_parts();
        let url = parts.uri.to_string();
        let body = read_body(body).await.map_err(|e| {
            Decision::Respond(text_response(
                e.status(),
                &format!("webfreeze replay: cannot read the request body for {url}: {e}\n"),
            ))
        })?;
        let method = parts.method.as_str().to_string();
        let background = HostFilter::is_background(parts.uri.host().unwrap_or_default());
        let text_of = |name| parts.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_string);
        let content_type = text_of(header::CONTENT_TYPE);
        let dest = text_of(SEC_FETCH_DEST);
        // The body is read only for a write method (a GraphQL query or a preview is a read).
        let is_write = crate::epochs::is_state_write(&method, &url)
            && proxy_report::writes::is_write(
                &method,
                &url,
                content_type.as_deref().unwrap_or_default(),
                &String::from_utf8_lossy(&body),
            );
        let search = self.as_search(&method, &url);
        Ok(Classified { parts, body, method, url, content_type, dest, background, search, is_write })
    }
}
