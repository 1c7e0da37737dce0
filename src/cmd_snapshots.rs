//! `webfreeze snapshots ...`: list, show, verify, gc, rm, import, export.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use anyhow::{bail, Context as _};
use serde_json::json;
use snapshots::har::{self, ImportOptions};
use snapshots::{Clock, Store, SystemClock, VerifyIssue};

use crate::cli::{ExportFormat, SnapshotsCmd};
use crate::config::Config;
use crate::output;

pub fn run(cfg: &Config, cmd: SnapshotsCmd) -> anyhow::Result<()> {
    match cmd {
        SnapshotsCmd::List { json } => list(cfg, json),
        SnapshotsCmd::Show { name, json, limit } => show(cfg, &name, json, limit),
        SnapshotsCmd::Verify { name, json } => verify(cfg, name.as_deref(), json),
        SnapshotsCmd::Gc { json } => gc(cfg, json),
        SnapshotsCmd::Rm { name } => rm(cfg, &name),
        SnapshotsCmd::Import { file, snapshot, json } => import(cfg, &file, &snapshot, json),
        SnapshotsCmd::Export { name, format, out } => export(cfg, &name, format, &out),
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
    let r = store.gc()?;
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

fn rm(cfg: &Config, name: &str) -> anyhow::Result<()> {
    let store = open_rw(cfg)?;
    let m = store.remove(name)?;
    println!(
        "removed snapshot {} ({} exchanges); run `webfreeze snapshots gc` to free bodies no other snapshot uses",
        m.name, m.counts.exchanges
    );
    Ok(())
}

enum Sniffed {
    Har,
    Warc,
    Unknown,
}

fn sniff(path: &Path) -> anyhow::Result<Sniffed> {
    let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut r = BufReader::new(f);
    let buf = r.fill_buf().with_context(|| format!("cannot read {}", path.display()))?;
    let buf = buf.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(buf);
    let first = buf.iter().find(|b| !b.is_ascii_whitespace()).copied();
    Ok(if buf.starts_with(b"WARC/") || buf.starts_with(&[0x1f, 0x8b]) {
        Sniffed::Warc
    } else if first == Some(b'{') {
        Sniffed::Har
    } else {
        Sniffed::Unknown
    })
}

fn import(cfg: &Config, file: &Path, snapshot: &str, as_json: bool) -> anyhow::Result<()> {
    match sniff(file)? {
        Sniffed::Har => {}
        Sniffed::Warc => bail!(
            "{} looks like a WARC file (or gzip); WARC import is not implemented yet: convert it to HAR, or wait for WARC support",
            file.display()
        ),
        Sniffed::Unknown => bail!("{} is neither HAR (JSON) nor WARC; nothing was imported", file.display()),
    }
    let store = open_rw(cfg)?;
    let f = File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
    let total = f.metadata().map(|m| m.len()).unwrap_or(0);
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_style(
        indicatif::ProgressStyle::with_template("{spinner} importing {msg} [{elapsed}]")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let reader = CountingReader { inner: f, counter: counter.clone() };
    let opts = ImportOptions {
        snapshot: snapshot.to_string(),
        source_file: file.display().to_string(),
        now_ms: SystemClock.now_ms(),
    };
    let report = har::import(&store, reader, &opts, |n| {
        if n % 64 == 0 {
            let done = counter.load(std::sync::atomic::Ordering::Relaxed);
            pb.set_message(format!("{n} entries ({}/{})", output::bytes(done), output::bytes(total)));
            pb.tick();
        }
    })?;
    pb.finish_and_clear();
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "file": file.display().to_string(), "snapshot": snapshot,
                "entries": report.entries, "imported": report.imported,
                "skipped": report.skipped.iter().map(|(i, r)| json!({"entry": i, "reason": r})).collect::<Vec<_>>(),
                "with_body": report.with_body, "body_not_captured": report.body_not_captured,
            }))?
        );
    } else {
        println!(
            "imported {} of {} entries from {} into snapshot {} ({} with a body, {} without a captured body, {} skipped)",
            report.imported,
            report.entries,
            file.display(),
            snapshot,
            report.with_body,
            report.body_not_captured,
            report.skipped.len()
        );
        for (i, reason) in report.skipped.iter().take(20) {
            println!("  skipped entry {i}: {reason}");
        }
        if report.skipped.len() > 20 {
            println!("  ... and {} more skipped", report.skipped.len() - 20);
        }
    }
    Ok(())
}

fn export(cfg: &Config, name: &str, format: ExportFormat, out: &Path) -> anyhow::Result<()> {
    let store = open_ro(cfg)?;
    match format {
        ExportFormat::Har => {
            let n = if out == Path::new("-") {
                har::export(&store, name, std::io::stdout().lock(), "stdout")?
            } else {
                // Write to a temporary file beside the target and rename, so a failure never leaves a
                // truncated HAR that looks whole.
                let tmp = out.with_extension("har.partial");
                let f = File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
                let n = har::export(&store, name, f, &out.display().to_string())?;
                std::fs::rename(&tmp, out).with_context(|| format!("cannot write {}", out.display()))?;
                n
            };
            if out != Path::new("-") {
                println!("exported {n} exchanges of snapshot {name} to {}", out.display());
            }
        }
    }
    Ok(())
}

/// Counts bytes read, for the progress display.
struct CountingReader<R> {
    inner: R,
    counter: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        Ok(n)
    }
}
