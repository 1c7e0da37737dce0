//! `webfreeze snapshots ...`: list, show, verify, gc, rm, import, export.

use anyhow::bail;
use serde_json::json;
use snapshots::{Store, VerifyIssue};

use crate::cli::SnapshotsCmd;
use crate::config::Config;
use crate::output;

mod crawl;
pub(crate) mod diff;
mod explore;
mod transfer;

use transfer::{export, import};

pub(crate) fn run(cfg: &Config, cmd: SnapshotsCmd) -> anyhow::Result<()> {
    match cmd {
        SnapshotsCmd::List { json } => list(cfg, json),
        SnapshotsCmd::Show { name, json, limit } => show(cfg, &name, json, limit),
        SnapshotsCmd::Verify { name, json } => verify(cfg, name.as_deref(), json),
        SnapshotsCmd::Diff { a, b, json, lines, html } => {
            diff::run(cfg, &a, &b, json, lines, html.as_deref())
        }
        SnapshotsCmd::Merge { sources, into, runs: false } => merge(cfg, &sources, &into),
        SnapshotsCmd::Merge { sources, into, runs: true } => merge_runs(cfg, &sources, &into),
        SnapshotsCmd::Gc { json } => gc(cfg, json),
        SnapshotsCmd::Rm { name } => rm(cfg, &name),
        SnapshotsCmd::Import { file, snapshot, json } => import(cfg, &file, &snapshot, json),
        SnapshotsCmd::Export { name, format, out } => export(cfg, &name, format, &out),
        cmd @ SnapshotsCmd::Explore { .. } => explore::run(cfg, cmd),
        cmd @ SnapshotsCmd::Crawl { .. } => crawl::run(cfg, cmd),
        SnapshotsCmd::SearchIndex { names, all } => search_index(cfg, names, all),
        SnapshotsCmd::Migrate { names, all } => migrate(cfg, names, all),
    }
}

fn open_ro(cfg: &Config) -> anyhow::Result<Store> {
    Ok(Store::open_read_only(&cfg.store)?)
}

fn open_rw(cfg: &Config) -> anyhow::Result<Store> {
    Ok(Store::open(&cfg.store)?)
}

fn list(cfg: &Config, as_json: bool) -> anyhow::Result<()> {
    if !cfg.store.join("CURRENT").exists() {
        if as_json {
            println!("[]");
        } else {
            println!("no snapshots (store {} does not exist yet)", cfg.store.display());
        }
        return Ok(());
    }
    let store = open_ro(cfg)?;
    let ms = store.manifests()?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&ms)?);
        return Ok(());
    }
    if ms.is_empty() {
        println!("no snapshots in {}", cfg.store.display());
        return Ok(());
    }
    let rows: Vec<Vec<String>> = ms
        .iter()
        .map(|m| {
            vec![
                m.name.clone(),
                m.state.to_string(),
                m.counts.exchanges.to_string(),
                output::bytes(m.counts.body_bytes),
                output::time_ms(m.created_ms),
                match &m.source {
                    snapshots::SnapshotSource::Record => "record".into(),
                    snapshots::SnapshotSource::Har { file } => format!("har:{file}"),
                    snapshots::SnapshotSource::Warc { file } => format!("warc:{file}"),
                },
            ]
        })
        .collect();
    output::table(&["NAME", "STATE", "EXCHANGES", "BODIES", "CREATED", "SOURCE"], &rows);
    Ok(())
}

