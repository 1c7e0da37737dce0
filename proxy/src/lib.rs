//! The webfreeze MITM proxy: the man in the middle that recording and replay plug into.
//!
//! - [`ca`]: the per-install CA and per-host leaf certificates.
//! - [`Proxy`]: accept loop, CONNECT, TLS interception, HTTP/1.1 and h2 on both sides, WebSocket upgrades;
//!   takes a listener and a shutdown future, so tests run many proxies side by side on port 0.
//! - [`Handler`]: the phases recorder and replay implement; [`PassThrough`] forwards everything.
//! - [`headers`]: hop-by-hop and Alt-Svc hygiene.
//! - [`live`]: the browser's background hosts and the counting pass-through handler of live runs.
//! - [`upstream`]: origin connections (trust roots, `--resolve`, ALPN per origin) over a [`TlsBackend`].
//! - [`hello`]: the client's ClientHello and h2 preface, read to be mirrored to origins (JA4).
//! - [`guard`]: the side-effect and contamination guards of live and recording runs (a handler wrapper).
//! - [`sink`]: URLs answered by the proxy in every mode (WebArena-Verified's `dummy_bin`).
//! - [`wire_tap`]: a live run's own wire (each request and its answer, to the task's wire log).
//! - [`websocket`]: WebSocket connections message by message (the recording relay, replay's scripted
//!   server).

pub mod body;
pub mod ca;
mod error;
pub mod guard;
mod handler;
pub mod headers;
pub mod hello;
pub mod live;
pub mod offload;
mod server;
pub mod sink;
pub mod upstream;
pub mod websocket;
pub mod wire_tap;

pub use body::{text_response, Body, BoxError};
// For `forward_to_inner!`, so a crate using it needs no `http` or `bytes` dependency of its own.
pub use ca::{CaError, CaInfo, CertificateAuthority};
pub use error::{ErrorKind, ProxyError, ServeError, Side};
pub use handler::{Decision, Handler, PassThrough, RequestInfo, UpstreamInfo};
pub use hello::{ClientHello, ClientProfile, H2Preface};
pub use live::CountingPassThrough;
pub use offload::{offload, Offload};
pub use server::{Proxy, ProxyConfig};
pub use upstream::{parse_resolve, TlsBackend, TlsStack, UpstreamConfig};
#[doc(hidden)]
pub use {bytes as __bytes, http as __http};

/// The one rustls crypto provider webfreeze uses (aws-lc-rs), for both sides.
pub fn crypto_provider() -> std::sync::Arc<rustls::crypto::CryptoProvider> {
    std::sync::Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}
