//! The persisted records: exchanges, manifests and body references. This module is the format boundary:
//! it is the only one that derives serde, and every record is written as JSON carrying a format version
//! (`"v"`). Reading a record with a newer version is a clear error; older versions are upgraded here.
//!
//! Version history:
//! - 1: the first format (exchange, manifest). `tests/fixtures/format-v1/` holds records of this version
//!   that every later build must still read.
//! - 2: an exchange may carry a WebSocket connection's messages ([`Exchange::websocket`]). A record is
//!   written at the lowest version that holds it (an exchange without messages, and every manifest, stay
//!   version 1), so stores without WebSockets stay readable by builds before version 2, and a build before
//!   it refuses a WebSocket exchange with "newer format" instead of silently replaying it without its frames.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::StoreError;

/// Newest version of exchange and manifest records this build reads and writes
/// ([`crate::version::RECORD_VERSION`]).
pub const FORMAT_VERSION: u32 = crate::version::RECORD_VERSION;
/// The version of records with nothing newer in them.
const FIRST_VERSION: u32 = 1;

/// One header, in recorded order. Non-UTF-8 header bytes are kept lossily (U+FFFD).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Header name as it was sent (case preserved).
    pub name: String,
    /// Header value.
    pub value: String,
}

impl Header {
    /// A header from name and value.
    pub fn new(name: impl Into<String>, value: impl Into<String>) -> Self {
        Self { name: name.into(), value: value.into() }
    }
}

/// A reference to a body blob: BLAKE3 of the decoded body, and its size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BodyRef {
    /// Lower-case hex BLAKE3 of the decoded body.
    pub hash: String,
    /// Decoded size in bytes.
    pub size: u64,
}

/// The request side of an exchange.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// Method, upper case.
    pub method: String,
    /// Absolute URL as requested.
    pub url: String,
    /// HTTP version as recorded ("HTTP/1.1", "HTTP/2", "h3", "unknown").
    pub version: String,
    /// Headers in order.
    pub headers: Vec<Header>,
    /// The request body, if it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<BodyRef>,
}

/// The response side of an exchange.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseRecord {
    /// Status code.
    pub status: u16,
    /// HTTP version as recorded.
    pub version: String,
    /// Headers in order, as the origin sent them.
    pub headers: Vec<Header>,
    /// The decoded body (content-encoding removed), unless it was not captured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<BodyRef>,
    /// The Content-Encoding the origin used on the wire (the stored body is decoded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_encoding: Option<String>,
}

/// Timings in milliseconds, where known.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    /// Request sent to response headers received.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<f64>,
    /// Response headers to the end of the body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_ms: Option<f64>,
    /// The whole exchange.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_ms: Option<f64>,
}

/// The first value of header `name` (any case) among `headers`: the one header lookup on a record.
pub fn header_value<'a>(headers: &'a [Header], name: &str) -> Option<&'a str> {
    headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value.as_str())
}

impl RequestRecord {
    /// The first value of request header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        header_value(&self.headers, name)
    }
}

impl ResponseRecord {
    /// The first value of response header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        header_value(&self.headers, name)
    }
}

/// What went wrong while capturing an exchange.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExchangeFlags {
    /// The response body was cut short (origin closed early, or a HAR said so).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// The body was not captured at all (a HAR without content text).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub body_not_captured: bool,
    /// Decoding the content-encoding failed: the stored body is the raw wire bytes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub decode_failed: bool,
    /// A state probe's request (`recorder::PROBE_HEADER`): the recorder read a page the task's checks
    /// read, after a write, to know its state at that epoch; never the agent's own request.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub probe: bool,
}

/// One recorded request/response pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    /// Position in the snapshot: the order requests started in.
    pub seq: u64,
    /// When the request started, Unix milliseconds.
    pub started_ms: i64,
    /// Lower-case hex of the request key digest ([`crate::key::RequestKey::digest`]).
    pub key: String,
    /// The request.
    pub request: RequestRecord,
    /// The response.
    pub response: ResponseRecord,
    /// Timings.
    #[serde(default)]
    pub timings: Timings,
    /// ALPN protocol negotiated with the origin ("h2", "http/1.1"), if TLS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpn: Option<String>,
    /// Address of the origin server the proxy talked to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_addr: Option<String>,
    /// Capture problems.
    #[serde(default)]
    pub flags: ExchangeFlags,
    /// The messages of a WebSocket connection this exchange's handshake (status 101) opened (version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub websocket: Option<WebSocketLog>,
}

