//! DokuWiki for the suite: `demo::dokuwiki` (shared with `cargo xtask bench coverage`).

pub(crate) use demo::dokuwiki::{DokuWiki, WIKI_PASSWORD, WIKI_USER};
