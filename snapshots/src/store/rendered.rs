//! The text the browser rendered of a snapshot's pages (`document.body.innerText`), kept beside the snapshot
//! as one content-addressed blob its manifest names ([`Manifest::rendered_text`]): what the frozen search
//! engine indexes for a page built by script, whose recorded HTML holds little text.
//!
//! Recorded, not derived: a recording adds to it while the snapshot is open or once it is sealed
//! ([`Store::add_rendered_text`]), and copies, merges and bundles carry it. The blob is a versioned record
//! of the persisted format (`format::RenderedText`, URLs sorted), so the same pages make the same bytes.

use std::collections::BTreeMap;

use super::Store;
use crate::format::{decode_rendered_text, encode_rendered_text, DerivedRef, Manifest, RenderedText};
use crate::StoreError;

/// Version of the rendered-text record a manifest names ([`DerivedRef::version`]).
pub const RENDERED_TEXT_VERSION: u32 = 1;

/// URL -> the text the browser rendered there.
pub type RenderedPages = BTreeMap<String, String>;

impl Store {
    /// The rendered text of `m`'s pages (empty when none was observed).
    pub fn rendered_text(&self, m: &Manifest) -> Result<RenderedPages, StoreError> {
        let Some(r) = &m.rendered_text else { return Ok(RenderedPages::new()) };
        if r.version > RENDERED_TEXT_VERSION {
            return Err(StoreError::Corrupt {
                what: "rendered text",
                detail: format!(
                    "snapshot {:?}: version {} (this webfreeze reads up to {RENDERED_TEXT_VERSION})",
                    m.name, r.version
                ),
            });
        }
        Ok(decode_rendered_text(&self.blob_bytes(&r.hash)?)?.pages)
    }

    /// Add `pages` to snapshot `name`'s rendered text (a URL observed again keeps its latest text) and name
    /// the new blob in its manifest. Nothing to add leaves it as it is.
    pub fn add_rendered_text(&self, name: &str, pages: RenderedPages) -> Result<Manifest, StoreError> {
        let mut m = self.manifest(name)?;
        if pages.is_empty() {
            return Ok(m);
        }
        let mut all = self.rendered_text(&m)?;
        all.extend(pages);
        let count = all.len() as u64;
        let blob = self.put_blob(&encode_rendered_text(&RenderedText { pages: all }))?;
        m.rendered_text = Some(DerivedRef { version: RENDERED_TEXT_VERSION, hash: blob.hash, items: count });
        self.put_manifest(&m)?;
        Ok(m)
    }
}
