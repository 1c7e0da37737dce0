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
//! Size: one format's writer, verifier and importer, which share its part list and manifest; the object
//! storage copy is `remote.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use snapshots::format::{decode_exchange, decode_manifest, encode_exchange, encode_manifest};
use snapshots::{Manifest, NewSnapshot, SnapshotState, Store};
use trajectory::RunDir;

pub mod remote;

/// Format version of a bundle.
pub use snapshots::version::BUNDLE_VERSION;
/// The manifest's path in the archive (its last entry).
pub const MANIFEST_PATH: &str = "webfreeze-bundle.json";
/// Label an imported snapshot carries: the BLAKE3 of its exchanges part (what makes a re-import a no-op).
const BUNDLE_LABEL: &str = "bundle_exchanges";

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

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BundleError + '_ {
    move |source| BundleError::Io { path: path.display().to_string(), source }
}

/// The root hash of a part list: BLAKE3 of its JSON.
pub fn root_of(parts: &[Part]) -> String {
    blake3::hash(&serde_json::to_vec(parts).unwrap_or_default()).to_hex().to_string()
}

struct Writer<W: Write> {
    tar: tar::Builder<W>,
    parts: Vec<Part>,
    path: PathBuf,
}

/// Append one part with the fixed header every bundle uses (mode 0644, time 0), so the same parts give
/// the same file (what lets a pull reassemble the pushed file byte for byte).
pub(crate) fn append_part<W: Write>(
    tar: &mut tar::Builder<W>,
    name: &str,
    bytes: &[u8],
) -> std::io::Result<()> {
    let mut h = tar::Header::new_gnu();
    h.set_size(bytes.len() as u64);
    h.set_mode(0o644);
    h.set_mtime(0);
    h.set_cksum();
    tar.append_data(&mut h, name, bytes)
}

impl<W: Write> Writer<W> {
    fn add(&mut self, name: &str, bytes: &[u8]) -> Result<(), BundleError> {
        append_part(&mut self.tar, name, bytes).map_err(io(&self.path))?;
        self.parts.push(Part {
            path: name.to_string(),
            size: bytes.len() as u64,
            blake3: blake3::hash(bytes).to_hex().to_string(),
        });
        Ok(())
    }
}

fn zstd(bytes: &[u8], path: &Path) -> Result<Vec<u8>, BundleError> {
    zstd::encode_all(bytes, 9).map_err(io(path))
}

