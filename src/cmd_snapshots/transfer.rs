//! `snapshots import` (format sniffed from the content) and `snapshots export`.

use super::*;

enum Sniffed {
    Har,
    Warc,
    Wacz,
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
    } else if buf.starts_with(b"PK\x03\x04") {
        Sniffed::Wacz
    } else if first == Some(b'{') {
        Sniffed::Har
    } else {
        Sniffed::Unknown
    })
}

/// A snapshot of this name that an import left unfinished (killed before sealing: still `recording`, or
/// `interrupted`) is removed, so the same import can simply be run again. This process holds the store's
/// single-writer lock, so no live process can be writing it. A sealed snapshot, or a proxy recording, is
/// left alone and the import refuses as before.
fn clear_unfinished_import(store: &snapshots::Store, name: &str) -> anyhow::Result<()> {
    let Ok(m) = store.manifest(name) else { return Ok(()) };
    let unfinished =
        matches!(m.state, snapshots::SnapshotState::Recording | snapshots::SnapshotState::Interrupted);
    if unfinished && !matches!(m.source, snapshots::SnapshotSource::Record) {
        eprintln!(
            "note: replacing snapshot {name:?}, left unfinished ({} exchanges) by an import that did not complete",
            m.counts.exchanges
        );
        store.remove(name)?;
    }
    Ok(())
}

pub(super) fn import(cfg: &Config, file: &Path, snapshot: &str, as_json: bool) -> anyhow::Result<()> {
    match sniff(file)? {
        Sniffed::Har => {}
        Sniffed::Warc => return import_archive(cfg, file, snapshot, as_json, false),
        Sniffed::Wacz => return import_archive(cfg, file, snapshot, as_json, true),
        Sniffed::Unknown => {
            bail!("{} is neither HAR (JSON), WARC nor WACZ; nothing was imported", file.display())
        }
    }
    let store = open_rw(cfg)?;
    clear_unfinished_import(&store, snapshot)?;
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
    replay::search::store_index_after_seal(&store, snapshot);
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "file": file.display().to_string(), "snapshot": snapshot,
                "entries": report.entries, "imported": report.imported,
                "skipped": report.skipped.iter().map(|(i, r)| json!({"entry": i, "reason": r})).collect::<Vec<_>>(),
                "with_body": report.with_body, "body_not_captured": report.body_not_captured,
                "status_inferred": report.status_inferred,
                "websockets": report.websockets,
                "websocket_messages_skipped": report.websocket_messages_skipped,
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
        if report.status_inferred > 0 {
            println!(
                "  {} entries had status 0 but a captured body (served from the capturing browser's cache): imported as 200",
                report.status_inferred
            );
        }
        if report.websockets > 0 {
            println!(
                "  {} WebSocket connections with their messages ({} messages left out: unknown type or opcode)",
                report.websockets, report.websocket_messages_skipped
            );
        }
        for (i, reason) in report.skipped.iter().take(20) {
            println!("  skipped entry {i}: {reason}");
        }
        if report.skipped.len() > 20 {
            println!("  ... and {} more skipped", report.skipped.len() - 20);
        }
    }
    Ok(())
}