fn show(cfg: &Config, name: &str, as_json: bool, limit: usize) -> anyhow::Result<()> {
    let store = open_ro(cfg)?;
    let m = store.manifest(name)?;
    let xs: Vec<_> = store.exchanges(&m).take(limit).collect::<Result<_, _>>()?;
    if as_json {
        println!("{}", serde_json::to_string_pretty(&json!({"manifest": m, "exchanges": xs}))?);
        return Ok(());
    }
    println!("snapshot     {}", m.name);
    println!("state        {}", m.state);
    println!("exchanges    {} ({} with a response body)", m.counts.exchanges, m.counts.with_body);
    println!("body bytes   {}", output::bytes(m.counts.body_bytes));
    println!("created      {}", output::time_ms(m.created_ms));
    if let Some(f) = m.finished_ms {
        println!("finished     {}", output::time_ms(f));
    }
    println!("seed         {} ({})", output::time_ms(m.seed.start_ms), m.seed.time_zone);
    println!("source       {}", serde_json::to_string(&m.source)?);
    println!("tool         webfreeze {}", m.tool_version);
    for (k, v) in &m.labels {
        println!("label        {k}={v}");
    }
    if !xs.is_empty() {
        println!();
        let rows: Vec<Vec<String>> = xs
            .iter()
            .map(|x| {
                let mut flags = Vec::new();
                if x.flags.truncated {
                    flags.push("truncated");
                }
                if x.flags.body_not_captured {
                    flags.push("no-body");
                }
                if x.flags.decode_failed {
                    flags.push("decode-failed");
                }
                vec![
                    x.seq.to_string(),
                    x.request.method.clone(),
                    x.response.status.to_string(),
                    x.response.body.as_ref().map_or("-".into(), |b| output::bytes(b.size)),
                    flags.join(","),
                    x.request.url.clone(),
                ]
            })
            .collect();
        output::table(&["SEQ", "METHOD", "STATUS", "BODY", "FLAGS", "URL"], &rows);
        if (m.counts.exchanges as usize) > xs.len() {
            println!("... {} more (use --limit N)", m.counts.exchanges as usize - xs.len());
        }
    }
    Ok(())
}

fn verify(cfg: &Config, name: Option<&str>, as_json: bool) -> anyhow::Result<()> {
    let store = open_ro(cfg)?;
    let r = store.verify(name)?;
    let issues: Vec<serde_json::Value> = r
        .issues
        .iter()
        .map(|i| match i {
            VerifyIssue::CorruptBlob { hash, detail } => {
                json!({"kind": "corrupt_blob", "blob": hash, "detail": detail})
            }
            VerifyIssue::MissingBlob { hash, snapshot, seq } => {
                json!({"kind": "missing_blob", "blob": hash, "snapshot": snapshot, "seq": seq})
            }
            VerifyIssue::BadRecord { snapshot, detail } => {
                json!({"kind": "bad_record", "snapshot": snapshot, "detail": detail})
            }
        })
        .collect();
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "snapshots": r.snapshots, "exchanges": r.exchanges, "blobs": r.blobs,
                "bytes": r.bytes, "ok": r.issues.is_empty(), "issues": issues,
            }))?
        );
    } else {
        println!(
            "checked {} snapshot(s), {} exchange(s), {} blob(s), {} of bodies",
            r.snapshots,
            r.exchanges,
            r.blobs,
            output::bytes(r.bytes)
        );
        for i in &r.issues {
            match i {
                VerifyIssue::CorruptBlob { hash, detail } => println!("CORRUPT blob {hash}: {detail}"),
                VerifyIssue::MissingBlob { hash, snapshot, seq } => {
                    println!("MISSING blob {hash} (snapshot {snapshot}, exchange {seq})")
                }
                VerifyIssue::BadRecord { snapshot, detail } => println!("BAD RECORD in {snapshot}: {detail}"),
            }
        }
        if r.issues.is_empty() {
            println!("ok");
        }
    }
    if !r.issues.is_empty() {
        bail!(
            "{} problem(s) found; re-import or re-record the affected snapshots (the exchanges above name them)",
            r.issues.len()
        );
    }
    Ok(())
}

fn gc(cfg: &Config, as_json: bool) -> anyhow::Result<()> {
    let store = open_rw(cfg)?;
    // A line after the first batch, then at most one a second: a long gc shows it is moving.
    let mut last: Option<std::time::Instant> = None;
    let r = store.gc_with_progress(&mut |r| {
        if last.is_none_or(|t| t.elapsed() >= std::time::Duration::from_secs(1)) {
            eprintln!("gc: {} blob(s) and {} chunk(s) deleted so far", r.blobs_deleted, r.chunks_deleted);
            last = Some(std::time::Instant::now());
        }
    })?;
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "blobs_kept": r.blobs_kept, "blobs_deleted": r.blobs_deleted,
                "chunks_deleted": r.chunks_deleted, "bytes_freed": r.bytes_freed,
            }))?
        );
    } else {
        println!(
            "deleted {} blob(s) and {} chunk(s), freed {}; {} blob(s) still referenced",
            r.blobs_deleted,
            r.chunks_deleted,
            output::bytes(r.bytes_freed),
            r.blobs_kept
        );
    }
    Ok(())
}

