//! The proxy's typed error: which side failed, what happened, and whether retrying can help.

use std::fmt;

/// The party whose failure ended an exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The client (browser) went away or sent something unusable.
    Client,
    /// The origin server could not be reached, was too slow, or broke off.
    Origin,
    /// The handler (recorder, replay) failed: its store, its own logic.
    Handler,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Client => "client",
            Side::Origin => "origin",
            Side::Handler => "handler",
        })
    }
}

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Name resolution failed.
    Resolve,
    /// TCP connect failed (refused, unreachable).
    Connect,
    /// TLS handshake with the origin failed (certificate, protocol).
    Tls,
    /// No answer within the configured time.
    Timeout,
    /// The body stream broke off.
    BodyCut,
    /// The connection closed before the exchange finished.
    Closed,
    /// The request was malformed or unsupported.
    BadRequest,
    /// Anything else.
    Other,
}

/// An exchange-ending error.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{side} error ({kind:?}) for {host}: {message}")]
pub struct ProxyError {
    /// Who failed.
    pub side: Side,
    /// What happened.
    pub kind: ErrorKind,
    /// The host concerned.
    pub host: String,
    /// Human-readable cause.
    pub message: String,
}

impl ProxyError {
    /// A new error.
    pub fn new(side: Side, kind: ErrorKind, host: impl Into<String>, message: impl Into<String>) -> Self {
        Self { side, kind, host: host.into(), message: message.into() }
    }

    /// Whether retrying the same request could succeed (transient origin trouble).
    pub fn retryable(&self) -> bool {
        matches!(
            (self.side, self.kind),
            (Side::Origin, ErrorKind::Connect | ErrorKind::Timeout | ErrorKind::Closed | ErrorKind::BodyCut)
        )
    }
}

/// Errors that stop the proxy itself (not one exchange).
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Building the upstream TLS configuration failed.
    #[error("upstream TLS setup: {0}")]
    Tls(String),
    /// Reading an `--upstream-ca` file failed.
    #[error("cannot read upstream CA file {path}: {detail}")]
    UpstreamCa {
        /// The file.
        path: String,
        /// What went wrong.
        detail: String,
    },
    /// A `--resolve` entry is malformed.
    #[error("bad --resolve {0:?}: expected HOST:PORT:ADDR (ADDR an IP, or IP:PORT to also change the port)")]
    Resolve(String),
    /// The listener failed.
    #[error("listener: {0}")]
    Io(#[from] std::io::Error),
}
