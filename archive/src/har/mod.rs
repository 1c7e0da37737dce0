//! HAR 1.2 import and export.
//!
//! Import streams: the file is walked with a serde visitor and each entry is handled as soon as it is
//! parsed, so memory stays bounded by the largest single entry, not the file. It is deliberately lenient,
//! because real tools write odd HAR: a UTF-8 BOM, no `log.pages`, text or base64 bodies, missing bodies
//! (kept, flagged `body_not_captured`), status 0 / -1 with a captured body (Firefox writes that for
//! resources it served from its cache or a push: kept as 200 and counted), status 0 / -1 without one and
//! null methods (skipped and counted), any
//! `httpVersion` string. A malformed entry is skipped with its reason; only a file that is not JSON at all
//! (or has no `log.entries`) fails.
//!
//! Why not the `har` crate: its strict typed model rejects the quirks above (null methods, negative status,
//! missing required fields) for the whole file, and it parses the whole file into memory.
//!
//! Export writes HAR 1.2 entry by entry; fields HAR has no place for (exchange flags, ALPN, server address)
//! go into `_webfreeze` so that export -> import reproduces the same exchanges and bodies.
//!
//! WebSocket connections go both ways as Chromium writes them (`_webSocketMessages`, [`websocket`]).
//! Where a HAR carries the label of the control that sent a request: [`labels`].
//!
//! Import is `import.rs`, export `export.rs`: each is the mirror of the other (what export writes, import
//! reads back), so a field added to one is added to the other.

mod export;
mod import;
pub mod labels;
mod websocket;

// The first value of header `name` (any case): the store's one lookup on a record.
use snapshots::format::header_value as header;

pub use export::{export, export_records, WireRecord};
pub use import::{import, ImportReport};
