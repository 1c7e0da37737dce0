//! `snapshots import` (format sniffed from the content) and `snapshots export`.

use super::*;

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

pub(super) fn import(cfg: &Config, file: &Path, snapshot: &str, as_json: bool) -> anyhow::Result<()> {
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
                "status_inferred": report.status_inferred,
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
        for (i, reason) in report.skipped.iter().take(20) {
            println!("  skipped entry {i}: {reason}");
        }
        if report.skipped.len() > 20 {
            println!("  ... and {} more skipped", report.skipped.len() - 20);
        }
    }
    Ok(())
}

pub(super) fn export(cfg: &Config, name: &str, format: ExportFormat, out: &Path) -> anyhow::Result<()> {
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
