//! Making a bundle ([`create`]): the parts written in order, each hashed as it goes, the manifest last.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use snapshots::format::{encode_exchange, encode_manifest};
use snapshots::{Manifest, Store};
use trajectory::RunDir;

use crate::{
    coverage_card, io, root_of, BundleError, BundleManifest, BundledSnapshot, Part, BUNDLE_VERSION,
    MANIFEST_PATH,
};

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