fn files_under(root: &Path) -> Result<Vec<PathBuf>, BundleError> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).map_err(io(&d))? {
            let e = e.map_err(io(&d))?;
            let p = e.path();
            if e.file_type().map_err(io(&p))?.is_dir() {
                stack.push(p);
            } else if !e.file_name().to_string_lossy().starts_with('.') {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Which snapshots `name` selects: the snapshot itself, or every `name/...`.
fn select(store: &Store, name: &str) -> Result<Vec<Manifest>, BundleError> {
    let ms: Vec<Manifest> =
        store.manifests()?.into_iter().filter(|m| snapshots::names::is_under(&m.name, name)).collect();
    if ms.is_empty() {
        return Err(BundleError::Empty(name.to_string()));
    }
    Ok(ms)
}

/// What [`create`] wrote.
#[derive(Debug, Clone)]
pub struct CreateReport {
    /// The manifest written last.
    pub manifest: BundleManifest,
    /// Bundle size in bytes.
    pub bytes: u64,
}

/// Write a bundle of `run` (a run directory; its snapshots are the ones run.json names) or of the
/// snapshots named `name` / `name/...` to `out` (temp file + rename: a crash leaves no half bundle).
pub fn create(store: &Store, source: BundleSource<'_>, out: &Path) -> Result<CreateReport, BundleError> {
    let (name, run_dir) = match source {
        BundleSource::Run(dir) => {
            let rf = RunDir::new(dir).read_run_file()?;
            let name = rf
                .snapshots
                .clone()
                .or_else(|| dir.file_name().and_then(|n| n.to_str()).map(str::to_string))
                .unwrap_or_default();
            (name, Some(dir))
        }
        BundleSource::Snapshots(name) => (name.to_string(), None),
    };
    let manifests = select(store, &name)?;
    let tmp =
        out.with_file_name(format!(".{}.tmp", out.file_name().and_then(|n| n.to_str()).unwrap_or("bundle")));
    let file = std::fs::File::create(&tmp).map_err(io(&tmp))?;
    let mut w = Writer {
        tar: tar::Builder::new(std::io::BufWriter::new(file)),
        parts: Vec::new(),
        path: tmp.clone(),
    };
    let result = (|| -> Result<BundleManifest, BundleError> {
        // Blobs first, so an import has every body before the exchanges that name it.
        let mut hashes = BTreeSet::new();
        for m in &manifests {
            store.check_snapshot(m)?;
            for x in store.exchanges(m) {
                let x = x?;
                for b in x.body_refs() {
                    hashes.insert(b.hash.clone());
                }
            }
            // Recorded beside the exchanges, so carried (the search index is derived again on import).
            if let Some(r) = &m.rendered_text {
                hashes.insert(r.hash.clone());
            }
        }
        for h in &hashes {
            let body = store.read_blob(h)?.read_all()?;
            w.add(&format!("blobs/{h}.zst"), &zstd(&body, &tmp)?)?;
        }
        let mut snaps = Vec::new();
        for (i, m) in manifests.iter().enumerate() {
            let dir = format!("snapshots/{i:04}");
            let mut lines = Vec::new();
            for x in store.exchanges(m) {
                lines.extend_from_slice(&encode_exchange(&x?));
                lines.push(b'\n');
            }
            w.add(&format!("{dir}/manifest.json"), &encode_manifest(m))?;
            w.add(&format!("{dir}/exchanges.jsonl.zst"), &zstd(&lines, &tmp)?)?;
            snaps.push(BundledSnapshot {
                name: m.name.clone(),
                exchanges: m.counts.exchanges,
                manifest: format!("{dir}/manifest.json"),
                records: format!("{dir}/exchanges.jsonl.zst"),
            });
        }
        let mut meta = BTreeMap::new();
        if let Some(dir) = run_dir {
            for f in files_under(dir)? {
                let rel = f.strip_prefix(dir).unwrap_or(&f).to_string_lossy().replace('\\', "/");
                w.add(&format!("run/{rel}"), &std::fs::read(&f).map_err(io(&f))?)?;
            }
            let rf = RunDir::new(dir).read_run_file()?;
            for (k, v) in [
                ("mode", serde_json::json!(rf.mode.as_str())),
                ("policy", serde_json::json!(rf.policy)),
                ("webfreeze", serde_json::json!(rf.webfreeze)),
                ("chrome_version", serde_json::json!(rf.chrome_version)),
                ("tasks_file", serde_json::json!(rf.tasks_file)),
            ] {
                meta.insert(k.to_string(), v);
            }
            let tf = Path::new(&rf.tasks_file);
            if let (Ok(bytes), Some(fname)) = (std::fs::read(tf), tf.file_name().and_then(|n| n.to_str())) {
                w.add(&format!("tasks/{fname}"), &bytes)?;
            }
            if let Ok(e) = std::fs::read(dir.join("eval.json")) {
                if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&e) {
                    meta.insert("judge".into(), v.get("judge").cloned().unwrap_or_default());
                }
            }
            // The coverage card (`webfreeze coverage RUN`): what an agent that did not record the run finds.
            if let Some(card) = coverage_card(&dir.join("coverage").join("coverage.json")) {
                meta.insert("coverage".into(), card);
            }
        }
        let zones: BTreeSet<&str> = manifests.iter().map(|m| m.seed.time_zone.as_str()).collect();
        meta.insert("time_zones".into(), serde_json::json!(zones));
        let manifest = BundleManifest {
            v: BUNDLE_VERSION,
            webfreeze: env!("CARGO_PKG_VERSION").into(),
            name: name.clone(),
            has_run: run_dir.is_some(),
            snapshots: snaps,
            meta,
            root: root_of(&w.parts),
            parts: w.parts.clone(),
        };
        let bytes = serde_json::to_vec_pretty(&manifest).unwrap_or_default();
        append_part(&mut w.tar, MANIFEST_PATH, &bytes).map_err(io(&tmp))?;
        let mut inner = w.tar.into_inner().map_err(io(&tmp))?;
        inner.flush().map_err(io(&tmp))?;
        inner.get_ref().sync_all().map_err(io(&tmp))?;
        Ok(manifest)
    })();
    match result {
        Ok(manifest) => {
            std::fs::rename(&tmp, out).map_err(io(out))?;
            let bytes = std::fs::metadata(out).map_err(io(out))?.len();
            Ok(CreateReport { manifest, bytes })
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// What a bundle is made from.
#[derive(Debug, Clone, Copy)]
pub enum BundleSource<'a> {
    /// A run directory and the snapshots its run.json names.
    Run(&'a Path),
    /// A snapshot, or every snapshot under a prefix.
    Snapshots(&'a str),
}

/// One pass over a bundle's parts: `visit(path, bytes)` for each part after its hash was checked.
fn read_parts(
    file: &Path,
    mut visit: impl FnMut(&str, &[u8]) -> Result<(), BundleError>,
) -> Result<BundleManifest, BundleError> {
    let damaged = |why: String| BundleError::Damaged { file: file.display().to_string(), why };
    let f = std::fs::File::open(file).map_err(io(file))?;
    let mut ar = tar::Archive::new(std::io::BufReader::new(f));
    let mut seen: Vec<Part> = Vec::new();
    let mut manifest: Option<BundleManifest> = None;
    let entries = ar.entries().map_err(|e| damaged(format!("not a tar archive: {e}")))?;
    for entry in entries {
        let mut entry =
            entry.map_err(|e| damaged(format!("cut short or damaged after part {} ({e})", seen.len())))?;
        let path = entry.path().map_err(|e| damaged(e.to_string()))?.to_string_lossy().into_owned();
        if manifest.is_some() {
            return Err(damaged(format!("part {path} after the manifest")));
        }
        let mut bytes = Vec::with_capacity(entry.size() as usize);
        entry.read_to_end(&mut bytes).map_err(|e| damaged(format!("part {path} is cut short: {e}")))?;
        if bytes.len() as u64 != entry.size() {
            return Err(damaged(format!("part {path} is cut short")));
        }
        if path == MANIFEST_PATH {
            #[derive(Deserialize)]
            struct V {
                v: u32,
            }
            let v: V =
                serde_json::from_slice(&bytes).map_err(|e| damaged(format!("{MANIFEST_PATH}: {e}")))?;
            if v.v > BUNDLE_VERSION {
                return Err(BundleError::Newer {
                    file: file.display().to_string(),
                    found: v.v,
                    supported: BUNDLE_VERSION,
                });
            }
            manifest =
                Some(serde_json::from_slice(&bytes).map_err(|e| damaged(format!("{MANIFEST_PATH}: {e}")))?);
            continue;
        }
        seen.push(Part {
            path: path.clone(),
            size: bytes.len() as u64,
            blake3: blake3::hash(&bytes).to_hex().to_string(),
        });
        visit(&path, &bytes)?;
    }
    let m =
        manifest.ok_or_else(|| damaged(format!("no {MANIFEST_PATH} at the end (the file is truncated)")))?;
    if root_of(&m.parts) != m.root {
        return Err(damaged("the manifest's part list does not match its root hash".into()));
    }
    for (i, want) in m.parts.iter().enumerate() {
        match seen.get(i) {
            None => return Err(damaged(format!("part {} is missing", want.path))),
            Some(got) if got.path != want.path => {
                return Err(damaged(format!("part {} found where {} should be", got.path, want.path)))
            }
            Some(got) if got != want => {
                return Err(damaged(format!(
                    "part {}: BLAKE3 {} but the manifest says {} (changed or damaged)",
                    want.path, got.blake3, want.blake3
                )))
            }
            Some(_) => {}
        }
    }
    if seen.len() > m.parts.len() {
        return Err(damaged(format!("part {} is not in the manifest", seen[m.parts.len()].path)));
    }
    Ok(m)
}

fn unzstd(path: &str, bytes: &[u8], file: &Path) -> Result<Vec<u8>, BundleError> {
    zstd::decode_all(bytes).map_err(|e| BundleError::Damaged {
        file: file.display().to_string(),
        why: format!("part {path}: {e}"),
    })
}

/// A verified bundle.
#[derive(Debug, Clone)]
pub struct VerifyReport {
    /// Its manifest.
    pub manifest: BundleManifest,
    /// Bodies checked.
    pub blobs: usize,
    /// Exchange records decoded.
    pub exchanges: u64,
}

/// Check everything in `file` without importing it. Parts are checked against the manifest only
/// after the whole file was read (the manifest comes last), so a part's content is re-checked too: a
/// blob against its name, every exchange record by decoding it.
pub fn verify(file: &Path) -> Result<VerifyReport, BundleError> {
    let (mut blobs, mut exchanges) = (0usize, 0u64);
    let mut counted: BTreeMap<String, u64> = BTreeMap::new();
    let mut order: BTreeMap<String, usize> = BTreeMap::new();
    let manifest = read_parts(file, |path, bytes| {
        let n = order.len();
        order.entry(path.to_string()).or_insert(n);
        let mut count = |records: &str, xs: Vec<snapshots::Exchange>| {
            counted.insert(records.to_string(), xs.len() as u64);
            Ok(())
        };
        check_part(file, path, bytes, &mut |_| Ok(()), &mut count).map(|(b, x)| {
            blobs += b;
            exchanges += x;
        })
    })?;
    // The index's counts must be the records' (found by fuzzing: an index edited to say otherwise passed,
    // and every import of it looked unfinished).
    for s in &manifest.snapshots {
        // Import reads a snapshot's records into the snapshot its manifest part made: the manifest first
        // (found by fuzzing: the other order verified, then failed to import).
        let why = match (order.get(&s.manifest), order.get(&s.records)) {
            (None, _) => Some(format!("snapshot {}: its manifest part {} is missing", s.name, s.manifest)),
            (Some(m), Some(r)) if r < m => Some(format!("{} before its manifest", s.records)),
            _ => None,
        };
        if let Some(why) = why {
            return Err(BundleError::Damaged { file: file.display().to_string(), why });
        }
        let held = counted.get(&s.records).copied().unwrap_or(0);
        if held != s.exchanges {
            return Err(BundleError::Damaged {
                file: file.display().to_string(),
                why: format!(
                    "snapshot {}: the index says {} exchanges, its records hold {held}",
                    s.name, s.exchanges
                ),
            });
        }
    }
    Ok(VerifyReport { manifest, blobs, exchanges })
}

/// Receives a snapshot's decoded exchange records, with the path of their part.
type OnRecords<'a> = dyn FnMut(&str, Vec<snapshots::Exchange>) -> Result<(), BundleError> + 'a;

/// Decode a part; hand blobs and exchange records to the callbacks. Returns (blobs, exchanges) seen.
fn check_part(
    file: &Path,
    path: &str,
    bytes: &[u8],
    on_blob: &mut dyn FnMut(&[u8]) -> Result<(), BundleError>,
    on_records: &mut OnRecords<'_>,
) -> Result<(usize, u64), BundleError> {
    let damaged = |why: String| BundleError::Damaged { file: file.display().to_string(), why };
    if let Some(h) = path.strip_prefix("blobs/").and_then(|p| p.strip_suffix(".zst")) {
        let body = unzstd(path, bytes, file)?;
        if blake3::hash(&body).to_hex().as_str() != h {
            return Err(damaged(format!("part {path}: the body's BLAKE3 is not its name")));
        }
        on_blob(&body)?;
        return Ok((1, 0));
    }
    if path.starts_with("snapshots/") && path.ends_with("/exchanges.jsonl.zst") {
        let text = unzstd(path, bytes, file)?;
        let mut xs = Vec::new();
        for (i, line) in text.split(|b| *b == b'\n').filter(|l| !l.is_empty()).enumerate() {
            xs.push(
                decode_exchange(line).map_err(|e| damaged(format!("part {path}, record {}: {e}", i + 1)))?,
            );
        }
        let n = xs.len() as u64;
        on_records(path, xs)?;
        return Ok((0, n));
    }
    if path.starts_with("snapshots/") && path.ends_with("/manifest.json") {
        decode_manifest(bytes).map_err(|e| damaged(format!("part {path}: {e}")))?;
    }
    Ok((0, 0))
}

/// What [`import`] did.
#[derive(Debug, Clone, Default)]
pub struct ImportReport {
    /// Snapshots created.
    pub imported: Vec<String>,
    /// Snapshots already there from this bundle (a re-import).
    pub already: Vec<String>,
    /// Snapshots an earlier import of this bundle left unfinished (killed midway), imported again.
    pub redone: Vec<String>,
    /// Bodies written (new to the store).
    pub blobs: usize,
    /// Where the run directory went.
    pub run_dir: Option<PathBuf>,
}

/// Verify `file`, then load it into `store`: snapshots under their names, or with `rename` their run
/// prefix replaced; the run directory (if any) into `run_dir`.
pub fn import(
    file: &Path,
    store: &Store,
    rename: Option<&str>,
    run_dir: Option<&Path>,
) -> Result<ImportReport, BundleError> {
    let checked = verify(file)?;
    let m = &checked.manifest;
    let new_name = |old: &str| -> String {
        match rename {
            Some(r) => snapshots::names::moved(old, &m.name, r),
            None => old.to_string(),
        }
    };
    // Decide everything that can be refused before writing anything.
    let mut report = ImportReport::default();
    let mut todo = BTreeMap::new(); // records part -> (new name, manifest part)
    for s in &m.snapshots {
        let name = new_name(&s.name);
        let part = m.parts.iter().find(|p| p.path == s.records).map(|p| p.blake3.clone()).unwrap_or_default();
        match store.manifest(&name) {
            // From this bundle and whole: a re-import. From this bundle but cut short (an import killed
            // midway leaves it `interrupted` with fewer exchanges): replaced below, once nothing is refused.
            Ok(existing) if existing.labels.get(BUNDLE_LABEL) == Some(&part) => {
                if existing.state != SnapshotState::Recording && existing.counts.exchanges == s.exchanges {
                    report.already.push(name);
                } else {
                    report.redone.push(name.clone());
                    todo.insert(s.records.clone(), (name, s.manifest.clone(), part));
                }
            }
            Ok(_) => return Err(BundleError::Clash(name)),
            Err(_) => {
                todo.insert(s.records.clone(), (name, s.manifest.clone(), part));
            }
        }
    }
    let run_target = match (m.has_run, run_dir) {
        (false, _) => None,
        (true, Some(d)) => Some(d.to_path_buf()),
        (true, None) => Some(PathBuf::from(rename.unwrap_or(&m.name))),
    };
    // A re-import of a bundle whose snapshots and run directory are all there already changes nothing.
    let run_target = run_target.filter(|d| !(todo.is_empty() && d.join("run.json").is_file()));
    if let Some(d) = &run_target {
        if std::fs::read_dir(d).map(|mut e| e.next().is_some()).unwrap_or(false) {
            return Err(BundleError::RunDirExists(d.display().to_string()));
        }
    }
    for name in &report.redone {
        store.remove(name)?;
    }
    let staging = run_target.as_ref().map(|d| {
        let name = d.file_name().and_then(|n| n.to_str()).unwrap_or("run");
        d.with_file_name(format!(".{name}.importing"))
    });
    // What an import killed midway staged is started over.
    if let Some(st) = staging.as_ref().filter(|st| st.exists()) {
        std::fs::remove_dir_all(st).map_err(io(st))?;
    }
    let mut created: Vec<String> = Vec::new();
    let mut manifests: BTreeMap<String, Manifest> = BTreeMap::new();
    let result = read_parts(file, |path, bytes| {
        if path.starts_with("snapshots/") && path.ends_with("/manifest.json") {
            manifests.insert(path.to_string(), decode_manifest(bytes)?);
            return Ok(());
        }
        if let (Some(rel), Some(st)) = (path.strip_prefix("run/"), &staging) {
            return Ok(RunDir::new(st).write_file(rel, bytes)?);
        }
        check_part(
            file,
            path,
            bytes,
            &mut |body| {
                let mut w = store.blob_writer();
                w.write(body)?;
                w.finish()?;
                report.blobs += 1;
                Ok(())
            },
            &mut |records_path, xs| {
                let Some((name, manifest_path, part)) = todo.get(records_path) else { return Ok(()) };
                let Some(orig) = manifests.get(manifest_path) else {
                    return Err(BundleError::Damaged {
                        file: file.display().to_string(),
                        why: format!("{records_path} before its manifest"),
                    });
                };
                let mut labels = orig.labels.clone();
                labels
                    .insert(snapshots::format::RECORDED_AS_LABEL.to_string(), orig.recorded_as().to_string());
                labels.insert(BUNDLE_LABEL.to_string(), part.clone());
                let w = store.create_snapshot(NewSnapshot {
                    name: name.clone(),
                    created_ms: orig.created_ms,
                    seed: orig.seed.clone(),
                    source: orig.source.clone(),
                    labels,
                })?;
                created.push(name.clone());
                for x in xs {
                    w.append(x)?;
                }
                let end = orig.finished_ms.unwrap_or(orig.created_ms);
                let mut sealed = match orig.state {
                    SnapshotState::Interrupted | SnapshotState::Recording => w.interrupt(end)?,
                    _ => w.finalize(end)?,
                };
                if let Some(r) = &orig.rendered_text {
                    sealed.rendered_text = Some(r.clone());
                    store.put_manifest(&sealed)?;
                }
                // Keys derived by another version (a bundle made by another webfreeze) are derived again.
                if orig.key_version != snapshots::version::KEY_VERSION {
                    sealed.key_version = orig.key_version;
                    store.put_manifest(&sealed)?;
                    store.migrate_keys(name)?;
                }
                Ok(())
            },
        )
        .map(|_| ())
    });
    let finish = result.and_then(|_| {
        if let (Some(st), Some(d)) = (&staging, &run_target) {
            // A renamed import replays its own snapshots by default.
            if rename.is_some() {
                let rd = RunDir::new(st);
                if let Ok(mut rf) = rd.read_run_file() {
                    rf.snapshots = rf.snapshots.map(|s| new_name(&s));
                    rd.write_run_file(&rf)?;
                }
            }
            if d.exists() {
                std::fs::remove_dir(d).map_err(io(d))?;
            }
            std::fs::rename(st, d).map_err(io(d))?;
        }
        store.flush()?;
        Ok(())
    });
    match finish {
        Ok(()) => {
            report.imported = created;
            report.run_dir = run_target;
            Ok(report)
        }
        Err(e) => {
            for n in &created {
                let _ = store.remove(n);
            }
            if let Some(st) = &staging {
                let _ = std::fs::remove_dir_all(st);
            }
            Err(e)
        }
    }
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