/// Says a merge replaced an unfinished snapshot of the same merge.
fn note_replaced(dest: &str, replaced: Option<u64>) {
    if let Some(n) = replaced {
        eprintln!("note: replaced {dest:?}, left unfinished ({n} exchanges) by the same merge");
    }
}

fn merge(cfg: &Config, sources: &[String], into: &str) -> anyhow::Result<()> {
    let store = open_rw(cfg)?;
    match session::merge_snapshots(&store, sources, into)? {
        session::SnapshotMerge::Now { manifest, replaced } => {
            note_replaced(into, replaced);
            eprintln!(
                "merged {} snapshot(s) into {into:?}: {} exchanges, {}",
                sources.len(),
                manifest.counts.exchanges,
                manifest.state
            )
        }
        // A sealed snapshot is never replaced, not even by the merge that made it.
        session::SnapshotMerge::Before => bail!(
            "snapshot {into:?} exists already (this same merge, finished); pick another --into or `webfreeze snapshots rm {into}` first"
        ),
    }
    Ok(())
}

/// `merge --runs`: the recordings merged task by task (`session::merge_recordings`), with progress.
fn merge_runs(cfg: &Config, runs: &[String], into: &str) -> anyhow::Result<()> {
    let store = open_rw(cfg)?;
    let r = session::merge_recordings(&store, runs, into, &|i, n, dest, done, sources| match done {
        session::SnapshotMerge::Now { manifest, replaced } => {
            note_replaced(dest, *replaced);
            eprintln!(
                "[{i}/{n}] {dest}: {sources} of {} recording(s), {} exchanges",
                runs.len(),
                manifest.counts.exchanges
            )
        }
        session::SnapshotMerge::Before => eprintln!("[{i}/{n}] {dest}: merged already"),
    })?;
    eprintln!(
        "merged {} recording(s) into {into:?}: {} task(s) ({} merged now, {} before)",
        runs.len(),
        r.merged + r.before,
        r.merged,
        r.before
    );
    Ok(())
}

fn search_index(cfg: &Config, names: Vec<String>, all: bool) -> anyhow::Result<()> {
    let store = open_rw(cfg)?;
    let names = if all { store.manifests()?.into_iter().map(|m| m.name).collect() } else { names };
    // Every name is checked before anything is written.
    for n in &names {
        store.manifest(n)?;
    }
    let total = names.len();
    for (i, n) in names.iter().enumerate() {
        let s = session::seal::derive(&store, n)?;
        let union = match &s.site_union {
            Some(u) => format!("; joined the {}", u.replace('\n', " ")),
            None => String::new(),
        };
        eprintln!(
            "[{}/{total}] {n}: {} document(s) indexed, {} (index version {}){union}",
            i + 1,
            s.documents,
            output::bytes(s.index_bytes as u64),
            replay::search::INDEX_VERSION
        );
    }
    store.flush()?;
    Ok(())
}

fn migrate(cfg: &Config, names: Vec<String>, all: bool) -> anyhow::Result<()> {
    let store = open_rw(cfg)?;
    let current = snapshots::version::KEY_VERSION;
    let names: Vec<String> = if all {
        store.manifests()?.into_iter().filter(|m| m.key_version != current).map(|m| m.name).collect()
    } else {
        names
    };
    for n in &names {
        store.manifest(n)?;
    }
    if names.is_empty() {
        eprintln!("every snapshot's keys are derived by key version {current} already: nothing to migrate");
    }
    let total = names.len();
    for (i, n) in names.iter().enumerate() {
        let r = store.migrate_keys(n)?;
        eprintln!(
            "[{}/{total}] {n}: key version {} -> {}: {} exchange(s), {} key(s) changed; every exchange found by \
             its own key",
            i + 1,
            r.from,
            r.to,
            r.exchanges,
            r.keys_changed
        );
    }
    store.flush()?;
    Ok(())
}

fn rm(cfg: &Config, name: &str) -> anyhow::Result<()> {
    let store = open_rw(cfg)?;
    let m = store.remove(name)?;
    println!(
        "removed snapshot {} ({} exchanges); run `webfreeze snapshots gc` to free bodies no other snapshot uses",
        m.name, m.counts.exchanges
    );
    Ok(())
}