impl Exchange {
    /// Every body this exchange references: request, response, WebSocket message payloads. Whatever keeps,
    /// copies or checks an exchange's blobs (gc, verify, copy, bundles) walks this.
    pub fn body_refs(&self) -> impl Iterator<Item = &BodyRef> {
        let ws = self.websocket.iter().flat_map(|w| w.messages.iter().map(|m| &m.payload));
        [&self.request.body, &self.response.body].into_iter().flatten().chain(ws)
    }
}

/// Which side sent a WebSocket message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WsSide {
    /// The browser.
    Client,
    /// The origin.
    Server,
}

/// A WebSocket message's kind (its opcode; fragments are joined, pings and pongs are not kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WsOpcode {
    /// UTF-8 text (opcode 1).
    Text,
    /// Binary (opcode 2).
    Binary,
    /// Close (opcode 8): the payload is the reason, [`WsMessage::close_code`] the code.
    Close,
}

/// One WebSocket message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WsMessage {
    /// Who sent it.
    pub from: WsSide,
    /// Its kind.
    pub opcode: WsOpcode,
    /// Milliseconds since the connection opened (the 101 reached the proxy).
    pub at_ms: f64,
    /// The payload, stored once by hash like any body.
    pub payload: BodyRef,
    /// A close message's status code, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub close_code: Option<u16>,
}

/// A WebSocket connection's messages, in the order the proxy relayed them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WebSocketLog {
    /// The messages.
    pub messages: Vec<WsMessage>,
    /// More messages arrived than a connection keeps ([`WS_MAX_MESSAGES`]); the later ones were relayed,
    /// not recorded.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

/// Messages kept per WebSocket connection: a ticker left open for hours is recorded up to here.
pub const WS_MAX_MESSAGES: usize = 100_000;

/// Lifecycle state of a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SnapshotState {
    /// Being written now.
    Recording,
    /// Finalized cleanly.
    Complete,
    /// The writer died before finalizing; every completed exchange is present.
    Interrupted,
    /// Made by an import (HAR, WARC).
    Imported,
}

impl std::fmt::Display for SnapshotState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SnapshotState::Recording => "recording",
            SnapshotState::Complete => "complete",
            SnapshotState::Interrupted => "interrupted",
            SnapshotState::Imported => "imported",
        })
    }
}

/// Where a snapshot came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SnapshotSource {
    /// Recorded through the proxy.
    Record,
    /// Imported from a HAR file.
    Har {
        /// The file's path as given.
        file: String,
    },
    /// Imported from a WARC file.
    Warc {
        /// The file's path as given.
        file: String,
    },
}

/// What replay needs to reproduce the page's view of time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Seed {
    /// Recording start, Unix milliseconds: replay's `Date` starts here.
    pub start_ms: i64,
    /// IANA time zone of the recording ("UTC" when unknown).
    pub time_zone: String,
}

/// Counts and sizes of a snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Exchanges stored.
    pub exchanges: u64,
    /// Sum of decoded request and response body sizes (and WebSocket message payloads).
    pub body_bytes: u64,
    /// Exchanges with a captured response body.
    pub with_body: u64,
}

/// A snapshot's manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Unique name (may contain `/`, as in `run/task-id`).
    pub name: String,
    /// Internal id, the prefix of this snapshot's keys.
    pub id: u64,
    /// Lifecycle state.
    pub state: SnapshotState,
    /// Creation time, Unix milliseconds.
    pub created_ms: i64,
    /// Finalization time, if finalized.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_ms: Option<i64>,
    /// Determinism seed.
    pub seed: Seed,
    /// Origin of the data.
    pub source: SnapshotSource,
    /// webfreeze version that wrote it.
    pub tool_version: String,
    /// Counts and sizes.
    #[serde(default)]
    pub counts: Counts,
    /// Free-form labels (task id, site).
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// The frozen search engine's index of this snapshot's documents, stored beside it as a blob (built
    /// when the recording is sealed or imported, or by `webfreeze snapshots search-index`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_index: Option<DerivedRef>,
    /// The text the browser rendered of its pages, when a recording observed them (the agent's steps,
    /// exploration's visits): recorded data, not derived, so copies, merges and bundles carry it
    /// (`Store::rendered_text`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rendered_text: Option<DerivedRef>,
    /// How its request keys and path index were derived ([`crate::version::KEY_VERSION`] when recorded):
    /// replay refuses a snapshot whose key version is not this build's until `snapshots migrate`.
    #[serde(default = "crate::version::key_version_before_it_was_recorded")]
    pub key_version: u32,
}

/// A blob derived from a snapshot's exchanges (not one of them): what it is made with and where it is.
/// `gc` keeps it while the manifest names it, `verify` re-hashes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DerivedRef {
    /// Version of the derivation that made it; a reader that derives differently ignores it.
    pub version: u32,
    /// Hex BLAKE3 of the blob.
    pub hash: String,
    /// Items it holds (the documents of a search index).
    pub items: u64,
}

