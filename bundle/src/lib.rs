//! Bundles: one file that carries a frozen run to another machine and proves it arrived whole.
//!
//! A bundle is a tar archive (the `tar` crate; readable by any tar) of parts, in this order:
//! - `blobs/<blake3>.zst`: every body the snapshots reference and their rendered text, once, zstd-compressed;
//! - `snapshots/NNNN/manifest.json` and `snapshots/NNNN/exchanges.jsonl.zst`: each snapshot's manifest and
//!   its exchange records (the store's own versioned format), in name order;
//! - `run/...`: the run directory (run.json, eval.json, trajectories, messages, screenshots) when the
//!   bundle was made from a run, and `tasks/<file>`, its task file when readable;
//! - `webfreeze-bundle.json` last: the [`BundleManifest`]: format version, what is inside, and every
//!   part's path, size and BLAKE3, plus `root`, the BLAKE3 of that part list, which names the bundle.
//!
//! `verify` streams the file once: every part is hashed and checked against the manifest (a truncated
//! file, a changed byte, a missing or extra part is refused with the part named), blob contents are
//! re-hashed against their names, and exchange records decoded. `import` verifies first, then imports:
//! blobs into the store's content-addressed table, snapshots under their names (or `rename`'s run name),
//! keeping the name they were recorded under for the replay shim's seed. Importing the same bundle
//! again changes nothing; a name held by other content is refused. If an import fails half-way the
//! snapshots it created are removed. Memory: one part at a time (a body is compressed whole, so the
//! largest body bounds it).
//!
//! Rooms: the format (this file: the manifest, its parts, the errors), `create.rs` (the writer),
//! `verify.rs` (the streamed check, which `import.rs` runs first and reuses), `import.rs`, and `remote.rs`
//! (the object-storage copy).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

mod create;
mod import;
pub mod remote;
mod verify;

pub use create::{create, BundleSource, CreateReport};
pub use import::{import, ImportReport};
pub use verify::{verify, VerifyReport};

/// Format version of a bundle.
pub use snapshots::version::BUNDLE_VERSION;
/// The manifest's path in the archive (its last entry).
pub const MANIFEST_PATH: &str = "webfreeze-bundle.json";
/// Label an imported snapshot carries: the BLAKE3 of its exchanges part (what makes a re-import a no-op).
pub(crate) const BUNDLE_LABEL: &str = "bundle_exchanges";

/// One part of a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    /// Path inside the archive.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// BLAKE3, hex.
    pub blake3: String,
}

/// A snapshot in a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundledSnapshot {
    /// Name.
    pub name: String,
    /// Exchanges.
    pub exchanges: u64,
    /// Its manifest part.
    pub manifest: String,
    /// Its exchanges part.
    pub records: String,
}

/// `webfreeze-bundle.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleManifest {
    /// Format version.
    pub v: u32,
    /// webfreeze version that wrote it.
    pub webfreeze: String,
    /// The run's name (its directory name) or the snapshot prefix it was made from.
    pub name: String,
    /// Whether it carries a run directory (`run/`).
    pub has_run: bool,
    /// Snapshots.
    pub snapshots: Vec<BundledSnapshot>,
    /// The run's metadata as run.json and eval.json state it (mode, policy, versions, time zone, judge).
    #[serde(default)]
    pub meta: BTreeMap<String, serde_json::Value>,
    /// Every other part, in archive order.
    pub parts: Vec<Part>,
    /// BLAKE3 of the JSON of `parts`: the bundle's name.
    pub root: String,
}

/// A run's coverage card for the manifest, from `webfreeze coverage`'s report: steps served as recorded in
/// all and per site, and the tasks whose answer the frozen web cannot support. None without a report.
pub fn coverage_card(report: &Path) -> Option<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(report).ok()?).ok()?;
    let figures = |c: &serde_json::Value| serde_json::json!({"tasks": c["tasks"], "steps": c["steps"], "served": c["served"]});
    let sites: serde_json::Map<String, serde_json::Value> =
        v["sites"].as_object()?.iter().map(|(k, c)| (k.clone(), figures(c))).collect();
    Some(serde_json::json!({
        "total": figures(&v["total"]),
        "sites": sites,
        "unsupported_answers": v.get("unsupported_answers").cloned().unwrap_or_else(|| serde_json::json!([])),
    }))
}

/// What went wrong with a bundle.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// File I/O.
    #[error("{path}: {source}")]
    Io {
        /// Path.
        path: String,
        /// Error.
        #[source]
        source: std::io::Error,
    },
    /// The archive is damaged.
    #[error("{file}: not a whole webfreeze bundle: {why}")]
    Damaged {
        /// The bundle file.
        file: String,
        /// Which part and how.
        why: String,
    },
    /// Nothing to bundle.
    #[error(
        "no snapshot named {0:?} or starting with \"{0}/\" in the store (see `webfreeze snapshots list`)"
    )]
    Empty(String),
    /// A name the store already holds with other content.
    #[error("snapshot {0:?} already exists with other content; import under another run name with --rename NAME, or remove it with `webfreeze snapshots rm {0}`")]
    Clash(String),
    /// The run directory to write exists.
    #[error("{0} exists and is not empty; pass --run-dir to put the bundle's run elsewhere")]
    RunDirExists(String),
    /// A newer format.
    #[error(
        "{file}: bundle format {found} is newer than this webfreeze reads ({supported}); upgrade webfreeze"
    )]
    Newer {
        /// File.
        file: String,
        /// Its version.
        found: u32,
        /// Ours.
        supported: u32,
    },
    /// Store.
    #[error(transparent)]
    Store(#[from] snapshots::StoreError),
    /// Run directory.
    #[error(transparent)]
    RunDir(#[from] trajectory::RunDirError),
}

pub(crate) fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BundleError + '_ {
    move |source| BundleError::Io { path: path.display().to_string(), source }
}

/// The root hash of a part list: BLAKE3 of its JSON.
pub fn root_of(parts: &[Part]) -> String {
    blake3::hash(&serde_json::to_vec(parts).unwrap_or_default()).to_hex().to_string()
}

#[cfg(test)]
mod coverage_card_tests {
    #[test]
    fn the_card_holds_the_figures_of_the_report() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("coverage.json");
        assert_eq!(super::coverage_card(&p), None, "no report, no card");
        std::fs::write(
            &p,
            r#"{"run":"r","tasks":[],"sites":{"W":{"tasks":2,"steps":9,"served":7,"layers":{}}},
                "total":{"tasks":2,"steps":9,"served":7,"layers":{}},"unsupported_answers":["B (Zebra)"]}"#,
        )
        .unwrap();
        let c = super::coverage_card(&p).unwrap();
        assert_eq!(c["total"], serde_json::json!({"tasks": 2, "steps": 9, "served": 7}));
        assert_eq!(c["sites"]["W"]["served"], 7);
        assert_eq!(c["unsupported_answers"], serde_json::json!(["B (Zebra)"]));
        std::fs::write(&p, "not json").unwrap();
        assert_eq!(super::coverage_card(&p), None);
    }
}
