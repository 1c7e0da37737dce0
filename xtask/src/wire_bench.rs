//! `cargo xtask bench wire [--run DIR]`: the cost of a replayed task's wire log (`trajectory::wire`): time
//! to append one entry (serialise, compress, flush) and bytes per entry, for entries shaped like a
//! browser's requests; with `--run DIR` (a replayed run, e.g. `webfreeze demo --webarena`'s
//! `runs/replayed`), its logs' bytes per step and per request.

use trajectory::proxy_report::wire::{Answer, RecordedRef, WireEntry};

fn entry(i: u64) -> WireEntry {
    let h = |k: &str, v: String| (k.to_string(), v);
    WireEntry {
        n: i,
        method: if i.is_multiple_of(10) { "POST".into() } else { "GET".into() },
        url: format!("https://shop.test/static/asset-{}.js?v={}", i % 37, i % 5),
        request_headers: vec![
            h("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36".into()),
            h("accept", "*/*".into()),
            h("accept-language", "en-US,en;q=0.9".into()),
            h("referer", format!("https://shop.test/product/{}", i % 11)),
            h("sec-fetch-dest", "script".into()),
            h("cookie", "session=0123456789abcdef; theme=light".into()),
        ],
        request_body: i.is_multiple_of(10).then(|| format!("slug=item-{i}&qty=1")),
        request_body_cut: None,
        status: 200,
        response_headers: vec![h("content-type", "application/javascript".into()), h("content-length", "1234".into())],
        answer: Answer::Exact,
        overlay: None,
        recorded: Some(RecordedRef { snapshot: "recorded/task-1".into(), seq: i }),
        response_body: Some(blake3::hash(&i.to_le_bytes()).to_hex().to_string()),
        response_text: None,
        control: None,
    }
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let n = 20_000u64;
    let w = trajectory::wire::WireWriter::create(dir.path(), "bench", "t", 1)?;
    let mut per = Vec::with_capacity(n as usize);
    for i in 0..n {
        let e = entry(i);
        let t = std::time::Instant::now();
        w.append(&e)?;
        per.push(t.elapsed().as_nanos() as u64);
    }
    w.finish()?;
    per.sort_unstable();
    let bytes = std::fs::metadata(w.path())?.len();
    let json: usize = (0..n).map(|i| serde_json::to_vec(&entry(i)).map(|v| v.len() + 1).unwrap_or(0)).sum();
    let t = std::time::Instant::now();
    let log = trajectory::wire::read(w.path(), "t", 1)?;
    let read_ms = t.elapsed().as_secs_f64() * 1e3;
    anyhow::ensure!(log.entries.len() as u64 == n, "read back {} of {n}", log.entries.len());
    println!("wire log: {n} entries shaped like a browser's requests (6 request headers, a body on 1 in 10)");
    println!("| figure | value |\n|---|---:|");
    println!("| append (serialise + compress + flush), p50 | {:.1} us |", per[per.len() / 2] as f64 / 1e3);
    println!("| append, p99 | {:.1} us |", per[per.len() * 99 / 100] as f64 / 1e3);
    println!(
        "| bytes per entry on disk (zstd level 3, flushed per entry) | {:.0} |",
        bytes as f64 / n as f64
    );
    println!("| bytes per entry as JSON | {:.0} |", json as f64 / n as f64);
    println!("| read back, per 1,000 entries | {:.1} ms |", read_ms * 1000.0 / n as f64);
    if let Some(run) = args.iter().position(|a| a == "--run").and_then(|i| args.get(i + 1)) {
        let rd = trajectory::RunDir::new(run);
        let (mut bytes, mut steps, mut entries) = (0u64, 0usize, 0usize);
        for (dir, t) in rd.trajectories()? {
            if let Some(log) = dir.read_wire(&t)? {
                bytes += std::fs::metadata(dir.path().join(trajectory::wire::WIRE_FILE))?.len();
                steps += t.steps.len();
                entries += log.entries.len();
            }
        }
        println!(
            "| {run}: bytes per step / per request | {:.0} / {:.0} ({entries} requests, {steps} steps) |",
            bytes as f64 / steps.max(1) as f64,
            bytes as f64 / entries.max(1) as f64
        );
    }
    Ok(())
}