/// Label a copied snapshot carries (see `Store::copy_snapshot_from`): the name it was recorded under.
pub const RECORDED_AS_LABEL: &str = "recorded_as";

impl Manifest {
    /// The blobs it names besides its exchanges' bodies (its search index, its rendered text): what `gc`
    /// keeps and `verify` checks.
    pub fn side_blobs(&self) -> impl Iterator<Item = (&'static str, &DerivedRef)> {
        [("search index", &self.search_index), ("rendered text", &self.rendered_text)]
            .into_iter()
            .filter_map(|(what, r)| r.as_ref().map(|r| (what, r)))
    }

    /// The name this snapshot was recorded under: its own name, or for a copy (a merged shard's
    /// snapshot) the original's. Whatever was seeded from the name at recording time (replay's clock and
    /// random-number shim) must be seeded from this.
    pub fn recorded_as(&self) -> &str {
        self.labels.get(RECORDED_AS_LABEL).map(String::as_str).unwrap_or(&self.name)
    }
}

#[derive(Serialize)]
struct Versioned<'a, T> {
    v: u32,
    #[serde(flatten)]
    record: &'a T,
}

#[derive(Deserialize)]
struct VersionOnly {
    v: Option<u32>,
}

fn encode<T: Serialize>(v: u32, record: &T) -> Vec<u8> {
    // Serializing plain data structs to JSON cannot fail; fall back to an empty object rather than panic.
    serde_json::to_vec(&Versioned { v, record }).unwrap_or_else(|_| b"{}".to_vec())
}

fn decode<T: for<'de> Deserialize<'de>>(what: &'static str, bytes: &[u8]) -> Result<T, StoreError> {
    let version: VersionOnly =
        serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt { what, detail: e.to_string() })?;
    match version.v {
        Some(FIRST_VERSION..=FORMAT_VERSION) => {
            serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt { what, detail: e.to_string() })
        }
        Some(found) if found > FORMAT_VERSION => {
            Err(StoreError::NewerFormat { what, found, supported: FORMAT_VERSION })
        }
        Some(found) => Err(StoreError::Corrupt { what, detail: format!("unknown format version {found}") }),
        None => Err(StoreError::Corrupt { what, detail: "no format version".into() }),
    }
}

/// Encode an exchange record (JSON with `"v"`: 2 when it holds WebSocket messages, else 1).
pub fn encode_exchange(x: &Exchange) -> Vec<u8> {
    encode(if x.websocket.is_some() { 2 } else { FIRST_VERSION }, x)
}

/// Decode an exchange record of any supported version.
pub fn decode_exchange(bytes: &[u8]) -> Result<Exchange, StoreError> {
    decode("exchange", bytes)
}

/// The rendered-text record (`Store::rendered_text`): URL -> the text the browser rendered there, sorted
/// by URL, so the same pages encode to the same bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenderedText {
    /// URL -> text.
    pub pages: std::collections::BTreeMap<String, String>,
}

/// Encode a rendered-text record.
pub fn encode_rendered_text(r: &RenderedText) -> Vec<u8> {
    encode(FIRST_VERSION, r)
}

/// Decode a rendered-text record of any supported version.
pub fn decode_rendered_text(bytes: &[u8]) -> Result<RenderedText, StoreError> {
    decode("rendered text", bytes)
}

/// A snapshot's membership of a union (`Store::join_union`): what was checked when it joined, so a replay
/// that layers it need not scan its records again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnionMember {
    /// The union's name (the caller's: `session` names a site union by its recording and site).
    pub union: String,
    /// The snapshot's name.
    pub name: String,
    /// Its id.
    pub id: u64,
    /// Its exchange count, checked against its records and key index when it joined.
    pub exchanges: u64,
    /// The key version its path entries were derived by.
    pub key_version: u32,
    /// How the union's entries were derived (`crate::store::UNION_VERSION`).
    pub union_version: u32,
}

/// Encode a union membership record.
pub fn encode_union_member(u: &UnionMember) -> Vec<u8> {
    encode(FIRST_VERSION, u)
}

/// Decode a union membership record of any supported version.
pub fn decode_union_member(bytes: &[u8]) -> Result<UnionMember, StoreError> {
    decode("union member", bytes)
}

/// Encode a manifest record.
pub fn encode_manifest(m: &Manifest) -> Vec<u8> {
    encode(FIRST_VERSION, m)
}

/// Decode a manifest record of any supported version.
pub fn decode_manifest(bytes: &[u8]) -> Result<Manifest, StoreError> {
    decode("manifest", bytes)
}