/// WARC or WACZ import, with a progress line and the report.
fn import_archive(
    cfg: &Config,
    file: &Path,
    snapshot: &str,
    as_json: bool,
    wacz: bool,
) -> anyhow::Result<()> {
    let store = open_rw(cfg)?;
    clear_unfinished_import(&store, snapshot)?;
    let f = File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
    let total = f.metadata().map(|m| m.len()).unwrap_or(0);
    let pb = indicatif::ProgressBar::new(total);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} importing {bytes}/{total_bytes} {msg} [{elapsed}]",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let opts = WarcImportOptions {
        snapshot: snapshot.to_string(),
        source_file: file.display().to_string(),
        now_ms: SystemClock.now_ms(),
    };
    let progress = |r: &warc::WarcImportReport| {
        if r.records.is_multiple_of(256) {
            pb.set_position(counter.load(std::sync::atomic::Ordering::Relaxed));
            pb.set_message(format!("{} records, {} exchanges", r.records, r.imported));
        }
    };
    let report = if wacz {
        // The zip's entries are read through its central directory: progress counts records only.
        warc::import_wacz(&store, BufReader::new(f), &opts, progress)?
    } else {
        let reader = CountingReader { inner: f, counter: counter.clone() };
        warc::import_warc(&store, reader, &opts, progress)?
    };
    pb.finish_and_clear();
    if report.imported == 0 {
        // An empty snapshot would replay as "everything missed": refuse it and say why.
        let _ = store.remove(snapshot);
        let damage: Vec<String> = report
            .damaged
            .iter()
            .take(5)
            .map(|d| format!("{} at offset {}: {}", d.file, d.offset, d.reason))
            .collect();
        bail!(
            "no exchanges in {} ({} records; no HTTP response, resource or revisit record could be imported){}{}",
            file.display(),
            report.records,
            if damage.is_empty() { "" } else { "; damaged: " },
            damage.join("; ")
        );
    }
    replay::search::store_index_after_seal(&store, snapshot);
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "file": file.display().to_string(), "snapshot": snapshot, "format": if wacz { "wacz" } else { "warc" },
                "warc_files": report.warc_files, "records": report.records, "record_types": report.record_types,
                "imported": report.imported, "paired": report.paired, "without_request": report.without_request,
                "requests_without_response": report.requests_without_response,
                "revisits_resolved": report.revisits_resolved, "revisits_unresolved": report.revisits_unresolved,
                "revisits_resolved_forward": report.revisits_resolved_forward,
                "body_not_captured": report.body_not_captured, "skipped_not_http": report.skipped_not_http,
                "skipped": report.skipped.iter().map(|(u, r)| json!({"url": u, "reason": r})).collect::<Vec<_>>(),
                "damaged": report.damaged.iter().map(|d| json!({"file": d.file, "offset": d.offset, "reason": d.reason})).collect::<Vec<_>>(),
            }))?
        );
        return Ok(());
    }
    let types: Vec<String> = report.record_types.iter().map(|(t, n)| format!("{n} {t}")).collect();
    println!(
        "imported {} exchanges from {} into snapshot {} ({} records: {})",
        report.imported,
        file.display(),
        snapshot,
        report.records,
        types.join(", ")
    );
    println!(
        "  {} paired with their request record, {} with a synthesised GET; revisits: {} resolved ({} from an original later in the archive), {} unresolved (kept without a body)",
        report.paired, report.without_request, report.revisits_resolved, report.revisits_resolved_forward, report.revisits_unresolved
    );
    if report.skipped_not_http > 0 || report.requests_without_response > 0 {
        println!(
            "  skipped: {} records of non-HTTP URIs, {} requests without a response",
            report.skipped_not_http, report.requests_without_response
        );
    }
    for (u, r) in report.skipped.iter().take(20) {
        println!("  skipped {u}: {r}");
    }
    if !report.damaged.is_empty() {
        println!("  {} damaged records skipped (the rest was imported):", report.damaged.len());
        for d in report.damaged.iter().take(20) {
            println!("    {} at offset {}: {}", d.file, d.offset, d.reason);
        }
        if report.damaged.len() > 20 {
            println!("    ... and {} more", report.damaged.len() - 20);
        }
    }
    Ok(())
}

pub(super) fn export(cfg: &Config, name: &str, format: ExportFormat, out: &Path) -> anyhow::Result<()> {
    let store = open_ro(cfg)?;
    match format {
        ExportFormat::Warc | ExportFormat::Wacz => {
            let wacz = matches!(format, ExportFormat::Wacz);
            let gzip = wacz || out.extension().is_some_and(|e| e == "gz");
            let file = out.display().to_string();
            let r = if out == Path::new("-") {
                if wacz {
                    bail!("a WACZ is a zip and needs a file: give --out FILE.wacz");
                }
                warc::export_warc(&store, name, std::io::stdout().lock(), gzip, "stdout")?
            } else {
                // Into a temporary file beside the target, renamed when whole.
                let tmp = out.with_extension("partial");
                let f = File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
                let r = if wacz {
                    warc::export_wacz(&store, name, std::io::BufWriter::new(f), &file)
                } else {
                    warc::export_warc(&store, name, f, gzip, &file)
                };
                let r = match r {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = std::fs::remove_file(&tmp);
                        return Err(e.into());
                    }
                };
                std::fs::rename(&tmp, out).with_context(|| format!("cannot write {}", out.display()))?;
                r
            };
            if out != Path::new("-") {
                println!(
                    "exported snapshot {name} to {} ({}): {} responses, {} revisits, {} requests{}",
                    out.display(),
                    output::bytes(std::fs::metadata(out).map(|m| m.len()).unwrap_or(r.bytes)),
                    r.responses,
                    r.revisits,
                    r.requests,
                    if wacz { format!(", {} pages", r.pages) } else { String::new() }
                );
                if r.not_captured > 0 {
                    println!(
                        "  {} exchanges left out: their body was never captured (an empty body would replay as the wrong content)",
                        r.not_captured
                    );
                }
            }
        }
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
