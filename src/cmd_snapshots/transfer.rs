//! `snapshots import` (format sniffed from the content) and `snapshots export`.

use std::fs::File;
use std::path::Path;

use anyhow::{bail, Context as _};
use archive::{har, warc, Format, ImportOptions, ImportReport};
use clock::{Clock, SystemClock};
use serde_json::json;

use super::{open_ro, open_rw};
use crate::cli::ExportFormat;
use crate::config::Config;
use crate::output;

/// `snapshots import FILE NAME`: the format is sniffed and the rules applied by `archive::import_file`;
/// this prints the progress line and the report.
pub(super) fn import(cfg: &Config, file: &Path, snapshot: &str, as_json: bool) -> anyhow::Result<()> {
    let store = open_rw(cfg)?;
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_style(
        indicatif::ProgressStyle::with_template("{spinner} importing {msg} [{elapsed}]")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    let opts = ImportOptions {
        snapshot: snapshot.to_string(),
        source_file: file.display().to_string(),
        now_ms: SystemClock.now_ms(),
    };
    let report = archive::import_file(&store, file, &opts, |p| {
        if p.items.is_multiple_of(64) {
            let read = if p.bytes_read > 0 {
                format!(" ({}/{})", output::bytes(p.bytes_read), output::bytes(p.total_bytes))
            } else {
                String::new()
            };
            match p.imported {
                Some(n) => pb.set_message(format!("{} records, {n} exchanges{read}", p.items)),
                None => pb.set_message(format!("{} entries{read}", p.items)),
            }
            pb.tick();
        }
    });
    pb.finish_and_clear();
    let imported = report?;
    if let Some(n) = imported.replaced_unfinished {
        eprintln!("note: replaced snapshot {snapshot:?}, left unfinished ({n} exchanges) by an import that did not complete");
    }
    session::seal::after_seal(&store, snapshot);
    let format = imported.report.format();
    match &imported.report {
        ImportReport::Har(r) => print_har(file, snapshot, r, as_json),
        ImportReport::Warc(r) | ImportReport::Wacz(r) => print_warc(file, snapshot, format, r, as_json),
    }
}

fn print_har(file: &Path, snapshot: &str, report: &har::ImportReport, as_json: bool) -> anyhow::Result<()> {
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "file": file.display().to_string(), "snapshot": snapshot, "format": Format::Har.name(),
                "entries": report.entries, "imported": report.imported,
                "skipped": report.skipped.iter().map(|(i, r)| json!({"entry": i, "reason": r})).collect::<Vec<_>>(),
                "with_body": report.with_body, "body_not_captured": report.body_not_captured,
                "status_inferred": report.status_inferred,
                "websockets": report.websockets,
                "websocket_messages_skipped": report.websocket_messages_skipped,
            }))?
        );
        return Ok(());
    }
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
    Ok(())
}

fn print_warc(
    file: &Path,
    snapshot: &str,
    format: Format,
    report: &warc::WarcImportReport,
    as_json: bool,
) -> anyhow::Result<()> {
    if as_json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "file": file.display().to_string(), "snapshot": snapshot,
                "format": format.name(),
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
