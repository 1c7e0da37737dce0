//! The sealing step: what a snapshot needs besides its records, derived once when it is sealed (a
//! recording, a task proxy's finish, an exploration, a crawl part), imported (HAR, WARC, a bundle), copied
//! by a merge, or asked for again (`webfreeze snapshots search-index`). A writer is sealed by [`finalize`]
//! (or [`finish`]), which seals and derives in one call; a snapshot sealed inside a crate below this one
//! (an import, a copy) is handed to [`after_seal`]. So a new derived structure is added here once:
//! - its frozen search index (`replay::search::store_index`), which replay's search answers from;
//! - its place in its site union (`snapshots::Store::join_union`, when [`crate::names::site_union_of`]
//!   names one): the check and the path entries a replay over thousands of the site's recordings reads
//!   instead of checking and scanning each of them at task start (`crate::union_sieve`).
//!
//! A failure is logged, not returned, by [`after_seal`]: the recording is whole without what is derived
//! from it, and replay derives both in memory when they are missing. [`derive`] returns it.

use snapshots::{Manifest, RenderedPages, SnapshotWriter, Store};

use crate::error::SessionError;

/// What [`derive`] made for one snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Derived {
    /// Documents in its stored search index.
    pub documents: usize,
    /// Bytes of that index.
    pub index_bytes: usize,
    /// The site union it joined, if it is a layer of one.
    pub site_union: Option<String>,
}

/// Derive and store everything snapshot `name` needs once sealed (see the module docs).
pub fn derive(store: &Store, name: &str) -> Result<Derived, SessionError> {
    let index = replay::search::store_index(store, name)
        .map_err(|source| SessionError::SearchIndex { snapshot: name.to_string(), source })?;
    let union = join_site_union(store, name)?;
    Ok(Derived { documents: index.documents, index_bytes: index.bytes, site_union: union })
}

/// [`derive`] for a snapshot just sealed: each part is tried whatever the other did, and a failure is
/// logged (with the command that derives it again).
pub fn after_seal(store: &Store, name: &str) {
    let index = replay::search::store_index(store, name)
        .map(|_| ())
        .map_err(|source| SessionError::SearchIndex { snapshot: name.to_string(), source });
    for r in [index, join_site_union(store, name).map(|_| ())] {
        if let Err(e) = r {
            tracing::warn!(
                "{e}; replay derives it in memory, or store it with `webfreeze snapshots search-index {name}`"
            );
        }
    }
}

/// How a recording ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Whole: `complete` (or `imported` for an import's writer).
    Complete,
    /// Stopped by an error: `interrupted`, and what it holds is derived all the same.
    Interrupted,
    /// Cancelled (a task proxy dropped before its finish, on the cancelling thread): `interrupted`, its
    /// rendered text kept and its place in its site union taken (cheap); its search index, which is not, is
    /// left to be derived later or in memory.
    Cancelled,
}

/// Seal the snapshot `writer` records `complete` (or `imported`) and derive what it needs: the one call a
/// recording's end makes. The manifest as stored after deriving (naming its index).
pub fn finalize(writer: &SnapshotWriter, finished_ms: i64) -> Result<Manifest, SessionError> {
    finish(writer, finished_ms, Ending::Complete, RenderedPages::default())
}

/// [`finalize`] as `ending` says, keeping `rendered` (the text the browser rendered of its pages, which
/// the search index reads) with the snapshot first.
pub fn finish(
    writer: &SnapshotWriter,
    finished_ms: i64,
    ending: Ending,
    rendered: RenderedPages,
) -> Result<Manifest, SessionError> {
    let m = match ending {
        Ending::Complete => writer.finalize(finished_ms)?,
        Ending::Interrupted | Ending::Cancelled => writer.interrupt(finished_ms)?,
    };
    let store = writer.store();
    keep_rendered(store, &m.name, rendered);
    if ending == Ending::Cancelled {
        if let Err(e) = join_site_union(store, &m.name) {
            tracing::warn!("{e}");
        }
    } else {
        after_seal(store, &m.name);
    }
    Ok(store.manifest(&m.name).unwrap_or(m))
}

/// Keep `pages` with snapshot `name` (logged, not returned: the recording is whole without them). After
/// the writer is sealed: until then it rewrites the manifest from its own copy.
pub fn keep_rendered(store: &Store, name: &str, pages: RenderedPages) {
    if pages.is_empty() {
        return;
    }
    if let Err(e) = store.add_rendered_text(name, pages) {
        tracing::warn!("{name}: the rendered text of its pages was not kept: {e}");
    }
}

/// Add snapshot `name` to its site union when it is a layer of one; the union's name.
pub fn join_site_union(store: &Store, name: &str) -> Result<Option<String>, SessionError> {
    let m = store.manifest(name)?;
    let Some(union) = crate::names::site_union_of(store, &m) else { return Ok(None) };
    store
        .join_union(&union, &m)
        .map_err(|source| SessionError::SiteUnion { snapshot: name.to_string(), source })?;
    Ok(Some(union))
}
