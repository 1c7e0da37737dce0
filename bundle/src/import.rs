//! Loading a bundle into a store ([`import`]): verified first, then blobs, snapshots and the run directory;
//! what a failed import created is removed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use snapshots::format::decode_manifest;
use snapshots::{Manifest, NewSnapshot, SnapshotState, Store};
use trajectory::RunDir;

use crate::verify::{check_part, read_parts, verify};
use crate::{io, BundleError, BUNDLE_LABEL};

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
